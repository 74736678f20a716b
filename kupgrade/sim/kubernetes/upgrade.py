"""`kupgrade upgrade` on a simulated plain Kubernetes cluster: the versions the cluster
reports and the upgrade's progress, or the plan made from the live state (SPEC H7: the
newest patch of the current minor first, one minor per step) recorded for the
controller (SPEC H6)."""

from __future__ import annotations

import msgspec

from kupgrade.cluster.kubeadm import image_version, kubelet_of, v
from kupgrade.controllers.kube.record import KubeUpgrade, upgrade_record
from kupgrade.controllers.kube.request import request_upgrade
from kupgrade.plan.steps import step_order
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.platform import Said, UpgradeAsk
from kupgrade.sim.store import Store
from kupgrade.skew.inventory import kube_field
from kupgrade.versions import parse_kube


def request(store: Store, ask: UpgradeAsk) -> Said:
    """Plan the upgrade on the live state and record it for `controller run`; the kubeadm
    binary and flags its control-plane steps run with."""
    tool = {
        "version": str(kube_field(ask.kubeadm, "--kubeadm")) if ask.kubeadm else None,
        "force": ask.force,
        "allowExperimental": ask.allow_experimental,
        "allowRCs": ask.allow_rcs,
    }
    kubeadm = {k: val for k, val in tool.items() if val}
    record = request_upgrade(
        SimCluster(store), str(ask.to), list(ask.available), ask.policy or "auto", kubeadm
    )
    store.commit()
    steps = ", ".join(f"{s.object} {v(s.source)} -> {v(s.to)}" for s in record.steps)
    return Said(
        doc={"target": v(record.target), "steps": msgspec.to_builtins(record.steps)},
        lines=[
            f"Requested upgrade to {v(record.target)}: {steps}; run `kupgrade controller "
            "run` to carry it out."
        ],
    )


def status(store: Store) -> Said:
    """Versions as the cluster reports them, and the upgrade's progress."""
    sim = SimCluster(store)
    record = upgrade_record(sim)
    apiservers = sorted(
        {
            image_version(p)
            for _, p in sim.store.scan("Pod")
            if (p["metadata"].get("labels") or {}).get("component") == "kube-apiserver"
        },
        key=parse_kube,
    )
    kubelets = sorted({kubelet_of(n) for n in sim.list("Node")}, key=parse_kube)
    planes, nodes = [v(a) for a in apiservers], [v(k) for k in kubelets]
    doc = {
        "apiservers": planes,
        "kubelets": nodes,
        "upgrade": msgspec.to_builtins(record) if record is not None else None,
    }
    lines = [f"Control plane at {', '.join(planes)}; kubelets at {', '.join(nodes)}"]
    return Said(doc=doc, lines=lines + (_progress(record) if record is not None else []))


def _progress(record: KubeUpgrade) -> list[str]:
    if record.parallel is not None:
        lines = []
        for step_id, entry in sorted(record.parallel.items(), key=lambda e: step_order(e[0])):
            said = "done" if entry.done is not None else entry.blocked or "under way"
            lines.append(
                f"Fleet step {step_id} ({entry.step.object} to {v(entry.step.to)}): {said}"
            )
        return lines
    done = "completed" if record.completed else f"step {record.index + 1} of {len(record.steps)}"
    lines = [f"Upgrade to {v(record.target)}: {done}"]
    if record.blocked:
        lines.append(f"Blocked: {record.blocked}")
    return lines
