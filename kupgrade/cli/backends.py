"""The PromQL backend a command evaluates risks with: a snapshot file or a live Prometheus."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from kupgrade.errors import InputError
from kupgrade.risks.prometheus import PrometheusBackend
from kupgrade.risks.promql import load_snapshot
from kupgrade.risks.promql.engine import evaluate_text, parse_time
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.risks.promql.guards import TIMED_OUT, QueryLimits
from kupgrade.risks.rules import PromQLCondition, Query

# A run's PromQL evaluations together may take this many single-query timeouts.
RUN_BUDGET_FACTOR = 2

MetricsOpt = Annotated[
    Path | None,
    typer.Option(
        "--metrics",
        exists=True,
        dir_okay=False,
        help="OpenMetrics snapshot to evaluate PromQL risks on.",
    ),
]
TimeOpt = Annotated[
    str | None,
    typer.Option(
        "--time", help="Evaluation time for --metrics (Unix seconds); default: newest sample."
    ),
]
PrometheusOpt = Annotated[
    str | None,
    typer.Option(
        "--prometheus", help="Prometheus or Thanos querier URL to evaluate PromQL risks on."
    ),
]
TokenOpt = Annotated[
    Path | None,
    typer.Option("--token-file", dir_okay=False, help="Bearer token file for --prometheus."),
]
CaOpt = Annotated[
    Path | None, typer.Option("--ca-file", dir_okay=False, help="CA bundle for --prometheus.")
]


def _memo(query: Query, budget_s: float | None = None) -> Query:
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


def promql_condition(
    metrics: Path | None,
    at: str | None,
    prometheus: str | None,
    token_file: Path | None,
    ca_file: Path | None,
    *,
    required: bool,
    budget: bool = True,
) -> PromQLCondition | None:
    if metrics is not None and prometheus is not None:
        raise InputError("give --metrics or --prometheus, not both", field="--metrics")
    if metrics is not None:
        snapshot = load_snapshot(metrics)
        try:
            time_ms = parse_time(at) if at is not None else snapshot.latest_ms
        except PromQLError as exc:
            raise InputError(exc.message, field="--time") from None
        if time_ms is None:
            raise InputError(
                "the snapshot holds no samples: give --time", file=str(metrics), field="--time"
            )
        limits = QueryLimits.from_env()
        return PromQLCondition(
            _memo(
                lambda expr: evaluate_text(expr, snapshot, time_ms, limits),
                RUN_BUDGET_FACTOR * limits.timeout_s if budget else None,
            )
        )
    if prometheus is not None:
        time_s = float(parse_time(at)) / 1000 if at is not None else None
        return PromQLCondition(
            _memo(
                PrometheusBackend(prometheus, token_file=token_file, ca_file=ca_file, time_s=time_s)
            )
        )
    if required:
        raise InputError(
            "risks need a PromQL backend: give --metrics SNAPSHOT.om or --prometheus URL",
            field="--metrics",
        )
    return None
