"""What the live view of a cluster shows, read through `cluster.Backend`: the Kubernetes
API of a served simulated cluster (or of any cluster a kubeconfig reaches).

One document per look, for every platform: the cluster's conditions and history, the
progress rows of its upgrade (OpenShift runlevels with their operators, distributed-cloud
stages, Kubernetes plan steps), its pools with each node's phase (pending, draining,
updating, rebooting, done) and the budget holding a drain, the budgets, and the timeline
the rehearsal report draws. Node phases come from the events every platform's node
controller records (Drain, Drained, Update or Upgrade, Reboot, Done), so the three
platforms are read one way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kupgrade.cluster.apikinds import event_rows
from kupgrade.cluster.backend import Backend, Obj
from kupgrade.cluster.conditions import operator_row
from kupgrade.controllers.protocol import Progress
from kupgrade.sim.platforms import platform_serving
from kupgrade.sim.report import timeline

# The node controllers' events (nodes/controller.py, gdc/rollout.py, kube/controller.py,
# and the simulated machines' sim/openshift/world.py, sim/gdc/world.py), as the phase they begin.
PHASE_OF = {
    "Drain": "draining",
    "Cordon": "draining",
    "EvictionBlocked": "draining",
    "DrainWaiting": "draining",
    "DrainWarning": "draining",
    "DrainThresholdExceeded": "draining",
    "DrainFailed": "draining",
    "FailedToDrain": "draining",
    "DrainTimeout": "draining",
    "Drained": "updating",
    "Update": "updating",
    "Upgrade": "updating",
    "Reboot": "rebooting",
    "Uncordon": "rebooting",
    "Done": "done",
}
HOLDS = ("EvictionBlocked", "DrainWaiting", "DrainThresholdExceeded")
# kube-apiserver's eviction refusal (pkg/registry/core/pod/storage/eviction.go):
# "The disruption budget %s needs %d healthy pods and has %d currently".
BUDGET = re.compile(r"disruption budget (\S+) needs")
HELD_POD = re.compile(r"pod/([^/\s]+)/([^:\s]+)")


def snapshot(api: Backend) -> dict[str, Any]:
    """The live view's document: a look at the cluster now, its platform telling what the
    cluster is, how far its controllers have come and how it groups its nodes."""
    platform = platform_serving(api)
    events = sorted(event_rows(api.list("Event")), key=lambda e: e["at"])
    budgets = [_budget(b) for b in api.list("PodDisruptionBudget")]
    doc: dict[str, Any] = {"kind": "cluster", "platform": platform.name, "now": api.now()}
    doc.update(platform.status(api))
    doc["progress"] = [_row(api, row) for row in platform.progress(api)]
    since = float(doc.pop("since", 0.0) or 0.0)
    allowed = {b["name"]: b["disruptionsAllowed"] for b in budgets}
    doc["pools"] = _pools(api.list("Node"), events, since, allowed, platform.pool_of)
    doc["budgets"] = budgets
    doc["since"] = since
    doc["timeline"] = timeline(events, since)
    return doc


def _row(api: Backend, row: Progress) -> dict[str, Any]:
    """A progress row; its items are ClusterOperators, shown with their health."""
    items = [
        operator_row(co)
        for name in row.items
        if (co := api.get("ClusterOperator", name)) is not None
    ]
    out: dict[str, Any] = {"label": row.label, "done": row.done, "total": row.total}
    if row.state:
        out["state"] = row.state
    return {**out, "items": items}


# --- pools, nodes and budgets ------------------------------------------------------------


def _pools(
    nodes: list[Obj],
    events: list[dict[str, Any]],
    since: float,
    allowed: dict[str, int],
    pool_of: Callable[[Obj], str],
) -> list[dict[str, Any]]:
    by_node: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        if e["object"].startswith("node/") and e["at"] >= since:
            by_node.setdefault(e["object"].removeprefix("node/"), []).append(e)
    pools: dict[str, list[dict[str, Any]]] = {}
    for node in nodes:
        name = node["metadata"]["name"]
        row = _node(node, by_node.get(name, []), allowed)
        pools.setdefault(pool_of(node), []).append(row)
    return [
        {
            "name": p,
            "nodes": rows,
            "counts": {phase: sum(1 for r in rows if r["phase"] == phase) for phase in PHASES},
        }
        for p, rows in sorted(pools.items())
    ]


PHASES = ("pending", "draining", "updating", "rebooting", "done")


def _node(node: Obj, events: list[dict[str, Any]], allowed: dict[str, int]) -> dict[str, Any]:
    phase, at, message, held = "pending", None, "", None
    for e in events:
        if e["reason"] in PHASE_OF:
            began = PHASE_OF[e["reason"]]
            if began != phase:
                at = e["at"]
            phase, message = began, e["message"]
            if e["reason"] == "Drain":
                held = None
            if e["reason"] in HOLDS:
                held = e["message"]
    status = node.get("status") or {}
    ready = next(
        (c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"),
        "Unknown",
    )
    row: dict[str, Any] = {
        "name": node["metadata"]["name"],
        "phase": phase,
        "since": at,
        "message": message,
        "kubelet": (status.get("nodeInfo") or {}).get("kubeletVersion", ""),
        "ready": ready,
        "schedulable": not (node.get("spec") or {}).get("unschedulable", False),
    }
    if phase == "draining" and held:
        row["blockedBy"] = _holder(held, allowed)
    return row


def _holder(message: str, allowed: dict[str, int]) -> dict[str, Any]:
    """The budget a drain waits for, named by the eviction's refusal, while that budget
    still allows no disruption (once it does, the drain goes on and is not held)."""
    pod = HELD_POD.search(message)
    budget = BUDGET.search(message)
    namespace = pod.group(1) if pod else ""
    name = (
        f"{namespace}/{budget.group(1)}"
        if budget and namespace
        else budget.group(1)
        if budget
        else ""
    )
    out: dict[str, Any] = {"message": message}
    if pod:
        out["pod"] = f"{pod.group(1)}/{pod.group(2)}"
    if name:
        out["budget"] = name
        out["holding"] = allowed.get(name, 0) == 0
    return out


def _budget(pdb: Obj) -> dict[str, Any]:
    meta, spec, status = pdb["metadata"], pdb.get("spec") or {}, pdb.get("status") or {}
    rule = "minAvailable" if "minAvailable" in spec else "maxUnavailable"
    return {
        "name": f"{meta.get('namespace', '')}/{meta['name']}",
        "rule": f"{rule} {spec.get(rule, '')}",
        "currentHealthy": int(status.get("currentHealthy", 0)),
        "desiredHealthy": int(status.get("desiredHealthy", 0)),
        "disruptionsAllowed": int(status.get("disruptionsAllowed", 0)),
    }
