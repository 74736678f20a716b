"""The graph the service answers from, rebuilt off the request path.

A `Generation` is immutable once published: the built graph, its policy view, the
graph-data tarball and a cache of rendered responses. The refresher thread re-checks the
inputs every `refresh` seconds and, when they changed, builds in a child process bounded
in time and memory (`rebuild.py`), then swaps the new generation in with one assignment.
A failed or stopped build keeps the last good generation; it is logged once per change
of the inputs, counted by reason in /metrics and shown on /readyz.

`ServedState` is what the application serves from, whoever makes the generations: the
`GraphState` here builds them from the inputs (`--role all`), the builder of snapshots adds
publishing to it (builder.py), and a replica loads them from published snapshots
(replica.py). Every one installs a generation the same way (`install`).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from kupgrade.errors import KupgradeError
from kupgrade.graph.loading import fingerprint
from kupgrade.graph.policy import PolicyView, check_arch, check_channel
from kupgrade.updateservice.metrics import ServiceMetrics
from kupgrade.updateservice.rebuild import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT_S,
    RebuildError,
    Rebuilt,
    build_isolated,
)
from kupgrade.updateservice.rendered import EMPTY_RENDERED, Rendered, render_all

log = logging.getLogger("kupgrade.updateservice")

MAX_CACHED_RENDERS = 4096


@dataclass(slots=True)
class Generation:
    number: int
    built: Rebuilt
    view: PolicyView
    built_at: float
    build_seconds: float
    channels: frozenset[str]
    arches: frozenset[str]
    # The digest of the snapshot this generation was loaded from ('' when built here),
    # and the response headers that name it: every answer says which snapshot it is from.
    snapshot: str = ""
    headers: tuple[tuple[bytes, bytes], ...] = ()
    renders: dict[tuple[str, str], Rendered] = field(default_factory=dict)

    def render(self, channel: str, arch: str) -> Rendered:
        """The answer for (channel, arch), rendered once per generation; PolicyError if invalid."""
        key = (channel, arch)
        found = self.renders.get(key)
        if found is not None:
            return found
        if channel not in self.channels and not self.view.has_orphan_conditional_edges:
            # A channel no node is in: the answer is the empty graph once the parameters
            # are valid; no filtering, no cache entry for garbage requests.
            check_channel(channel)
            check_arch(arch)
            return EMPTY_RENDERED
        rendered = Rendered.of(self.view.filter(channel, arch))
        if channel in self.channels and arch in self.arches:
            self.renders[key] = rendered
        elif len(self.renders) < MAX_CACHED_RENDERS:
            # A known channel with an arch no node has: no nodes, but the arch-substring
            # quirk may keep conditional edges. Cache a bounded number of these so that
            # garbage requests cannot grow memory without bound.
            self.renders[key] = rendered
        return rendered

    def tarball(self) -> bytes:
        return self.built.tarball


class ServedState:
    """The generation being served, replaced whole by `install`; refreshed in a thread."""

    def __init__(self, refresh: float, metrics: ServiceMetrics) -> None:
        self.refresh = refresh
        self.metrics = metrics
        self.current: Generation | None = None
        self.last_error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def refresh_once(self) -> bool:
        """Bring the served generation up to date; True on success."""
        raise NotImplementedError

    def readiness(self) -> tuple[bool, str]:
        """Whether /readyz answers 200, and its text."""
        generation = self.current
        if generation is None:
            return False, f"not ready: {self.last_error or 'building the first graph'}\n"
        text = f"ready: graph generation {generation.number}\n"
        if self.last_error is not None:
            text += (
                f"the last rebuild failed, still serving generation {generation.number}: "
                f"{self.last_error}\n"
            )
        return True, text

    def install(self, built: Rebuilt, seconds: float, snapshot: str = "") -> Generation:
        """Make `built` the served generation, in one assignment (requests in flight keep
        the generation they read)."""
        view = PolicyView(built.graph)
        number = self.current.number + 1 if self.current else 1
        generation = Generation(
            number,
            built,
            view,
            time.time(),
            seconds,
            frozenset(view.known_channels()),
            frozenset(view.known_arches()),
            snapshot,
            ((b"kupgrade-snapshot", snapshot.encode()),) if snapshot else (),
        )
        for skipped in built.skipped:
            log.warning("graph-data file skipped: %s: %s", skipped.path, skipped.reason)
        # Every known answer rendered before the first client asks: by the rebuild's child
        # (off this process's GIL), or here when a build came without them.
        generation.renders.update(built.renders or render_all(view))
        self.current = generation
        self.last_error = None
        m = self.metrics
        m.refreshes.labels("built").inc()
        m.last_success.set(time.time())
        m.build_seconds.set(seconds)
        m.generation.set(number)
        m.nodes.set(len(built.graph.nodes))
        m.edges.set(built.graph.edge_count)
        m.conditional_edges.set(len(built.graph.conditional))
        m.skipped_files.set(len(built.skipped))
        m.ready.set(1)
        log.info(
            "graph generation %d%s: %d nodes, %d edges, %d conditional edges, %d channels, "
            "in %.3fs",
            number,
            f" from snapshot {snapshot}" if snapshot else "",
            len(built.graph.nodes),
            built.graph.edge_count,
            len(built.graph.conditional),
            len(generation.channels),
            seconds,
        )
        return generation

    def start(self) -> None:
        self.refresh_once()
        self._thread = threading.Thread(target=self._loop, name="kupgrade-refresh", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(self.refresh):
            try:
                self.refresh_once()
            except Exception:  # pragma: no cover - never let the refresher die
                log.exception("refresh failed unexpectedly")


class GraphState(ServedState):
    """Builds the generations from the inputs (releases and graph-data)."""

    def __init__(
        self,
        releases: Path,
        graph_data: Path,
        refresh: float,
        metrics: ServiceMetrics,
        *,
        build_timeout: float = DEFAULT_TIMEOUT_S,
        build_memory_mb: int = DEFAULT_MEMORY_MB,
    ) -> None:
        super().__init__(refresh, metrics)
        self.releases = releases
        self.graph_data = graph_data
        self.build_timeout = build_timeout
        self.build_memory_mb = build_memory_mb
        self._fingerprint: str | None = None
        self._failed_fingerprint: str | None = None

    def refresh_once(self) -> bool:
        """Re-check the inputs; build and publish when they changed. True on success."""
        stamp = fingerprint(self.releases, self.graph_data)
        if self.current is not None and stamp == self._fingerprint:
            self.metrics.refreshes.labels("unchanged").inc()
            self.metrics.last_success.set(time.time())
            return True
        if stamp == self._failed_fingerprint:
            # The same inputs failed already: no second build, no second log line.
            self.metrics.refreshes.labels("unchanged").inc()
            return False
        started = time.perf_counter()
        try:
            built = build_isolated(
                self.releases,
                self.graph_data,
                timeout_s=self.build_timeout,
                memory_mb=self.build_memory_mb,
            )
        except RebuildError as exc:
            return self._failed(exc.message, exc.reason, stamp)
        except KupgradeError as exc:
            return self._failed(str(exc), "input", stamp)
        except Exception as exc:  # a bug must not take the service down; keep serving
            log.exception("graph build crashed")
            return self._failed(f"internal error while building: {exc!r}", "crash", stamp)
        self.install(built, time.perf_counter() - started)
        self._fingerprint = stamp
        self._failed_fingerprint = None
        return True

    def _failed(self, message: str, reason: str, stamp: str) -> bool:
        self.last_error = message
        self._failed_fingerprint = stamp
        self.metrics.refreshes.labels("failed").inc()
        self.metrics.rebuild_failures.labels(reason).inc()
        self.metrics.last_failure.set(time.time())
        if self.current is None:
            log.error("graph build failed, not ready: %s", message)
        else:
            log.error(
                "graph rebuild failed, still serving generation %d: %s",
                self.current.number,
                message,
            )
        return False
