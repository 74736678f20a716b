"""The PromQL backend a command evaluates risks with: a snapshot file or a live Prometheus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kupgrade.risks.backends import RiskSource
from kupgrade.risks.rules import PromQLCondition

MetricsOpt = Annotated[
    Path | None,
    typer.Option(
        "--metrics",
        exists=True,
        dir_okay=False,
        help="OpenMetrics snapshot to evaluate PromQL risks on (upgrade status: its ALERTS "
        "series are the cluster's alerts).",
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
        "--prometheus",
        help="Prometheus or Thanos querier URL to evaluate PromQL risks on (upgrade status: "
        "its /api/v1/alerts are the cluster's alerts).",
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
    """The condition the risk-evaluation flags name (risks/backends.py RiskSource)."""
    return RiskSource(metrics, at, prometheus, token_file, ca_file).condition(
        required=required, budget=budget
    )
