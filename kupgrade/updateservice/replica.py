"""`serve --role replica`: serve the newest whole snapshot the builder published.

A replica reads no inputs and builds nothing: it polls the snapshot source's pointer
every --refresh seconds, and when it names another digest, reads that snapshot, checks
every blob against its digest, decodes it, and installs it as the served generation in
one assignment. A request reads the generation once, so its body and its
`Kupgrade-Snapshot` header always come from the same snapshot.

When the source breaks (unreachable, emptied, a pointer to a half-written or corrupt
snapshot) the replica keeps serving the snapshot it has and logs one line per distinct
fault; /readyz stays ready (the replica still answers) and says what failed. With no
snapshot loaded yet it is not ready and every graph request gets Cincinnati's
`failed_upstream_fetch`, as the reference policy-engine answers when it cannot fetch
its graph from the graph-builder (cincinnati/src/plugins/internal/cincinnati_graph_fetch.rs).
"""

from __future__ import annotations

import logging
import time

from kupgrade.errors import KupgradeError
from kupgrade.updateservice.metrics import ServiceMetrics
from kupgrade.updateservice.rebuild import Rebuilt
from kupgrade.updateservice.snapshot_stores import SnapshotStore
from kupgrade.updateservice.snapshots import START_BUILDER, SnapshotError
from kupgrade.updateservice.state import ServedState

log = logging.getLogger("kupgrade.updateservice")

DEFAULT_POLL_S = 5.0


def newest(store: SnapshotStore) -> tuple[str, Rebuilt]:
    """The digest and content of the snapshot the store's pointer names, checked whole."""
    digest = store.latest()
    if digest is None:
        raise SnapshotError(
            "no snapshot has been published there yet",
            source=store.name,
            reason="source",
            hint=START_BUILDER,
        )
    return digest, store.read(digest)


class ReplicaState(ServedState):
    """Generations loaded from a snapshot store."""

    def __init__(self, store: SnapshotStore, refresh: float, metrics: ServiceMetrics) -> None:
        super().__init__(refresh, metrics)
        self.store = store

    def refresh_once(self) -> bool:
        started = time.perf_counter()
        try:
            digest = self.store.latest()
            current = self.current
            if digest is not None and current is not None and digest == current.snapshot:
                self.metrics.refreshes.labels("unchanged").inc()
                self.metrics.last_success.set(time.time())
                return True
            digest, built = newest(self.store)
        except SnapshotError as exc:
            return self._failed(str(exc), exc.reason)
        except KupgradeError as exc:
            return self._failed(str(exc), "source")
        except Exception as exc:  # a bug must not take the replica down; keep serving
            log.exception("loading a snapshot crashed")
            return self._failed(f"internal error while loading a snapshot: {exc!r}", "crash")
        self.install(built, time.perf_counter() - started, snapshot=digest)
        return True

    def _failed(self, message: str, reason: str) -> bool:
        self.metrics.refreshes.labels("failed").inc()
        self.metrics.rebuild_failures.labels(reason).inc()
        self.metrics.last_failure.set(time.time())
        if message != self.last_error:  # one line per fault, not one per poll
            current = self.current
            if current is None:
                log.error("no snapshot to serve yet, not ready: %s", message)
            else:
                log.error(
                    "snapshot source failed, still serving snapshot %s (generation %d): %s",
                    current.snapshot,
                    current.number,
                    message,
                )
        self.last_error = message
        return False

    def readiness(self) -> tuple[bool, str]:
        generation = self.current
        if generation is None:
            reason = self.last_error or f"loading the first snapshot from {self.store.name}"
            return False, f"not ready: {reason}\n"
        text = f"ready: snapshot {generation.snapshot} (generation {generation.number})\n"
        if self.last_error is not None:
            text += f"the snapshot source failed, still serving it: {self.last_error}\n"
        return True, text
