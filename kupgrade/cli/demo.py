"""`kupgrade demo` and `kupgrade sample`: the embedded default, end to end."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from kupgrade.cli.backends import promql_condition
from kupgrade.cli.graph import risk_table, summary_table
from kupgrade.cli.output import (
    Format,
    OutputOpt,
    print_json,
    progress,
    stderr,
    stdout,
    user_errors,
)
from kupgrade.cli.updates import cluster_version
from kupgrade.cli.upgrade_view import render_upgrade
from kupgrade.controllers.availability import Availability, ClusterView, evaluate, fetch
from kupgrade.errors import KupgradeError
from kupgrade.graph.sample import EXAMPLE_CLUSTER, write_sample
from kupgrade.graph.summary import summarize
from kupgrade.risks.rules import Registry
from kupgrade.service.app import DEFAULT_PREFIX
from kupgrade.service.process import ServiceProcess

sample_app = typer.Typer(
    help="The sample dataset kupgrade ships (an OpenShift-like 4.12-4.15 line).",
    no_args_is_help=True,
)


@sample_app.command("write")
@user_errors
def sample_write(
    directory: Annotated[Path, typer.Argument(help="New (or empty) directory to write into.")],
    output: OutputOpt = Format.text,
) -> None:
    """Write the sample releases and graph-data.

    **Examples**

    ```
    kupgrade sample write ./sample
    kupgrade serve --releases sample/releases --graph-data sample/graph-data
    ```
    """
    root = write_sample(directory)
    paths = {"releases": str(root / "releases"), "graph_data": str(root / "graph-data")}
    if output is Format.json:
        print_json(paths)
    else:
        stdout.print(
            f"releases:   {paths['releases']}\ngraph-data: {paths['graph_data']}", highlight=False
        )


@user_errors
def demo_command(
    channel: Annotated[str, typer.Option("--channel", help="Channel to query.")] = "stable-4.14",
    arch: Annotated[str, typer.Option("--arch", help="Architecture to query.")] = "amd64",
    output: OutputOpt = Format.text,
) -> None:
    """Run the update service on the sample data, query it over HTTP, summarise, stop.

    **Examples**

    ```
    kupgrade demo
    kupgrade demo --channel candidate-4.15 --arch multi -o json
    ```
    """
    with tempfile.TemporaryDirectory(prefix="kupgrade-demo-") as tmp, progress("demo", 5) as step:
        step("writing the sample dataset")
        root = write_sample(Path(tmp) / "sample")
        step("starting the update service")
        log = Path(tmp) / "serve.log"
        with ServiceProcess(root / "releases", root / "graph-data", log) as service:
            service.wait_for("/readyz")
            step(f"querying {channel} ({arch})")
            url = f"{service.base}{DEFAULT_PREFIX}/graph"
            response = httpx.get(
                url,
                params={"channel": channel, "arch": arch},
                headers={"Accept": "application/json"},
            )
            step("evaluating the example cluster's risks")
            cluster = example_cluster(url, root / "metrics" / "cluster.om")
            step("stopping the update service")
    _show(url, channel, arch, response, output, cluster)


def example_cluster(url: str, snapshot: Path) -> tuple[ClusterView, Availability]:
    """The sample cluster (4.13.40 on stable-4.14) asking the service, risks on its metrics."""
    view = ClusterView(url, EXAMPLE_CLUSTER["channel"], EXAMPLE_CLUSTER["version"])
    condition = promql_condition(snapshot, None, None, None, None, required=True)
    return view, evaluate(view, fetch(view, time.time), Registry.standard(condition), time.time)


def _show(
    url: str,
    channel: str,
    arch: str,
    response: httpx.Response,
    output: Format,
    cluster: tuple[ClusterView, Availability],
) -> None:
    doc: Any = response.json()
    if response.status_code != 200:
        raise KupgradeError(f"{url} answered {response.status_code}: {doc.get('value', doc)}")
    summary = summarize(doc)
    view, availability = cluster
    if output is Format.json:
        print_json(
            {
                "url": str(response.url),
                "channel": channel,
                "arch": arch,
                **summary.to_json(),
                "exampleCluster": {
                    "version": view.version,
                    "channel": view.channel,
                    **availability.status(),
                },
            }
        )
        return
    stderr.print(f"GET {response.url} -> {response.status_code}", highlight=False)
    stdout.print(summary_table(summary, f"Update graph of {channel} ({arch}), served over HTTP"))
    if summary.risks:
        stdout.print(risk_table(summary))
    stdout.rule(
        f"kupgrade updates: the example cluster at {view.version} on {view.channel}, risks on its metrics"
    )
    lines, _ = render_upgrade(
        cluster_version(view, availability, time.time()), include_not_recommended=True
    )
    stdout.print("\n".join(lines), highlight=False, markup=False)
