"""`kupgrade demo` and `kupgrade sample`: the embedded default, end to end."""

from __future__ import annotations

import copy
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import httpx
import msgspec
import typer

from kupgrade.cli.backends import promql_condition
from kupgrade.cli.graph import risk_table, summary_table
from kupgrade.cli.output import (
    Format,
    OutputOpt,
    command_group,
    print_json,
    progress,
    real,
    stderr,
    stdout,
    user_errors,
)
from kupgrade.cluster.upgrade_text import render_upgrade
from kupgrade.controllers.nodes.pool import mcp_columns
from kupgrade.errors import KupgradeError
from kupgrade.graph.client import ClusterView, fetch
from kupgrade.graph.summary import summarize
from kupgrade.risks.rules import Registry
from kupgrade.risks.updates import Availability, cluster_version, evaluate
from kupgrade.sim.create import create_cluster
from kupgrade.sim.demo import DEMO_PROFILE
from kupgrade.sim.platform import UpgradeAsk
from kupgrade.sim.profile import Profile
from kupgrade.sim.runs import local_loop
from kupgrade.sim.sample import EXAMPLE_CLUSTER, write_sample
from kupgrade.sim.store import Store
from kupgrade.sim.upgrades import upgrade_cluster
from kupgrade.twin.preflight import preflight
from kupgrade.updateservice.app import DEFAULT_PREFIX
from kupgrade.updateservice.process import ServiceProcess
from kupgrade.views.bars import live_bars
from kupgrade.views.report import print_report
from kupgrade.views.tables import oc_table

