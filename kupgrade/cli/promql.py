"""`kupgrade promql eval`: instant queries over a metrics snapshot, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kupgrade.cli.output import (
    Format,
    OutputOpt,
    command_group,
    print_json,
    progress,
    stdout,
    user_errors,
)
from kupgrade.errors import InputError
from kupgrade.risks.promql import load_snapshot
from kupgrade.risks.promql.engine import evaluate_text, parse_time
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.risks.promql.expressions import load_expressions
from kupgrade.risks.promql.guards import (
    DEFAULT_MAX_SAMPLES,
    DEFAULT_TIMEOUT_S,
    SAMPLES_ENV,
    TIMEOUT_ENV,
    QueryLimits,
)
from kupgrade.risks.promql.values import format_value

app = command_group("Evaluate PromQL over a metrics snapshot, as Prometheus would.")


def _brief(result: dict[str, Any]) -> str:
    if "error" in result:
        return f"[red]{result['errorType']}[/]: {result['error']}"
    if result["resultType"] == "vector":
        parts = [
            "{" + ", ".join(f'{k}="{v}"' for k, v in s["metric"].items()) + "} " + s["value"][1]
            for s in result["result"]
        ]
        return f"vector[{len(parts)}] " + "; ".join(parts) if parts else "vector[0] (empty)"
    if result["resultType"] == "matrix":
        return f"matrix[{len(result['result'])}]"
    return f"{result['resultType']} {result['result'][1]}"


@app.command("eval")
@user_errors
def eval_command(
    metrics: Annotated[
        Path,
        typer.Option(
            "--metrics", exists=True, dir_okay=False, help="OpenMetrics snapshot with timestamps."
        ),
    ],
    expressions: Annotated[
        list[str] | None, typer.Argument(help="PromQL expressions (or use --exprs).")
    ] = None,
    exprs: Annotated[
        Path | None,
        typer.Option(
            "--exprs", exists=True, dir_okay=False, help="YAML file: {expressions: [{id, expr}]}."
        ),
    ] = None,
    at: Annotated[
        str | None,
        typer.Option(
            "--time",
            help="Evaluation time, Unix seconds or RFC 3339. Default: the snapshot's newest sample.",
        ),
    ] = None,
    max_samples: Annotated[
        int | None,
        typer.Option(
            "--query.max-samples",
            min=1,
            help=f"Samples one query may load (Prometheus's flag; default {DEFAULT_MAX_SAMPLES:,} "
            f"or ${SAMPLES_ENV}).",
        ),
    ] = None,
    timeout: Annotated[
        str | None,
        typer.Option(
            "--query.timeout",
            help=f"Time one query may take: seconds or 2m, 30s (Prometheus's flag; default "
            f"{DEFAULT_TIMEOUT_S:g}s or ${TIMEOUT_ENV}).",
        ),
    ] = None,
    output: OutputOpt = Format.text,
) -> None:
    """Evaluate instant queries with Prometheus 2.42's semantics (5-minute lookback).

    Prints one object mapping each expression id (or the expression itself) to the
    `data` of Prometheus's `/api/v1/query` answer, or to `{"errorType", "error"}`. A query
    that fails does not stop the others.

    **Examples**

    ```
    kupgrade promql eval --metrics cluster.om --time 1767724497 \\
        'group by (type) (cluster_infrastructure_provider)'
    kupgrade promql eval --metrics cluster.om --exprs rules.yaml -o json
    ```
    """
    if bool(expressions) == (exprs is not None):
        raise InputError(
            "give expressions as arguments or --exprs FILE, not both or neither", field="--exprs"
        )
    queries = load_expressions(exprs) if exprs is not None else {e: e for e in expressions or []}
    snapshot = load_snapshot(metrics)
    time_ms = _query_time(at, snapshot.latest_ms, metrics)
    limits = QueryLimits.from_env().with_overrides(max_samples, timeout)
    results: dict[str, Any] = {}
    with progress("evaluating", len(queries)) as step:
        for ident, expr in queries.items():
            step(ident)
            results[ident] = evaluate_text(expr, snapshot, time_ms, limits)
    if output.data:
        print_json(results)
        return
    table = Table(title=f"{metrics} at {format_value(time_ms / 1000)}", header_style="bold")
    table.add_column("id")
    table.add_column("result", overflow="fold")
    for ident, result in results.items():
        table.add_row(ident, _brief(result))
    stdout.print(table)


def _query_time(text: str | None, latest_ms: int | None, metrics: Path) -> int:
    if text is not None:
        try:
            return parse_time(text)
        except PromQLError as exc:
            raise InputError(exc.message, field="--time") from None
    if latest_ms is None:
        raise InputError(
            "the snapshot holds no samples: give --time", file=str(metrics), field="--time"
        )
    return latest_ms
