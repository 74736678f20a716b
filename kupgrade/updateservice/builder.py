"""`serve --role builder`: build the graph as `--role all` does, and publish snapshots.

The builder is the one process that reads the inputs. After each build that gave a new
generation it packs the generation (the graph, the answers the rebuild's child rendered,
the graph-data tarball) into a snapshot and publishes it; the store leaves the pointer
alone when the digest did not change, so an unchanged graph is never republished. A
publication that fails (the registry away, the disk full) is logged once and retried on
the next refresh, while the replicas keep serving the snapshot they have.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from kupgrade.errors import KupgradeError
from kupgrade.updateservice.metrics import ServiceMetrics
from kupgrade.updateservice.rebuild import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S
from kupgrade.updateservice.rendered import render_all
from kupgrade.updateservice.snapshot_stores import SnapshotStore
from kupgrade.updateservice.snapshots import pack
from kupgrade.updateservice.state import Generation, GraphState

log = logging.getLogger("kupgrade.updateservice")

DEFAULT_KEEP = 5


class BuilderState(GraphState):
    """A GraphState that publishes each new generation to a snapshot store."""

    def __init__(
        self,
        releases: Path,
        graph_data: Path,
        refresh: float,
        metrics: ServiceMetrics,
        store: SnapshotStore,
        *,
        keep: int = DEFAULT_KEEP,
        build_timeout: float = DEFAULT_TIMEOUT_S,
        build_memory_mb: int = DEFAULT_MEMORY_MB,
    ) -> None:
        super().__init__(
            releases,
            graph_data,
            refresh,
            metrics,
            build_timeout=build_timeout,
            build_memory_mb=build_memory_mb,
        )
        self.store = store
        self.keep = keep
        self.published: str | None = None  # the digest the store's pointer names
        self.publish_error: str | None = None
        self._published_generation = 0

    def refresh_once(self) -> bool:
        built = super().refresh_once()
        generation = self.current
        if generation is None or generation.number == self._published_generation:
            return built
        return self.publish(generation) and built

    def publish(self, generation: Generation) -> bool:
        """Publish `generation` unless the store has it already; False when that failed."""
        started = time.perf_counter()
        snapshot = pack(generation.built, generation.built.renders or render_all(generation.view))
        try:
            changed = self.store.publish(snapshot)
            pruned = self.store.prune(self.keep) if changed else []
        except KupgradeError as exc:
            self.metrics.snapshot_publications.labels("failed").inc()
            message = str(exc)
            if message != self.publish_error:
                log.error(
                    "cannot publish generation %d, will retry every %gs: %s",
                    generation.number,
                    self.refresh,
                    message,
                )
            self.publish_error = message
            return False
        self._published_generation = generation.number
        self.published = snapshot.digest
        self.publish_error = None
        self.metrics.snapshot_publications.labels("published" if changed else "unchanged").inc()
        if changed:
            log.info(
                "published snapshot %s (generation %d, %d bytes) to %s in %.3fs%s",
                snapshot.digest,
                generation.number,
                snapshot.size,
                self.store.name,
                time.perf_counter() - started,
                f", pruned {len(pruned)}" if pruned else "",
            )
        else:
            log.info("generation %d is snapshot %s already", generation.number, snapshot.digest)
        return True

    def readiness(self) -> tuple[bool, str]:
        """Ready once the graph is built and published (the replicas can start)."""
        ready, text = super().readiness()
        if not ready:
            return ready, text
        if self.published is None:
            reason = self.publish_error or "publishing the first snapshot"
            return False, f"not ready: nothing published to {self.store.name} yet: {reason}\n"
        text += f"published snapshot {self.published} to {self.store.name}\n"
        if self.publish_error is not None:
            text += f"the last publication failed: {self.publish_error}\n"
        return True, text
