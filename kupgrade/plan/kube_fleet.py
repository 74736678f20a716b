"""Plans for a fleet of plain Kubernetes clusters (SPEC H6, H7, X1).

The skew rules of plain Kubernetes hold inside one cluster: nothing ties one cluster's
versions to another's, so each cluster is planned on its own (kupgrade.plan.kube) and the
plans are laid side by side, their steps named after their cluster
(`control-plane/NAME`, `nodepool/NAME/POOL`) and numbered in cluster order. A cluster no
plan gets past refuses the whole fleet, naming that cluster's step.

A fleet document is `platform: kubernetes` with `clusters: {NAME: CLUSTER}`, each
cluster in either form `kupgrade plan` reads for one cluster: the short `{cp, pools}` or
a full skew inventory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import msgspec

from kupgrade.errors import InputError
from kupgrade.plan.kube import CONTROL_PLANE, KubeCluster, plan_cluster
from kupgrade.plan.steps import Plan, PlanStep, Refusal
from kupgrade.skew.inventory import kube_field, parse_inventory, with_apiservers
from kupgrade.skew.k8s import check
from kupgrade.versions import SemVer, parse_kube

KUBERNETES = "kubernetes"


class KubeDoc(msgspec.Struct, forbid_unknown_fields=True):
    cp: str
    pools: dict[str, str] = msgspec.field(default_factory=dict)
    kubeadm: dict[str, Any] | None = None  # the binary a rehearsal's steps use (not planned)
    labels: dict[str, str] = msgspec.field(default_factory=dict)  # what rollouts select by


def is_kube_fleet(data: Any) -> bool:
    """A document listing Kubernetes clusters: `platform: kubernetes`, or clusters that
    each look like one (`cp` or `apiservers`)."""
    if not isinstance(data, dict) or not isinstance(data.get("clusters"), dict):
        return False
    if data.get("platform") == KUBERNETES:
        return True
    entries = list(data["clusters"].values())
    return bool(entries) and all(
        isinstance(e, dict) and ("cp" in e or "apiservers" in e) for e in entries
    )


def kube_cluster(body: Any, where: str, policy: str, at: str = "") -> KubeCluster | Plan:
    """One cluster in the short form or as a skew inventory; a refusing Plan when an
    inventory already breaks a rule (no plan can keep every state legal then)."""
    prefix = f"{at}." if at else ""
    if isinstance(body, dict) and "apiservers" in body:
        inventory = parse_inventory(body, where)
        problems = check(inventory, policy)  # the real inventory, kube-proxy and all
        if problems:
            return Plan([], refused=Refusal.illegal_start(problems, "cluster"))
        with_apiservers(inventory, where, f"{prefix}apiservers")
        pools = {n.name: parse_kube(n.kubelet) for n in inventory.nodes if n.kubelet}
        return KubeCluster(max(parse_kube(a.version) for a in inventory.apiservers), pools)
    try:
        doc = msgspec.convert(body, KubeDoc)
    except msgspec.ValidationError as exc:
        raise InputError(
            str(exc).replace("`$", f"`{at or '$'}"),
            file=where,
            hint="a Kubernetes cluster is {cp: VERSION, pools: {NAME: VERSION}} or a skew "
            "inventory (apiservers, nodes, ...)",
        ) from None
    pools = {n: kube_field(v, f"{prefix}pools.{n}", where) for n, v in doc.pools.items()}
    return KubeCluster(kube_field(doc.cp, f"{prefix}cp", where), pools)


def fleet_clusters(data: dict[str, Any], where: str, policy: str) -> dict[str, KubeCluster | Plan]:
    clusters = data["clusters"]
    if not clusters:
        raise InputError("the fleet lists no cluster", file=where, field="clusters")
    return {
        str(name): kube_cluster(body, where, policy, f"clusters.{name}")
        for name, body in clusters.items()
    }


def rename(obj: str, cluster: str) -> str:
    """A one-cluster plan's object, named in the fleet."""
    if obj == CONTROL_PLANE:
        return f"{CONTROL_PLANE}/{cluster}"
    return f"nodepool/{cluster}/{obj.removeprefix('nodepool/')}"


def plan_kube_fleet(
    clusters: dict[str, KubeCluster | Plan],
    target: SemVer,
    available: Iterable[SemVer],
    policy: str,
) -> Plan:
    """Every cluster's plan, side by side; the first refusal refuses the fleet."""
    offered = sorted(set(available))
    out = Plan([])
    for name in sorted(clusters):
        cluster = clusters[name]
        plan = (
            cluster if isinstance(cluster, Plan) else plan_cluster(cluster, target, offered, policy)
        )
        out.states_checked += plan.states_checked
        if plan.refused is not None:
            refusal = plan.refused
            obj = rename(refusal.object, name) if refusal.object else f"cluster/{name}"
            out.refused = replace(
                refusal,
                object=obj if refusal.object else None,
                message=f"cluster {name}: {refusal.message}",
            )
            return out
        out.pool_rollouts += plan.pool_rollouts
        base = len(out.steps)
        ids = {s.id: f"s{base + i}" for i, s in enumerate(plan.steps, start=1)}
        out.steps += [
            PlanStep(ids[s.id], rename(s.object, name), s.frm, s.to, [ids[a] for a in s.after])
            for s in plan.steps
        ]
    return out