sample_app = command_group("The sample dataset kupgrade ships (an OpenShift-like 4.12-4.15 line).")


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
    if output.data:
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
    """Run the update service on the sample data, query it, then rehearse an upgrade.

    A simulated cluster at the example release asks the service, is upgraded to the
    newest recommended release with the live view, and its timeline, `get mcp` and
    history are printed; then the service stops.

    **Examples**

    ```
    kupgrade demo
    kupgrade demo --channel candidate-4.15 --arch multi -o json
    ```
    """
    with tempfile.TemporaryDirectory(prefix="kupgrade-demo-") as tmp:
        root = write_sample(Path(tmp) / "sample")
        log = Path(tmp) / "serve.log"
        with ServiceProcess(root / "releases", root / "graph-data", log) as service:
            console = f"{service.base}/?channel={channel}&arch={arch}"
            with progress("demo", 4) as step:
                step("starting the update service on the sample data")
                service.wait_for("/readyz")
                if output is Format.text:
                    stderr.print(f"web console (while the demo runs): {console}", highlight=False)
                step(f"querying {channel} ({arch})")
                url = f"{service.base}{DEFAULT_PREFIX}/graph"
                response = httpx.get(
                    url,
                    params={"channel": channel, "arch": arch},
                    headers={"Accept": "application/json"},
                )
                step("evaluating the example cluster's risks")
                cluster = example_cluster(url, root / "metrics" / "cluster.om")
                step("creating a simulated cluster that asks the service")
                rehearsal = Rehearsal(Path(tmp) / "home", url, root / "metrics" / "cluster.om")
            shown = _show(url, channel, arch, response, output, cluster)
            rehearsed = rehearsal.run(output)  # the cluster keeps asking the service
    if output.data:
        print_json({**shown, "rehearsal": rehearsed, "console": console})
        return
    stdout.rule("web console")
    stdout.print(
        f"The update graph, paths and known issues were at {console} while the demo ran.\n"
        "To open the console again on the same data:\n"
        "  kupgrade sample write ./sample\n"
        "  kupgrade serve --releases sample/releases --graph-data sample/graph-data\n"
        f"  then open http://127.0.0.1:8080/?channel={channel}&arch={arch}\n"
        "A rehearsal watched live: kupgrade controller run --cluster NAME --speed 120 --console",
        highlight=False,
        markup=False,
    )


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
) -> dict[str, Any]:
    doc: Any = response.json()
    if response.status_code != 200:
        raise KupgradeError(f"{url} answered {response.status_code}: {doc.get('value', doc)}")
    summary = summarize(doc)
    view, availability = cluster
    if output.data:
        return {
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
    return {}


WINDOW = 4 * 3600.0  # the maintenance window the demo's preflight checks the forecast against


class Rehearsal:
    """A simulated cluster at the example release, upgraded to what the service recommends."""

    def __init__(self, home: Path, upstream: str, metrics: Path) -> None:
        self.spec = msgspec.structs.replace(DEMO_PROFILE, upstream=upstream, metrics=str(metrics))
        self.root = create_cluster(home, "demo", Profile(spec=self.spec))
        self.store = Store(self.root / "cluster.db")
        # `kupgrade upgrade`, then `kupgrade upgrade --to` the newest recommended release.
        cv = upgrade_cluster(self.root, self.store, self.spec, UpgradeAsk()).doc
        self.before = copy.deepcopy(cv)
        updates = cv["status"].get("availableUpdates") or []
        if not updates:
            raise KupgradeError("the update service recommended no update for the demo cluster")
        self.target = str(updates[0]["version"])  # newest first (SPEC A3)
        # `kupgrade upgrade --to TARGET --preflight --window 4h`: rehearsed on a copy first.
        self.store.commit()
        ask = UpgradeAsk(to=self.target)
        self.preflight = preflight(self.root, self.spec, ask, window=WINDOW, runs=1)
        upgrade_cluster(self.root, self.store, self.spec, ask)

    def run(self, output: Format) -> dict[str, Any]:
        try:
            return self._run(output)
        finally:
            self.store.close()

    def _run(self, output: Format) -> dict[str, Any]:
        runner = local_loop(self.root, self.store, self.spec)
        started, wall = runner.now(), time.monotonic()
        text = output is Format.text
        if text:
            stdout.rule(f"kupgrade upgrade --to {self.target} --preflight --window 4h")
            stdout.print("\n".join(self.preflight.lines()), highlight=False, markup=False)
            stdout.rule(f"kupgrade upgrade --to {self.target}: a simulated cluster rehearses it")
            lines, _ = render_upgrade(self.before, include_not_recommended=True)
            stdout.print("\n".join(lines), highlight=False, markup=False)
        with live_bars(real(stderr), 0.0, started, wall) as on_step:
            outcome = runner.run("completed", on_step=on_step)
        summary = runner.report(outcome, started, time.monotonic() - wall)
        if text:
            print_report(summary, started, real(stdout))
        cv = self.store.get("ClusterVersion", "version")
        assert cv is not None
        if not text:
            summary["target"] = self.target
            summary["preflight"] = self.preflight.to_json()
            summary["history"] = cv["status"].get("history")
            summary["unverified"] = self._unverified()
            summary["pools"] = {
                p["metadata"]["name"]: mcp_columns(p) for p in self.store.list("MachineConfigPool")
            }
            return summary
        now = runner.now()
        stdout.rule("kupgrade get clusterversion / get mcp")
        for kind in ("ClusterVersion", "MachineConfigPool"):
            stdout.print(oc_table(kind, self.store.list(kind), now), highlight=False, markup=False)
        stdout.rule("history")
        for entry in cv["status"].get("history") or []:
            stdout.print(
                f"{entry['state']:<10} {entry['version']:<10} {entry.get('startedTime', '')} -> "
                f"{entry.get('completionTime') or '…'}  verified={entry.get('verified')}",
                highlight=False,
            )
        if unverified := self._unverified():
            stdout.print(f"verified=False: {unverified}", highlight=False)
        return summary

    def _unverified(self) -> str | None:
        """Why history says verified=False: no signature verification is configured."""
        said = [e for e in self.store.events() if e["reason"] == "Unverified"]
        if not said:
            return None
        return (
            f"{said[-1]['message']} (a profile's spec.verification names a keyring and a "
            "signature store)"
        )
