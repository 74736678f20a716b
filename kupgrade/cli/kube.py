"""`cluster create --platform kubernetes` and `upgrade` on a simulated plain Kubernetes
cluster: the profile's shape, the upgrade request (planned from the live state) and its
status as the controller records it (SPEC H6, H7)."""

from __future__ import annotations

from typing import Any

import msgspec

from kupgrade.cli.output import Format, print_json, stdout
from kupgrade.cluster.kubeadm import CONTROL_PLANE_ROLE, image_version, kubelet_of, v
from kupgrade.controllers.kube.controller import PARALLEL, STATE, step_order
from kupgrade.controllers.kube.request import request_upgrade
from kupgrade.errors import InputError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.profile import Spec
from kupgrade.sim.store import Store
from kupgrade.versions import parse_kube


def kube_spec(spec: Spec, control_planes: int | None, *, version_given: bool) -> Spec:
    """--platform kubernetes: a control-plane pool (the profile's master pool, renamed),
    the version given."""
    if spec.platform != "kubernetes":
        if control_planes is not None:
            raise InputError("--control-planes applies to --platform kubernetes",
                             field="--control-planes")  # fmt: skip
        return spec
    if not version_given:
        raise InputError("a Kubernetes cluster needs its version", field="--version",
                         hint="pass --version, e.g. --version v1.30.4")  # fmt: skip
    pools = []
    for given in spec.pools:
        pool = given
        if given.name in ("master", CONTROL_PLANE_ROLE):
            pool = msgspec.structs.replace(given, name=CONTROL_PLANE_ROLE, role=CONTROL_PLANE_ROLE)
            if control_planes is not None:
                pool = msgspec.structs.replace(pool, nodes=control_planes, machines=[], created=[])
        pools.append(pool)
    return msgspec.structs.replace(spec, pools=pools, version=spec.version.lstrip("v"))


def kube_upgrade(
    store: Store, to: str, available: str | None, policy: str, output: Format,
    kubeadm: dict[str, Any] | None = None,
) -> None:  # fmt: skip
    """Plan the upgrade on the live state and record it for `controller run`; `kubeadm`
    names the binary and flags its control-plane steps run with."""
    offered = [a.strip() for a in (available or "").split(",") if a.strip()]
    state = request_upgrade(SimCluster(store), to, offered, policy, kubeadm)
    store.commit()
    if output.data:
        print_json({"target": v(state["target"]), "steps": state["steps"]})
        return
    steps = ", ".join(f"{s['object']} {v(s['from'])} -> {v(s['to'])}" for s in state["steps"])
    stdout.print(f"Requested upgrade to {v(state['target'])}: {steps}; run `kupgrade controller "
                 "run` to carry it out.", highlight=False, markup=False)  # fmt: skip


def kube_status(store: Store, output: Format) -> None:
    """Versions as the cluster reports them, and the upgrade's progress."""
    sim = SimCluster(store)
    state: dict[str, Any] = sim.state(STATE) or {}
    apiservers = sorted({image_version(p) for p in sim.list("Pod")
                         if (p["metadata"].get("labels") or {}).get("component") == "kube-apiserver"},
                        key=parse_kube)  # fmt: skip
    kubelets = sorted({kubelet_of(n) for n in sim.list("Node")}, key=parse_kube)
    planes, nodes = [v(a) for a in apiservers], [v(k) for k in kubelets]
    if output.data:
        print_json({"apiservers": planes, "kubelets": nodes, "upgrade": state or None})
        return
    stdout.print(f"Control plane at {', '.join(planes)}; kubelets at {', '.join(nodes)}",
                 highlight=False, markup=False)  # fmt: skip
    if not state:
        return
    for step_id, entry in sorted(
        (state.get(PARALLEL) or {}).items(), key=lambda e: step_order(e[0])
    ):
        step = entry["step"]
        said = "done" if entry.get("done") is not None else entry.get("blocked") or "under way"
        stdout.print(f"Fleet step {step_id} ({step['object']} to {v(step['to'])}): {said}",
                     highlight=False, markup=False)  # fmt: skip
    if PARALLEL in state:
        return
    done = (
        "completed"
        if state.get("completed")
        else f"step {state['index'] + 1} of {len(state['steps'])}"
    )
    stdout.print(f"Upgrade to {v(state['target'])}: {done}", highlight=False, markup=False)
    if state.get("blocked"):
        stdout.print(f"Blocked: {state['blocked']}", highlight=False, markup=False)
