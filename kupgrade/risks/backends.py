"""The PromQL condition risks are evaluated with: a metrics snapshot or a live
Prometheus, each query evaluated once per run and the run's queries sharing one time
budget. Shared by the commands (`--metrics`, `--prometheus`), a simulated cluster's
version controller (its profile's metrics) and the web console."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kupgrade.cluster.alerts import Alert, alert_key, alert_of_series
from kupgrade.errors import InputError
from kupgrade.risks.prometheus import PrometheusBackend, fetch_alerts
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

    def alerts(self) -> list[Alert] | None:
        """The cluster's alerts from the snapshot's ALERTS and ALERTS_FOR_STATE series or
        from the Prometheus; None when neither was given. InputError says why not."""
        if self.metrics is not None and self.prometheus is not None:
            raise InputError("give --metrics or --prometheus, not both", field="--metrics")
        if self.prometheus is not None:
            backend = PrometheusBackend(
                self.prometheus, token_file=self.token_file, ca_file=self.ca_file
            )
            try:
                return fetch_alerts(backend)
            finally:
                backend.close()
        if self.metrics is None:
            return None
        snapshot = load_snapshot(self.metrics)
        time_ms = self._time_on(snapshot, self.metrics)
        return snapshot_alerts(snapshot, time_ms)

    def _time_on(self, snapshot: Snapshot, metrics: Path) -> int:
        try:
            time_ms = parse_time(self.at) if self.at is not None else snapshot.latest_ms
        except PromQLError as exc:
            raise InputError(exc.message, field="--time") from None
        if time_ms is None:
            raise InputError(
                "the snapshot holds no samples: give --time", file=str(metrics), field="--time"
            )
        return time_ms

    def _snapshot(self, metrics: Path, budget: bool) -> PromQLCondition:
        snapshot = load_snapshot(metrics)
        return snapshot_condition(snapshot, self._time_on(snapshot, metrics), budget=budget)


def snapshot_alerts(snapshot: Snapshot, time_ms: int) -> list[Alert]:
    """Alerts as Prometheus keeps them in its own series: ALERTS{alertname, alertstate,
    …labels} for each pending or firing alert, ALERTS_FOR_STATE{…labels} whose value is
    the Unix time it became active (rules/alerting.go). A snapshot holds no annotations."""
    limits = QueryLimits.from_env()
    since = {
        alert_key(sample["metric"]): float(sample["value"][1])
        for sample in _vector(evaluate_text("ALERTS_FOR_STATE", snapshot, time_ms, limits))
    }
    return [
        alert_of_series(sample["metric"], since.get(alert_key(sample["metric"])))
        for sample in _vector(evaluate_text("ALERTS", snapshot, time_ms, limits))
    ]


def _vector(answer: dict[str, Any]) -> list[dict[str, Any]]:
    result = answer.get("result")
    return [s for s in result if isinstance(s, dict)] if isinstance(result, list) else []
