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
from kupgrade.controllers.version.status import clusterversion_columns
from kupgrade.sim.loop import Loop
from kupgrade.sim.store import Store


@contextmanager
def live_view(runner: Loop[Any], speed: float, started: float, wall: float) -> Iterator[Any]:
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

        def on_step(r: Loop[Any]) -> None:
            if speed > 0:
                ahead = (r.now() - started) / speed - (time.monotonic() - wall)
                if ahead > 0:
                    time.sleep(min(ahead, 1.0))
            for label, done, total in r.progress():
                if label not in tasks:
                    tasks[label] = bars.add_task(label, total=total)
                bars.update(tasks[label], completed=done, total=total)

        yield on_step


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
