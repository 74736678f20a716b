"""What `kupgrade plan` reads: a distributed-cloud fleet, a Kubernetes cluster (the short
form `{cp, pools}` or a full skew inventory), or one cluster's shape for its stages. A
file may also carry `target`, `available` and `policy`, as the conformance cases do;
the command line wins over the file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kupgrade.errors import InputError
from kupgrade.plan.gdc_fleet import Goal, plan_fleet
from kupgrade.plan.kube import KubeCluster, plan_cluster
from kupgrade.plan.kube_fleet import fleet_clusters, is_kube_fleet, kube_cluster, plan_kube_fleet
from kupgrade.plan.stages import stage_plan
from kupgrade.plan.steps import Plan
from kupgrade.skew.fleet import History, is_fleet_document, listed_fleet
from kupgrade.skew.inventory import kube_field

STAGE_FIELDS = {"workerNodePools", "controlPlaneLoadBalancer", "loadBalancerNodePool"}


@dataclass
class PlanRequest:
    target: str | None
    available: list[str] | None
    policy: str | None
    history: History | None = None


def plan_document(data: Any, where: str, request: PlanRequest) -> Plan | dict[str, Any]:
    """A Plan, or for one cluster's shape its stage plan (SPEC G8)."""
    if not isinstance(data, dict):
        raise InputError("a plan input is a mapping (clusters, cluster or cp)", file=where)
    target = request.target or data.get("target")
    if not target:
        raise InputError("no target version", field="--to", hint="pass --to VERSION")
    target = str(target)
    available = [str(v) for v in (request.available or data.get("available") or [])]
    policy = request.policy or data.get("policy") or "auto"
    # One cluster's shape, under `cluster:` or as the whole document.
    cluster = data.get("cluster", data if STAGE_FIELDS & set(data) else None)
    if data.get("platform") == "gdc-stages" or (
        isinstance(cluster, dict) and STAGE_FIELDS & set(cluster)
    ):
        return stage_plan(cluster, target, where)
    if is_kube_fleet(data):
        if policy == "gdc":
            raise InputError(
                "policy gdc does not apply to Kubernetes clusters",
                file=where,
                field="--policy",
                hint="use k8s-n2, k8s-n3 or auto",
            )
        clusters = fleet_clusters(data, where, policy)
        offered = [kube_field(v, "--available") for v in available]
        return plan_kube_fleet(clusters, kube_field(target, "--to"), offered, policy)
    if is_fleet_document(data):
        if policy not in ("gdc", "auto"):
            raise InputError(
                f"policy {policy!r} does not apply to a fleet",
                field="--policy",
                hint="use --policy gdc",
            )
        fleet = listed_fleet(data, where, request.history)
        return plan_fleet(fleet, Goal.of(target, available, fleet.history))
    if policy == "gdc":
        raise InputError("policy gdc needs a fleet (clusters: ...)", file=where, field="--policy")
    kube = _kube_cluster(data, where, policy)
    if isinstance(kube, Plan):
        return kube
    to = kube_field(target, "--to")
    return plan_cluster(kube, to, [kube_field(v, "--available") for v in available], policy)


def _kube_cluster(data: dict[str, Any], where: str, policy: str) -> KubeCluster | Plan:
    """One cluster: a skew inventory, `{cp, pools}` at the top or under `cluster:`."""
    if "apiservers" in data:
        return kube_cluster(data, where, policy)
    body = data.get("cluster", data)
    picked = {k: v for k, v in body.items() if k in ("cp", "pools")} if body is data else body
    return kube_cluster(picked, where, policy)
