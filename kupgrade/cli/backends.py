"""The PromQL backend a command evaluates risks with: a snapshot file or a live Prometheus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kupgrade.errors import InputError
from kupgrade.risks.backends import prometheus_condition, snapshot_condition
from kupgrade.risks.promql import load_snapshot
from kupgrade.risks.promql.engine import parse_time
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.risks.rules import PromQLCondition

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
        return snapshot_condition(snapshot, time_ms, budget=budget)
    if prometheus is not None:
        time_s = float(parse_time(at)) / 1000 if at is not None else None
        return prometheus_condition(prometheus, token_file, ca_file, time_s)
    if required:
        raise InputError(
            "risks need a PromQL backend: give --metrics SNAPSHOT.om or --prometheus URL",
            field="--metrics",
        )
    return None
