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
from typing import Any

from kupgrade.cluster.backend import Backend, Obj
from kupgrade.cluster.gdc import POOL_LABEL as GDC_POOL_LABEL
from kupgrade.cluster.gdc import cluster_columns, own_clusters
from kupgrade.cluster.kube import event_rows, parse_time
from kupgrade.cluster.kubeadm import POOL_LABEL as KUBE_POOL_LABEL
from kupgrade.cluster.kubeadm import is_control_plane
from kupgrade.controllers.gdc.controller import GdcController
from kupgrade.controllers.gdc.request import STATE as GDC_STATE
from kupgrade.controllers.kube.controller import PARALLEL, step_order
from kupgrade.controllers.kube.controller import STATE as KUBE_STATE
from kupgrade.controllers.version.controller import STATE_KEY as VERSION_STATE
from kupgrade.controllers.version.progress import runlevel_rows
from kupgrade.controllers.version.status import clusterversion_columns
from kupgrade.sim.report import timeline

# The node controllers' events (nodes/controller.py, gdc/rollout.py, kube/controller.py,
# and the simulated machines' sim/world.py, sim/gdc_world.py), as the phase they begin.
PHASE_OF = {
    "Drain": "draining", "Cordon": "draining", "EvictionBlocked": "draining",
    "DrainWaiting": "draining", "DrainWarning": "draining", "DrainThresholdExceeded": "draining",
    "DrainFailed": "draining", "FailedToDrain": "draining", "DrainTimeout": "draining",
    "Drained": "updating", "Update": "updating", "Upgrade": "updating",
    "Reboot": "rebooting", "Uncordon": "rebooting", "Done": "done",
}  # fmt: skip
HOLDS = ("EvictionBlocked", "DrainWaiting", "DrainThresholdExceeded")
# kube-apiserver's eviction refusal (pkg/registry/core/pod/storage/eviction.go):
# "The disruption budget %s needs %d healthy pods and has %d currently".
BUDGET = re.compile(r"disruption budget (\S+) needs")
HELD_POD = re.compile(r"pod/([^/\s]+)/([^:\s]+)")


def platform_of(api: Backend) -> str:
    if api.get("ClusterVersion", "version") is not None:
        return "openshift"
    return "gdc" if own_clusters(api.list("Cluster")) else "kubernetes"


def snapshot(api: Backend) -> dict[str, Any]:
    """The live view's document: a look at the cluster now."""
    platform = platform_of(api)
    events = sorted(event_rows(api.list("Event")), key=lambda e: e["at"])
    budgets = [_budget(b) for b in api.list("PodDisruptionBudget")]
    doc: dict[str, Any] = {"kind": "cluster", "platform": platform, "now": api.now()}
    if platform == "openshift":
        doc.update(_openshift(api))
    elif platform == "gdc":
        doc.update(_gdc(api))
    else:
        doc.update(_kubernetes(api))
    since = float(doc.pop("since", 0.0) or 0.0)
    allowed = {b["name"]: b["disruptionsAllowed"] for b in budgets}
    doc["pools"] = _pools(api.list("Node"), events, since, allowed, platform)
    doc["budgets"] = budgets
    doc["since"] = since
    doc["timeline"] = timeline(events, since)
    return doc


# --- OpenShift ---------------------------------------------------------------------------


def _openshift(api: Backend) -> dict[str, Any]:
    cv = api.get("ClusterVersion", "version") or {"status": {}}
    status = cv.get("status") or {}
    state = api.state(VERSION_STATE) or {}
    operators = {o["metadata"]["name"]: o for o in api.list("ClusterOperator")}
    by_level: dict[str, list[str]] = {}
    for level, name in state.get("operators") or []:
        by_level.setdefault(f"runlevel {level}", []).append(name)
    rows = [{"label": "manifests", "done": int(state.get("done", 0)),
             "total": int(state.get("total", 0)) or 1, "items": []}]  # fmt: skip
    for label, done, total in runlevel_rows(state):
        items = [_operator(operators[n], n) for n in by_level.get(label, []) if n in operators]
        rows.append({"label": label, "done": done, "total": total, "items": items})
    history = status.get("history") or []
    return {
        "name": "version",
        "headline": clusterversion_columns(status),
        "target": state.get("version") or (status.get("desired") or {}).get("version", ""),
        "conditions": [_condition(c) for c in status.get("conditions") or []],
        "history": [
            {k: h.get(k) for k in ("state", "version", "startedTime", "completionTime")}
            for h in history
        ],
        "progress": rows,
        "operators": [_operator(o, n) for n, o in sorted(operators.items())],
        # The update's start (history's newest entry), which outlives the controller's
        # state of it (reset once the update completes).
        "since": parse_time(history[0].get("startedTime")) if history else 0.0,
    }


