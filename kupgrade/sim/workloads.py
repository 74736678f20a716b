"""The workloads of a simulated cluster's profile as pods and budgets, and the profile's
scripted changes as scheduled events: the same for every platform."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from kupgrade.cluster import objects as o
from kupgrade.sim.profile import Spec, node_names
from kupgrade.sim.store import Store

# Who owns a workload's pod (name, kind): its ReplicaSet, its DaemonSet, nobody (a bare
# pod), or the Node whose kubelet runs the static pod it mirrors.
OWNERS: dict[str, Callable[[str, str], tuple[str, str | None]]] = {
    "Deployment": lambda name, node: (name, "ReplicaSet"),
    "DaemonSet": lambda name, node: (name, "DaemonSet"),
    "Pod": lambda name, node: (name, None),
    "StaticPod": lambda name, node: (node, "Node"),
}


def schedule_changes(store: Store, spec: Spec, now: float) -> None:
    for change in spec.changes:
        store.schedule(
            now + change.at_minutes * 60,
            ["change", change.kind, change.name, change.namespace, change.patch],
        )


def add_workloads(store: Store, spec: Spec, stamp: str) -> None:
    nodes = {p.name: node_names(p) for p in spec.pools}
    for w in spec.workloads:
        targets = [w.node] if w.node else nodes[w.pool]
        per_node = w.kind in ("DaemonSet", "StaticPod")
        count = len(targets) if per_node else w.replicas
        store.set_meta(f"replicas:{w.namespace}/{w.name}", count)
        for i in range(count):
            node_name = targets[i % len(targets)]
            owner, owner_kind = OWNERS[w.kind](w.name, node_name)
            pod = o.pod(
                f"{w.name}-{i:05d}",
                w.namespace,
                owner=owner,
                owner_kind=owner_kind,
                labels={"app": w.name},
                node_name=node_name,
                created=stamp,
            )
            pod["status"]["conditions"][0]["status"] = "True"
            pod["metadata"]["annotations"] = {
                "kupgrade.io/termination-seconds": str(w.termination_seconds)
            }
            if w.kind == "StaticPod":
                pod["metadata"]["annotations"][o.MIRROR_ANNOTATION] = f"{w.name}-{node_name}"
            if w.empty_dir:
                pod["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
            if any(f.pod == f"{w.namespace}/{w.name}" for f in spec.faults):
                pod["metadata"]["annotations"]["kupgrade.io/never-terminates"] = "true"
            store.put(pod)
        store.set_meta(f"serial:{w.namespace}/{w.name}", count)
        if w.pdb is not None:
            budget = {k: v for k, v in msgspec.to_builtins(w.pdb).items() if v is not None}
            store.put(o.pdb(w.name, w.namespace, {"app": w.name}, budget))
