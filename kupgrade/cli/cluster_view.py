"""What `controller run`, `get` and the demo show of a cluster: the live bars, the
timeline of what took how long, and `oc get` tables with the same columns as `oc`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from kupgrade.cli.output import Format, print_json, real, stderr, stdout
from kupgrade.cluster.gdc import cluster_columns, own_clusters
from kupgrade.controllers.gdc.request import STATE
from kupgrade.controllers.version.progress import runlevel_rows
from kupgrade.controllers.version.status import clusterversion_columns
from kupgrade.sim.gdc_runner import GdcRunner
from kupgrade.sim.releases import rendered_config
from kupgrade.sim.runner import Runner
from kupgrade.sim.store import Store


@contextmanager
def live_view(runner: Runner, speed: float, started: float, wall: float) -> Iterator[Any]:
    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=real(stderr),
        transient=True,
        disable=not stderr.is_terminal,
    )
    tasks: dict[str, Any] = {}
    with bars:

        def on_step(r: Runner) -> None:
            if speed > 0:
                ahead = (r.sim.now() - started) / speed - (time.monotonic() - wall)
                if ahead > 0:
                    time.sleep(min(ahead, 1.0))
            rows = progress_rows(r)
            for label, done, total in rows:
                if label not in tasks:
                    tasks[label] = bars.add_task(label, total=total)
                bars.update(tasks[label], completed=done, total=total)

        yield on_step


def progress_rows(r: Runner) -> list[tuple[str, int, int]]:
    """The bars: stages and their pools (distributed cloud), or manifests, runlevels and
    pools (OpenShift)."""
    if isinstance(r, GdcRunner):
        return r.upgrade.progress()
    state = r.sim.state("version") or {}
    rows = [("manifests", int(state.get("done", 0)), int(state.get("total", 0)) or 1)]
    rows += runlevel_rows(state)
    return rows + pool_rows(r.store.list("MachineConfigPool"), state)


def pool_rows(pools: list[dict[str, Any]], state: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(label, nodes at the target, nodes) per pool for the live bars.

    While an update runs, a pool counts towards the release being applied: until the
    machine-config operator renders that release's config for it, none of its nodes is
    there yet (its updatedMachineCount still counts the old config, which would show the
    bar full and then drop to zero when the rollout starts)."""
    target = str(state.get("version") or "") if state.get("image") else ""
    rows = []
    for pool in pools:
        name = pool["metadata"]["name"]
        total = int(pool["status"].get("machineCount", 0)) or 1
        done = int(pool["status"].get("updatedMachineCount", 0))
        current = ((pool.get("spec") or {}).get("configuration") or {}).get("name")
        if target and current != rendered_config(name, target):
            done = 0
        rows.append((f"pool {name}", done, total))
    return rows


def summary_columns(store: Store) -> dict[str, str]:
    """VERSION, PROGRESSING and STATUS of `cluster list`, whatever the platform."""
    found = own_clusters(store.list("Cluster"))
    if not found:
        cv = store.get("ClusterVersion", "version") or {"status": {}}
        return clusterversion_columns(cv["status"])
    state = store.meta(f"state:{STATE}") or {}
    running = bool(state) and not state.get("completed") and not state.get("failed")
    columns = cluster_columns(found[0])
    status = (
        f"upgrade to {state['target']} stopped: {state['failed']}"
        if state.get("failed")
        else f"upgrading to {state['target']}"
        if running
        else columns["CLUSTER STATE"]
    )
    return {
        "VERSION": columns["ABM VERSION"],
        "PROGRESSING": str(running),
        "STATUS": status,
    }


def print_report(summary: dict[str, Any], started: float, output: Format) -> None:
    if output.data:
        print_json(summary)
        return
    stdout.print(
        f"{summary['outcome']}: {summary['simulatedSeconds'] / 60:.1f} simulated minutes "
        f"in {summary['wallSeconds']:.2f}s ({summary['steps']} steps)",
        highlight=False,
    )
    table = Table("WHAT", "FROM", "TOOK", "NOTE", box=None)
    for row in summary["timeline"]:
        end = row["to"]
        took = (
            f"{(end - row['from']) / 60:.1f} min" if end is not None and end > row["from"] else ""
        )
        table.add_row(
            row["object"], f"+{(row['from'] - started) / 60:.1f} min", took, row.get("note", "")
        )
    stdout.print(table)
    if "downtime" in summary:
        print_gdc_sections(summary, started)


def print_gdc_sections(summary: dict[str, Any], started: float) -> None:
    """Distributed cloud: status fields as filled, downtime vs the seed's table, drains."""
    fields = Table("STATUS FIELD", "FILLED AT", "VALUE", box=None)
    for row in summary["statusFields"]:
        fields.add_row(row["field"], f"+{(row['at'] - started) / 60:.1f} min", row["value"])
    stdout.print(fields)
    down = Table("COMPONENT", "DOWN", "EXPECTED", "WHEN", box=None)
    for row in summary["downtime"]:
        mark = "" if row["within"] is not False else ", more than expected"
        down.add_row(
            row["component"],
            f"{row['measuredMinutes']:.1f} min{mark}",
            row["expected"],
            row["when"],
        )
    stdout.print(down)
    if summary["drains"]:
        slow = Table("SLOW DRAIN", "TOOK", "WHY", box=None)
        for row in summary["drains"]:
            took = "still draining" if row["minutes"] is None else f"{row['minutes']:.1f} min"
            slow.add_row(row["node"], took, "; ".join(row["why"]))
        stdout.print(slow)