def _operator(co: Obj, name: str) -> dict[str, Any]:
    conditions = {
        c.get("type"): c.get("status") for c in (co.get("status") or {}).get("conditions") or []
    }
    versions = [v.get("version", "") for v in (co.get("status") or {}).get("versions") or []
                if v.get("name") == "operator"]  # fmt: skip
    return {"name": name, "version": versions[0] if versions else "",
            **{k: conditions.get(k, "Unknown") for k in ("Available", "Progressing", "Degraded")}}  # fmt: skip


def _condition(c: Obj) -> dict[str, str]:
    return {
        k: str(c.get(k, "")) for k in ("type", "status", "reason", "message", "lastTransitionTime")
    }


# --- distributed cloud -------------------------------------------------------------------


def _gdc(api: Backend) -> dict[str, Any]:
    cluster = own_clusters(api.list("Cluster"))[0]
    state = api.state(GDC_STATE) or {}
    rows = [{"label": label, "done": done, "total": total, "items": []}
            for label, done, total in GdcController(api).progress()]  # fmt: skip
    status = cluster.get("status") or {}
    return {
        "name": cluster["metadata"]["name"],
        "headline": cluster_columns(cluster),
        "target": state.get("target", ""),
        "conditions": [_condition(c) for c in status.get("conditions") or []],
        "history": [],
        "progress": rows,
        "operators": [],
        "failed": state.get("failed") or "",
        "since": state.get("requestedAt") or 0.0,
    }


# --- plain Kubernetes --------------------------------------------------------------------


def _kubernetes(api: Backend) -> dict[str, Any]:
    state = api.state(KUBE_STATE) or {}
    rows = []
    if PARALLEL in state:
        for step_id, entry in sorted(state[PARALLEL].items(), key=lambda e: step_order(e[0])):
            said = "done" if entry.get("done") is not None else entry.get("blocked") or "under way"
            rows.append(_step(step_id, entry["step"], said))
    else:
        index = int(state.get("index", 0))
        for i, step in enumerate(state.get("steps") or []):
            said = ("done" if i < index or state.get("completed") else
                    (state.get("blocked") or "under way") if i == index else "pending")  # fmt: skip
            rows.append(_step(str(step.get("id", f"s{i + 1}")), step, said))
    return {
        "name": "cluster",
        "headline": {
            "TARGET": str(state.get("target", "")),
            "STATUS": "completed"
            if state.get("completed")
            else f"failed: {state['failed']}"
            if state.get("failed")
            else "upgrading"
            if state
            else "no upgrade",
        },
        "target": str(state.get("target", "")),
        "conditions": [],
        "history": [],
        "progress": rows,
        "operators": [],
        "since": state.get("started") or 0.0,
    }


def _step(step_id: str, step: Obj, said: str) -> dict[str, Any]:
    return {"label": f"{step_id} {step.get('object', '')} to {step.get('to', '')}",
            "done": int(said == "done"), "total": 1, "state": said, "items": []}  # fmt: skip


# --- pools, nodes and budgets ------------------------------------------------------------


def _pool_of(node: Obj, platform: str) -> str:
    labels = node["metadata"].get("labels") or {}
    if platform == "gdc":
        return str(labels.get(GDC_POOL_LABEL) or "control-plane")
    if platform == "kubernetes":
        return (
            "control-plane"
            if is_control_plane(node)
            else str(labels.get(KUBE_POOL_LABEL) or "worker")
        )
    roles = sorted(k.removeprefix("node-role.kubernetes.io/") for k in labels
                   if k.startswith("node-role.kubernetes.io/"))  # fmt: skip
    return "master" if "master" in roles else roles[0] if roles else "worker"


def _pools(
    nodes: list[Obj], events: list[dict[str, Any]], since: float, allowed: dict[str, int],
    platform: str,
) -> list[dict[str, Any]]:  # fmt: skip
    by_node: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        if e["object"].startswith("node/") and e["at"] >= since:
            by_node.setdefault(e["object"].removeprefix("node/"), []).append(e)
    pools: dict[str, list[dict[str, Any]]] = {}
    for node in nodes:
        name = node["metadata"]["name"]
        row = _node(node, by_node.get(name, []), allowed)
        pools.setdefault(_pool_of(node, platform), []).append(row)
    return [{"name": p, "nodes": rows,
             "counts": {phase: sum(1 for r in rows if r["phase"] == phase) for phase in PHASES}}
            for p, rows in sorted(pools.items())]  # fmt: skip


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
        "name": node["metadata"]["name"], "phase": phase, "since": at, "message": message,
        "kubelet": (status.get("nodeInfo") or {}).get("kubeletVersion", ""), "ready": ready,
        "schedulable": not (node.get("spec") or {}).get("unschedulable", False),
    }  # fmt: skip
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
        "name": f"{meta.get('namespace', '')}/{meta['name']}", "rule": f"{rule} {spec.get(rule, '')}",
        "currentHealthy": int(status.get("currentHealthy", 0)),
        "desiredHealthy": int(status.get("desiredHealthy", 0)),
        "disruptionsAllowed": int(status.get("disruptionsAllowed", 0)),
    }  # fmt: skip
