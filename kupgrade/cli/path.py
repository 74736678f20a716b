"""`kupgrade path`: how to get from one version to another, minor by minor."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.table import Table

from kupgrade.cli.backends import (
    CaOpt,
    MetricsOpt,
    PrometheusOpt,
    TimeOpt,
    TokenOpt,
    promql_condition,
)
from kupgrade.cli.output import (
    Format,
    OutputOpt,
    print_json,
    progress,
    stdout,
    user_errors,
)
from kupgrade.cli.updates import ArchOpt, ChannelOpt, UpstreamOpt
from kupgrade.errors import InputError, KupgradeError
from kupgrade.graph.client import ClusterView, fetch
from kupgrade.graph.model import Graph
from kupgrade.plan.path import channels_between, plan_path
from kupgrade.risks.rules import Registry
from kupgrade.versions import SemVer


def _version(text: str, flag: str) -> SemVer:
    parsed = SemVer.try_parse(text)
    if parsed is None:
        raise InputError(f"{text!r} is not a version like 4.14.3", field=flag)
    return parsed


@user_errors
def path_command(
    upstream: UpstreamOpt,
    start: Annotated[str, typer.Option("--from", help="The current version.")],
    target: Annotated[str, typer.Option("--to", help="The version to reach.")],
    channel: ChannelOpt,
    arch: ArchOpt = "amd64",
    metrics: MetricsOpt = None,
    at: TimeOpt = None,
    prometheus: PrometheusOpt = None,
    token_file: TokenOpt = None,
    ca_file: CaOpt = None,
    include_not_recommended: Annotated[
        bool,
        typer.Option(
            "--include-not-recommended", help="Allow updates whose risks apply or are unknown."
        ),
    ] = False,
    output: OutputOpt = Format.text,
) -> None:
    """Fewest hops from --from to --to, switching channels of one family minor by minor.

    Only recommended updates are taken unless --include-not-recommended: without
    --metrics or --prometheus, PromQL risks cannot be evaluated and their updates count
    as not recommended. Exit 1 when there is no path (the explanation says why).

    **Examples**

    ```
    kupgrade path --upstream http://127.0.0.1:8080/api/upgrades_info/graph \\
        --from 4.13.40 --to 4.15.10 --channel stable-4.13 --metrics cluster.om
    kupgrade path --upstream https://api.openshift.com/api/upgrades_info/v1/graph \\
        --from 4.7.0 --to 4.8.54 --channel stable-4.7 -o json
    ```
    """
    start_v, target_v = _version(start, "--from"), _version(target, "--to")
    condition = promql_condition(metrics, at, prometheus, token_file, ca_file, required=False)
    channels = channels_between(channel, start_v, target_v)
    graphs: dict[str, Graph] = {}
    with progress("fetching channels", len(channels)) as step:
        for name in channels:
            step(name)
            retrieval = fetch(ClusterView(upstream, name, start, arch), time.time)
            if retrieval.graph is None:
                c = retrieval.condition
                raise KupgradeError(
                    f"{name}: {c.get('reason')}: {c.get('message')}", field="--upstream"
                )
            graphs[name] = retrieval.graph
    result = plan_path(start, target, graphs, Registry.standard(condition), include_not_recommended)
    if output.data:
        print_json(result.to_json())
    else:
        table = Table(title=f"{start} -> {target}", header_style="bold")
        for column in ("FROM", "TO", "CHANNELS", "RECOMMENDED", "RISKS"):
            table.add_column(column)
        for hop in result.hops:
            risks = ", ".join(
                f"{n}={e.applies}"
                for n, e in (hop.recommendation.exposures if hop.recommendation else ())
            )
            table.add_row(
                hop.src,
                hop.dst,
                ", ".join(hop.channels),
                "yes" if hop.recommended else "NO",
                risks or "-",
            )
        if result.hops:
            stdout.print(table)
        for line in result.explanation:
            stdout.print(line, highlight=False, markup=False)
    if not result.found:
        raise typer.Exit(1)
