"""What `controller run`, `get` and the demo show of a cluster: the live bars, the
timeline of what took how long, and `oc get` tables with the same columns as `oc`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from kupgrade.cli.output import Format, print_json, stderr, stdout
from kupgrade.cluster import mco
from kupgrade.cluster.conditions import find
from kupgrade.cluster.objects import parse_rfc3339
from kupgrade.controllers.nodes.pool import MCP_COLUMNS, mcp_columns
from kupgrade.controllers.version.progress import runlevel_rows
from kupgrade.controllers.version.status import clusterversion_columns
from kupgrade.sim.releases import rendered_config
from kupgrade.sim.runner import Runner


@contextmanager
def live_view(runner: Runner, speed: float, started: float, wall: float) -> Iterator[Any]:
    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=stderr,
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
            state = r.sim.state("version") or {}
            rows = [("manifests", int(state.get("done", 0)), int(state.get("total", 0)) or 1)]
            rows += runlevel_rows(state)
            rows += pool_rows(r.store.list("MachineConfigPool"), state)
            for label, done, total in rows:
                if label not in tasks:
                    tasks[label] = bars.add_task(label, total=total)
                bars.update(tasks[label], completed=done, total=total)

        yield on_step


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


def print_report(summary: dict[str, Any], started: float, output: Format) -> None:
    if output is Format.json:
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


# kind -> (singular, plural, short names, API group): the names `oc get` accepts, as the
# API server's discovery lists them (config.openshift.io and machineconfiguration CRDs,
# core nodes), also qualified by group (`clusteroperators.config.openshift.io`).
RESOURCES = {
    "ClusterVersion": ("clusterversion", "clusterversions", (), "config.openshift.io"),
    "ClusterOperator": ("clusteroperator", "clusteroperators", ("co",), "config.openshift.io"),
    "MachineConfigPool": (
        "machineconfigpool",
        "machineconfigpools",
        ("mcp",),
        "machineconfiguration.openshift.io",
    ),
    "Node": ("node", "nodes", ("no",), ""),
}


def _names() -> dict[str, str]:
    names: dict[str, str] = {}
    for kind, (singular, plural, shorts, group) in RESOURCES.items():
        for name in (singular, plural, *shorts):
            names[name] = kind
            if group:
                names[f"{name}.{group}"] = kind
    return names


KINDS = _names()


def age(created: str, now: float) -> str:

    seconds = max(0, int(now - parse_rfc3339(created))) if created else 0
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def oc_rows(kind: str, objs: list[dict[str, Any]], now: float) -> tuple[list[str], list[list[str]]]:
    if kind == "ClusterVersion":
        head = ["NAME", "VERSION", "AVAILABLE", "PROGRESSING", "SINCE", "STATUS"]
        rows = []
        for o in objs:
            c = clusterversion_columns(o["status"])
            since = age(c["SINCE"], now) if c["SINCE"] else ""
            rows.append(
                [
                    o["metadata"]["name"],
                    c["VERSION"],
                    c["AVAILABLE"],
                    c["PROGRESSING"],
                    since,
                    c["STATUS"],
                ]
            )
        return head, rows
    if kind == "ClusterOperator":
        head = ["NAME", "VERSION", "AVAILABLE", "PROGRESSING", "DEGRADED", "SINCE", "MESSAGE"]
        rows = []
        for o in objs:
            conds = o["status"].get("conditions") or []
            version = next(
                (
                    v["version"]
                    for v in o["status"].get("versions") or []
                    if v["name"] == "operator"
                ),
                "",
            )
            status = [
                (find(conds, k) or {}).get("status", "")
                for k in ("Available", "Progressing", "Degraded")
            ]
            times = [c.get("lastTransitionTime", "") for c in conds if c.get("lastTransitionTime")]
            message = next(
                (
                    c.get("message", "")
                    for c in conds
                    if c.get("message") and c["status"] != "False"
                ),
                "",
            )
            rows.append(
                [
                    o["metadata"]["name"],
                    version,
                    *status,
                    age(max(times), now) if times else "",
                    message,
                ]
            )
        return head, rows
    if kind == "MachineConfigPool":
        head = ["NAME", *MCP_COLUMNS, "AGE"]
        rows = [
            [
                o["metadata"]["name"],
                *[str(v) for v in mcp_columns(o).values()],
                age(o["metadata"].get("creationTimestamp", ""), now),
            ]
            for o in objs
        ]
        return head, rows
    head = ["NAME", "STATUS", "ROLES", "AGE", "CONFIG", "STATE"]
    node_rows: list[list[str]] = []

    for o in objs:
        ready = (find(o["status"].get("conditions"), "Ready") or {}).get("status") == "True"
        node_status = "Ready" if ready else "NotReady"
        if o["spec"].get("unschedulable"):
            node_status += ",SchedulingDisabled"
        roles = ",".join(
            sorted(
                k.split("/", 1)[1]
                for k in o["metadata"].get("labels", {})
                if k.startswith("node-role.kubernetes.io/")
            )
        )
        notes = o["metadata"].get("annotations", {})
        node_rows.append(
            [
                o["metadata"]["name"],
                node_status,
                roles,
                age(o["metadata"].get("creationTimestamp", ""), now),
                notes.get(mco.CURRENT, ""),
                notes.get(mco.STATE, ""),
            ]
        )
    return head, node_rows


def oc_table(kind: str, objs: list[dict[str, Any]], now: float) -> str:
    head, rows = oc_rows(kind, objs, now)
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)
    ]
    return "".join(
        "   ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() + "\n"
        for line in [head, *rows]
    )
