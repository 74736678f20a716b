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
from kupgrade.cluster.gdc import (
    NODE_VERSION,
    cluster_columns,
    nodepool_columns,
    preflight_columns,
)
from kupgrade.cluster.objects import parse_rfc3339
from kupgrade.controllers.gdc.request import STATE
from kupgrade.controllers.nodes.pool import MCP_COLUMNS, mcp_columns
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
    found = [c for c in store.list("Cluster") if ":" not in c["metadata"].get("namespace", "")]
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
    "Cluster": ("cluster", "clusters", (), "baremetal.cluster.gke.io"),
    "NodePool": ("nodepool", "nodepools", (), "baremetal.cluster.gke.io"),
    "PreflightCheck": ("preflightcheck", "preflightchecks", (), "baremetal.cluster.gke.io"),
    "HealthCheck": ("healthcheck", "healthchecks", (), "baremetal.cluster.gke.io"),
}
# Distributed-cloud kinds, listed across namespaces as `kubectl get -A` does.
GDC_COLUMNS = {
    "Cluster": cluster_columns,
    "NodePool": nodepool_columns,
    "PreflightCheck": preflight_columns,
    "HealthCheck": preflight_columns,
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
    if kind in GDC_COLUMNS:
        columns = GDC_COLUMNS[kind]
        sample = list(columns({"spec": {}, "status": {}}))
        return ["NAMESPACE", "NAME", *sample, "AGE"], [
            [
                o["metadata"].get("namespace", "").split(":")[-1],
                o["metadata"]["name"],
                *columns(o).values(),
                age(o["metadata"].get("creationTimestamp", ""), now),
            ]
            for o in objs
        ]
    if kind == "Node" and any(
        NODE_VERSION in (o["metadata"].get("annotations") or {}) for o in objs
    ):
        return kubectl_nodes(objs, now)
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


def node_status(node: dict[str, Any]) -> str:
    ready = (find(node["status"].get("conditions"), "Ready") or {}).get("status") == "True"
    text = "Ready" if ready else "NotReady"
    return text + (",SchedulingDisabled" if node["spec"].get("unschedulable") else "")


def node_roles(node: dict[str, Any]) -> str:
    roles = sorted(
        k.split("/", 1)[1]
        for k in node["metadata"].get("labels", {})
        if k.startswith("node-role.kubernetes.io/")
    )
    return ",".join(roles) or "<none>"


def kubectl_nodes(objs: list[dict[str, Any]], now: float) -> tuple[list[str], list[list[str]]]:
    """`kubectl get nodes`: NAME, STATUS, ROLES, AGE and the kubelet's VERSION."""
    return ["NAME", "STATUS", "ROLES", "AGE", "VERSION"], [
        [
            o["metadata"]["name"],
            node_status(o),
            node_roles(o),
            age(o["metadata"].get("creationTimestamp", ""), now),
            str((o["status"].get("nodeInfo") or {}).get("kubeletVersion", "")),
        ]
        for o in objs
    ]


def oc_table(kind: str, objs: list[dict[str, Any]], now: float) -> str:
    head, rows = oc_rows(kind, objs, now)
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)
    ]
    return "".join(
        "   ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() + "\n"
        for line in [head, *rows]
    )
