"""Prometheus metrics of the update service.

One registry per service instance (tests run several in one process). Label children for
the hot route are bound once so a request costs a couple of dictionary lookups.

With several workers (`serve --workers N`) every worker writes its values to files in one
shared directory, and /metrics, whichever worker answers it, adds them up: prometheus_client's
multiprocess mode. Counters are summed over the workers (a refresh counts once per worker:
each refreshes its own graph); each gauge says how it is combined (the latest refresh
times are the workers' max, `ready` their min: ready when every worker is).
"""

from __future__ import annotations

import os
from typing import Literal

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
    values,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

# The `_created` series double the exposition for no use in dashboards or alerts.
disable_created_metrics()  # type: ignore[no-untyped-call]

Combined = Literal["max", "min", "mostrecent"]  # how a gauge's workers' values combine
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class ServiceMetrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self, shared_dir: str | None = None) -> None:
        self.shared_dir = shared_dir
        if shared_dir:
            # A worker's process: its values go to files in the shared directory (the
            # library picks that when the metrics are made, from its environment).
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = shared_dir
            values.ValueClass = values.MultiProcessValue()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "kupgrade_http_requests",
            "HTTP requests served, by route and status code.",
            ["route", "code"],
            registry=r,
        )
        self.latency = Histogram(
            "kupgrade_http_request_duration_seconds",
            "Time to answer an HTTP request, by route.",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.errors = Counter(
            "kupgrade_http_errors",
            "Error responses, by status code and error kind.",
            ["code", "kind"],
            registry=r,
        )
        self.refreshes = Counter(
            "kupgrade_graph_refreshes",
            "Input refresh attempts, by result (built, unchanged, failed).",
            ["result"],
            registry=r,
        )
        self.rebuild_failures = Counter(
            "kupgrade_graph_rebuild_failures",
            "Rebuilds that gave no graph, by reason (input, timeout, memory, crash).",
            ["reason"],
            registry=r,
        )
        self.snapshot_publications = Counter(
            "kupgrade_snapshot_publications",
            "Snapshots the builder published, by result (published, unchanged, failed).",
            ["result"],
            registry=r,
        )

        def gauge(name: str, text: str, combined: Combined) -> Gauge:
            """A gauge, and how the workers' values are combined into one (see module)."""
            return Gauge(name, text, multiprocess_mode=combined, registry=r)

        self.last_success = gauge(
            "kupgrade_graph_last_successful_refresh_timestamp_seconds",
            "Unix time of the last refresh that produced or confirmed a graph.",
            "max",
        )
        self.last_failure = gauge(
            "kupgrade_graph_last_failed_refresh_timestamp_seconds",
            "Unix time of the last refresh that failed (0 if none).",
            "max",
        )
        self.build_seconds = gauge(
            "kupgrade_graph_build_duration_seconds",
            "Duration of the last successful graph build.",
            "mostrecent",
        )
        self.generation = gauge(
            "kupgrade_graph_generation",
            "Number of the graph generation being served (the newest of any worker).",
            "max",
        )
        self.nodes = gauge("kupgrade_graph_nodes", "Nodes in the served graph.", "mostrecent")
        self.edges = gauge("kupgrade_graph_edges", "Edges in the served graph.", "mostrecent")
        self.conditional_edges = gauge(
            "kupgrade_graph_conditional_edges",
            "Conditional edges in the served graph.",
            "mostrecent",
        )
        self.skipped_files = gauge(
            "kupgrade_graph_data_skipped_files",
            "graph-data files the builder skipped (see the logs).",
            "mostrecent",
        )
        self.ready = gauge("kupgrade_ready", "1 once a graph is loaded (by every worker).", "min")

    def observe(self, route: str, code: int, seconds: float) -> None:
        self.requests.labels(route, str(code)).inc()
        self.latency.labels(route).observe(seconds)

    def error(self, code: int, kind: str) -> None:
        self.errors.labels(str(code), kind).inc()

    def render(self) -> bytes:
        if not self.shared_dir:
            return generate_latest(self.registry)
        every = CollectorRegistry()
        multiprocess.MultiProcessCollector(every, path=self.shared_dir)  # type: ignore[no-untyped-call]
        return generate_latest(every)
