"""The PromQL condition risks are evaluated with: a metrics snapshot or a live
Prometheus, each query evaluated once per run and the run's queries sharing one time
budget. Shared by the commands (`--metrics`, `--prometheus`), a simulated cluster's
version controller (its profile's metrics) and the web console."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kupgrade.errors import InputError
from kupgrade.risks.prometheus import PrometheusBackend
from kupgrade.risks.promql import load_snapshot
from kupgrade.risks.promql.engine import evaluate_text, parse_time
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.risks.promql.guards import TIMED_OUT, QueryLimits
from kupgrade.risks.promql.snapshot import Snapshot
from kupgrade.risks.rules import PromQLCondition, Query

# A run's PromQL evaluations together may take this many single-query timeouts.
RUN_BUDGET_FACTOR = 2


def memo(query: Query, budget_s: float | None = None) -> Query:
    """One evaluation per distinct query in a run: risks repeat across targets.

    With a budget, the run's evaluations share it: once spent, further queries fail as
    timed out (their risks become Recommended=Unknown) instead of each taking its own
    timeout, so that many hostile risks from an update service cannot stall a command.
    """
    seen: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + budget_s if budget_s is not None else None

    def run(expr: str) -> dict[str, Any]:
        if expr not in seen:
            if deadline is not None and time.monotonic() > deadline:
                seen[expr] = {"errorType": "timeout", "error": TIMED_OUT}
            else:
                seen[expr] = query(expr)
        return seen[expr]

    return run


def snapshot_condition(snapshot: Snapshot, time_ms: int, *, budget: bool = True) -> PromQLCondition:
    """Risks evaluated on a snapshot at `time_ms`."""
    limits = QueryLimits.from_env()
    return PromQLCondition(
        memo(
            lambda expr: evaluate_text(expr, snapshot, time_ms, limits),
            RUN_BUDGET_FACTOR * limits.timeout_s if budget else None,
        )
    )


def prometheus_condition(
    url: str, token_file: Path | None, ca_file: Path | None, time_s: float | None
) -> PromQLCondition:
    """Risks evaluated by a Prometheus or Thanos querier."""
    return PromQLCondition(
        memo(PrometheusBackend(url, token_file=token_file, ca_file=ca_file, time_s=time_s))
    )


@dataclass(frozen=True)
class RiskSource:
    """Where a command's PromQL risks are evaluated: the one options object of
    `--metrics`/`--time` and `--prometheus`/`--token-file`/`--ca-file`."""

    metrics: Path | None = None  # an OpenMetrics snapshot
    at: str | None = None  # evaluation time on the snapshot (Unix seconds or RFC 3339)
    prometheus: str | None = None  # a Prometheus or Thanos querier
    token_file: Path | None = None
    ca_file: Path | None = None

    def condition(self, *, required: bool, budget: bool = True) -> PromQLCondition | None:
        """The condition, or None when no backend was given and none is `required`;
        `budget`: the run's queries share one time budget."""
        if self.metrics is not None and self.prometheus is not None:
            raise InputError("give --metrics or --prometheus, not both", field="--metrics")
        if self.metrics is not None:
            return self._snapshot(self.metrics, budget)
        if self.prometheus is not None:
            time_s = float(parse_time(self.at)) / 1000 if self.at is not None else None
            return prometheus_condition(self.prometheus, self.token_file, self.ca_file, time_s)
        if required:
            raise InputError(
                "risks need a PromQL backend: give --metrics SNAPSHOT.om or --prometheus URL",
                field="--metrics",
            )
        return None

    def _snapshot(self, metrics: Path, budget: bool) -> PromQLCondition:
        snapshot = load_snapshot(metrics)
        try:
            time_ms = parse_time(self.at) if self.at is not None else snapshot.latest_ms
        except PromQLError as exc:
            raise InputError(exc.message, field="--time") from None
        if time_ms is None:
            raise InputError(
                "the snapshot holds no samples: give --time", file=str(metrics), field="--time"
            )
        return snapshot_condition(snapshot, time_ms, budget=budget)
