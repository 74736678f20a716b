"""What a preflight finds by reading the cluster as it stands (SPEC X8): budgets that hold
a drain forever, workloads that go down, operators that cap the target, acknowledgements
the target needs, APIs it removes that are still in use, paused pools and degraded
operators. Each finding names its rule, its objects and the fix. The rehearsal adds what
only running the upgrade shows (twin/preflight.py).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kupgrade.cluster.backend import Backend, Obj
from kupgrade.cluster.disruption import budget_status
from kupgrade.cluster.olm import incompatible
from kupgrade.controllers.version.upgradeable import ADMIN_ACKS, ADMIN_GATES, reasons
from kupgrade.errors import KupgradeError, VersionError
from kupgrade.risks.promql.engine import evaluate
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.risks.promql.snapshot_file import load_snapshot
from kupgrade.risks.promql.values import Vector
from kupgrade.sim.workloads import IMPORTED_AS
from kupgrade.skew.removed_apis import (
    Use,
    findings,
    kubernetes_minor,
    removed_between,
    uses_in_metrics,
    uses_in_request_counts,
)

# The classes of blocker, as `--accept` names them.
CLASSES = (
    "budget",
    "downtime",
    "operator-cap",
    "admin-ack",
    "removed-api",
    "skew",
    "paused-pool",
    "degraded-operator",
    "risk",
    "window",
    "stalled",
)


@dataclass(frozen=True)
class Blocker:
    """One thing that stops the upgrade or hurts on its way (SPEC X4, X8)."""

    check: str  # one of CLASSES
    message: str
    objects: tuple[str, ...]
    fix: str
    accepted: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "message": self.message,
            "objects": list(self.objects),
            "fix": self.fix,
            "accepted": self.accepted,
        }


@dataclass
class Cluster:
    """What the checks read, gathered once."""

    version: str
    target: str
    platform: str
    pods: list[Obj] = field(default_factory=list)
    selected: list[tuple[Obj, list[Obj]]] = field(default_factory=list)  # budgets, their pods

    @property
    def minor_upgrade(self) -> bool:
        return _xy(self.target) > _xy(self.version)


def _xy(version: str) -> tuple[int, int]:
    parts = version.lstrip("v").split(".")
    try:
        return int(parts[0]), int(parts[1].split("-")[0])
    except (IndexError, ValueError):
        return (0, 0)


def _ref(obj: Obj) -> str:
    meta = obj["metadata"]
    ns = meta.get("namespace")
    return f"{obj['kind']} {ns + '/' if ns else ''}{meta['name']}"


def _pod_name(pod: Obj) -> str:
    meta = pod["metadata"]
    return str((meta.get("annotations") or {}).get(IMPORTED_AS) or meta["name"])


def budgets_forever(c: Cluster) -> list[Blocker]:
    """A budget that allows no disruption even when all its pods are healthy holds every
    drain of a node running one of its pods forever (SPEC E3, X8)."""
    found = []
    for budget, pods in c.selected:
        if not pods:
            continue
        whole = budget_status(budget.get("spec") or {}, len(pods), len(pods))
        if whole["disruptionsAllowed"] > 0:
            continue
        nodes = sorted({str(p["spec"].get("nodeName")) for p in pods})
        found.append(
            Blocker(
                "budget",
                f"{_ref(budget)} allows no disruption even with all {len(pods)} pods healthy: "
                f"draining {', '.join(nodes)} will wait forever",
                (
                    _ref(budget),
                    *sorted(f"Pod {_pod_name(p)}" for p in pods),
                    *(f"Node {n}" for n in nodes),
                ),
                "let one pod go (maxUnavailable: 1, or minAvailable below the replicas), "
                "or run more replicas than the budget keeps",
            )
        )
    return found


def downtime(c: Cluster, workloads: list[dict[str, Any]]) -> list[Blocker]:
    """Workloads that go down while their node drains: one replica and no budget, or a
    bare pod, which a drain deletes for good (SPEC X8)."""
    budgeted = {id(p) for _, pods in c.selected for p in pods}
    by_owner: dict[tuple[str, str], list[Obj]] = defaultdict(list)
    for pod in c.pods:
        owners = pod["metadata"].get("ownerReferences") or []
        owner = owners[0]["name"] if owners else pod["metadata"]["name"]
        by_owner[(pod["metadata"].get("namespace", ""), str(owner))].append(pod)
    found = []
    for w in workloads:
        pods = by_owner.get((w["namespace"], w["name"]), [])
        if w["kind"] not in ("Deployment", "StatefulSet", "Pod") or not pods:
            continue
        if w["kind"] != "Pod" and (w["replicas"] != 1 or any(id(p) in budgeted for p in pods)):
            continue
        ref = f"{w['kind']} {w['namespace']}/{w['name']}"
        node = pods[0]["spec"].get("nodeName")
        gone = (
            "is deleted by the drain and nothing recreates it"
            if w["kind"] == "Pod"
            else f"is down for about {w['down']:.0f} s while {node} drains"
        )
        found.append(
            Blocker(
                "downtime",
                f"{ref} has one pod and no budget: it {gone}",
                (ref, f"Pod {_pod_name(pods[0])}", f"Node {node}"),
                "run two replicas with a PodDisruptionBudget (maxUnavailable: 1)"
                if w["kind"] != "Pod"
                else "run it under a Deployment or StatefulSet",
            )
        )
    return found


def operator_caps(c: Cluster, csvs: list[Obj]) -> list[Blocker]:
    """Installed operators whose CSV caps the next minor (olm.maxOpenShiftVersion)."""
    if not c.minor_upgrade:
        return []
    return [
        Blocker(
            "operator-cap",
            f"ClusterServiceVersion {ref} "
            + (f"supports OpenShift up to {cap} only" if cap else f"has a bad cap: {error}"),
            (f"ClusterServiceVersion {ref}",),
            "update the operator (its subscription's channel) to a version that supports "
            f"{'.'.join(c.target.split('.')[:2])}, or uninstall it",
        )
        for ref, cap, error in incompatible(csvs, c.version)
    ]


def admin_acks(c: Cluster, gates: Obj | None, acks: Obj | None) -> list[Blocker]:
    """Acknowledgements the administrator must give before the minor update."""
    if not c.minor_upgrade or gates is None:
        return []
    found = reasons(
        version=c.version,
        admin_gates=gates.get("data") or {},
        admin_acks=(acks or {}).get("data") or {},
    )
    return [
        Blocker(
            "admin-ack",
            f"{reason}: {message}",
            (
                f"ConfigMap openshift-config-managed/{ADMIN_GATES}",
                f"ConfigMap openshift-config/{ADMIN_ACKS}",
            ),
            f"read the gate's message, then `oc -n openshift-config patch cm {ADMIN_ACKS} "
            '--patch \'{"data":{"<gate>":"true"}}\' --type=merge`',
        )
        for reason, message in found
    ]


def removed_apis(c: Cluster, request_counts: list[Obj], uses: list[Use]) -> list[Blocker]:
    """APIs the target's Kubernetes no longer serves that something still uses."""
    try:
        now, then = kubernetes_minor(c.version), kubernetes_minor(c.target)
    except VersionError:
        return []
    every = [*uses, *uses_in_request_counts(request_counts)]
    return [
        Blocker("removed-api", f.message, tuple(sorted({u.who for u in f.uses})), f.fix)
        for f in findings(removed_between(now, then), every, current=now)
    ]


