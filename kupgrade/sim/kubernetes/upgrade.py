"""`kupgrade upgrade` on a simulated plain Kubernetes cluster: the versions the cluster
reports and the upgrade's progress, or the plan made from the live state (SPEC H7: the
newest patch of the current minor first, one minor per step) recorded for the
controller (SPEC H6)."""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.kubeadm import image_version, kubelet_of, v
from kupgrade.controllers.kube.controller import PARALLEL, STATE, step_order
from kupgrade.controllers.kube.request import request_upgrade
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
    state = request_upgrade(
        SimCluster(store), str(ask.to), list(ask.available), ask.policy or "auto", kubeadm
    )
    store.commit()
    steps = ", ".join(f"{s['object']} {v(s['from'])} -> {v(s['to'])}" for s in state["steps"])
    return Said(
        doc={"target": v(state["target"]), "steps": state["steps"]},
        lines=[
            f"Requested upgrade to {v(state['target'])}: {steps}; run `kupgrade controller "
            "run` to carry it out."
        ],
    )


def status(store: Store) -> Said:
    """Versions as the cluster reports them, and the upgrade's progress."""
    sim = SimCluster(store)
    state: dict[str, Any] = sim.state(STATE) or {}
    apiservers = sorted(
        {
            image_version(p)
            for p in sim.list("Pod")
            if (p["metadata"].get("labels") or {}).get("component") == "kube-apiserver"
        },
        key=parse_kube,
    )
    kubelets = sorted({kubelet_of(n) for n in sim.list("Node")}, key=parse_kube)
    planes, nodes = [v(a) for a in apiservers], [v(k) for k in kubelets]
    doc = {"apiservers": planes, "kubelets": nodes, "upgrade": state or None}
    lines = [f"Control plane at {', '.join(planes)}; kubelets at {', '.join(nodes)}"]
    return Said(doc=doc, lines=lines + (_progress(state) if state else []))


def _progress(state: dict[str, Any]) -> list[str]:
    entries = sorted((state.get(PARALLEL) or {}).items(), key=lambda e: step_order(e[0]))
    lines = []
    for step_id, entry in entries:
        step = entry["step"]
        said = "done" if entry.get("done") is not None else entry.get("blocked") or "under way"
        lines.append(f"Fleet step {step_id} ({step['object']} to {v(step['to'])}): {said}")
    if PARALLEL in state:
        return lines
    done = (
        "completed"
        if state.get("completed")
        else f"step {state['index'] + 1} of {len(state['steps'])}"
    )
    lines.append(f"Upgrade to {v(state['target'])}: {done}")
    if state.get("blocked"):
        lines.append(f"Blocked: {state['blocked']}")
    return lines
