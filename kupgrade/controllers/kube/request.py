"""What `kupgrade upgrade --cluster NAME --to VERSION` records on a plain Kubernetes
cluster: the plan `kupgrade plan` makes from the live state (SPEC H7: the newest patch of
the current minor first, one minor per step; node pools only when the skew rules need
it, X1), refused with the planner's reason when no plan keeps every state legal."""

from __future__ import annotations

from typing import Any

import msgspec

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.kubeadm import is_control_plane, kubelet_of, node_pool
from kupgrade.controllers.kube.inventory import inventory
from kupgrade.controllers.kube.record import (
    FleetStep,
    Kubeadm,
    KubeUpgrade,
    PlanStep,
    save_record,
    upgrade_record,
)
from kupgrade.errors import InputError
from kupgrade.plan.kube import KubeCluster, plan_cluster
from kupgrade.plan.steps import Plan
from kupgrade.versions import SemVer, parse_kube


def current(api: Backend) -> KubeCluster:
    """The control plane at its oldest component (an apiserver, controller-manager,
    scheduler: a step brings the laggards up first), each worker pool at its oldest
    kubelet."""
    found = inventory(api)
    plane = min(
        parse_kube(i.version) for i in [*found.apiservers, *(c for _, c in found.controllers())]
    )
    pools: dict[str, Any] = {}
    for node in api.list("Node"):
        if is_control_plane(node):
            continue
        version = parse_kube(kubelet_of(node))
        pool = node_pool(node) or "worker"
        pools[pool] = min(pools.get(pool, version), version)
    return KubeCluster(plane, pools)


def in_progress(api: Backend) -> KubeUpgrade | None:
    """The upgrade under way: a plan of `upgrade`'s, or a fleet's steps not all done."""
    found = upgrade_record(api)
    return found if found is not None and found.running else None


def planned_upgrade(
    api: Backend, target: str, available: list[str], policy: str
) -> tuple[SemVer, KubeCluster, Plan]:
    """The target, the cluster as it is and the plan `upgrade --to` records: refused when
    an upgrade is under way or no path keeps every state legal."""
    if in_progress(api) is not None:
        raise InputError(
            "an upgrade is already in progress",
            hint="wait for it (`kupgrade upgrade --cluster NAME` shows it)",
        )
    to = parse_kube(target)
    offered = sorted({parse_kube(a) for a in [*available, target]})
    found = current(api)
    plan = plan_cluster(found, to, offered, policy)
    if plan.refused is not None:
        refusal = plan.refused
        raise InputError(
            f"no upgrade path keeps every state legal: {', '.join(refusal.rules)}: "
            f"{refusal.message}",
            rule=", ".join(refusal.rules),
            hint=refusal.fix,
        )
    return to, found, plan


def request_upgrade(
    api: Backend,
    target: str,
    available: list[str],
    policy: str,
    kubeadm: dict[str, Any] | None = None,
) -> KubeUpgrade:
    """Plan the upgrade and record it for the controller; `kubeadm` as `Kubeadm` names
    its fields."""
    to, _, plan = planned_upgrade(api, target, available, policy)
    record = KubeUpgrade(
        target=str(to),
        policy=policy,
        started=api.now(),
        steps=[msgspec.convert(s.to_json(), PlanStep) for s in plan.steps],
        kubeadm=_kubeadm(kubeadm),
    )
    save_record(api, record)
    return record


def _kubeadm(flags: dict[str, Any] | None) -> Kubeadm | None:
    return msgspec.convert(flags, Kubeadm) if flags else None


def request_step(
    api: Backend, step: dict[str, Any], policy: str, kubeadm: dict[str, Any] | None = None
) -> FleetStep:
    """One step of a fleet's plan, `control-plane` or `nodepool/POOL` of this cluster, for
    the controller to carry out beside the fleet's other steps on this cluster (the
    fleet starts a step only once the plan allows it)."""
    record = upgrade_record(api)
    if record is None or record.parallel is None:
        if in_progress(api) is not None:
            raise InputError(
                "an upgrade is already in progress",
                hint="wait for it (`kupgrade upgrade --cluster NAME` shows it)",
            )
        record = KubeUpgrade(parallel={})
    entries = record.parallel
    assert entries is not None
    running = entries.get(step["id"])
    if running is not None and running.done is None:
        raise InputError(f"step {step['id']} is already under way")
    entry = FleetStep(
        step=msgspec.convert(step, PlanStep),
        policy=policy,
        started=api.now(),
        kubeadm=_kubeadm(kubeadm),
    )
    entries[step["id"]] = entry
    save_record(api, record)
    return entry