DEPRECATED_METRIC = "apiserver_requested_deprecated_apis"


def metric_uses(snapshot: Path | None, now: float) -> list[Use]:
    """Deprecated APIs the apiservers saw requested, from the cluster's metrics snapshot
    (the gauge the apiserver keeps per group, version and resource)."""
    if snapshot is None:
        return []
    try:
        found = evaluate(DEPRECATED_METRIC, load_snapshot(snapshot), int(now * 1000))
    except (KupgradeError, PromQLError):
        return []
    if not isinstance(found, Vector):
        return []
    return uses_in_metrics(
        [(dict(labels).get("__name__", DEPRECATED_METRIC), dict(labels), v) for labels, v in found]
    )


def paused_pools(pools: list[Obj]) -> list[Blocker]:
    return [
        Blocker(
            "paused-pool",
            f"MachineConfigPool {p['metadata']['name']} is paused: its nodes will not update",
            (f"MachineConfigPool {p['metadata']['name']}",),
            f"`oc patch mcp {p['metadata']['name']} --type merge --patch "
            '\'{"spec":{"paused":false}}\'` when its nodes may update',
        )
        for p in pools
        if (p.get("spec") or {}).get("paused") is True
    ]


def degraded_operators(operators: list[Obj]) -> list[Blocker]:
    found = []
    for op in operators:
        raw = op.get("status")
        status: dict[str, Any] = raw if isinstance(raw, dict) else {}
        given = status.get("conditions")
        listed: list[Any] = given if isinstance(given, list) else []
        conditions = {c.get("type"): c for c in listed if isinstance(c, dict)}
        bad = [
            f"{t}={conditions[t].get('status')}: {conditions[t].get('message') or conditions[t].get('reason') or ''}".rstrip(
                ": "
            )
            for t, wrong in (("Degraded", "True"), ("Available", "False"))
            if (conditions.get(t) or {}).get("status") == wrong
        ]
        if bad:
            name = op["metadata"]["name"]
            found.append(
                Blocker(
                    "degraded-operator",
                    f"ClusterOperator {name} is {'; '.join(bad)}",
                    (f"ClusterOperator {name}",),
                    f"bring {name} back to health first (`oc describe co {name}`)",
                )
            )
    return found


def standing(
    api: Backend, c: Cluster, workloads: list[dict[str, Any]], uses: list[Use]
) -> list[Blocker]:
    """Every check that reads the cluster as it stands, in CLASSES order."""
    return [
        *budgets_forever(c),
        *downtime(c, workloads),
        *operator_caps(c, api.list("ClusterServiceVersion")),
        *admin_acks(
            c,
            api.get("ConfigMap", ADMIN_GATES, "openshift-config-managed"),
            api.get("ConfigMap", ADMIN_ACKS, "openshift-config"),
        ),
        *removed_apis(c, api.list("APIRequestCount"), uses),
        *paused_pools(api.list("MachineConfigPool")),
        *degraded_operators(api.list("ClusterOperator")),
    ]
