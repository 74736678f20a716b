"""The workloads of a simulated cluster's profile as pods and budgets, and the profile's
scripted changes as scheduled events: the same for every platform."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from kupgrade.cluster import objects as o
from kupgrade.sim.profile import Pool, Spec, node_names
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


@dataclass(frozen=True)
class PlatformPods:
    """The pods a fresh cluster of a platform runs before anyone deploys anything: its
    DaemonSets on every node (namespace, name) and its control plane's static pods on the
    control-plane nodes (namespace, component; mirrored as `component-node`). Neither is
    ever drained (kubectl drain skips both), so they change no rehearsal's timing."""

    daemonsets: tuple[tuple[str, str], ...]
    static: tuple[tuple[str, str], ...]
    control_plane: Callable[[Pool], bool]


def add_workloads(
    store: Store, spec: Spec, stamp: str, platform: PlatformPods | None = None
) -> None:
    """The profile's workloads, with their owners as objects (Deployment and ReplicaSet,
    DaemonSet), and the platform's own pods unless the profile leaves them out."""
    nodes = {p.name: node_names(p) for p in spec.pools}
    if platform is not None and spec.platform_pods:
        _add_platform_pods(store, spec, stamp, platform)
    for w in spec.workloads:
        targets = [w.node] if w.node else nodes[w.pool]
        per_node = w.kind in ("DaemonSet", "StaticPod")
        count = len(targets) if per_node else w.replicas
        _add_owners(store, w.kind, w.name, w.namespace, count=count, at=stamp)
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


def _add_owners(store: Store, kind: str, name: str, namespace: str, *, count: int, at: str) -> None:
    """A Deployment's pods are owned by its ReplicaSet (named as the Deployment here: the
    simulated Deployment never rolls its template), a DaemonSet's by itself."""
    if kind == "Deployment":
        store.put(o.workload_owner("Deployment", name, namespace, count, created=at))
        store.put(o.workload_owner("ReplicaSet", name, namespace, count, created=at, owner=name))
    elif kind == "DaemonSet":
        store.put(o.workload_owner("DaemonSet", name, namespace, count, created=at))


def _add_platform_pods(store: Store, spec: Spec, stamp: str, platform: PlatformPods) -> None:
    every = [n for p in spec.pools for n in node_names(p)]
    for namespace, name in platform.daemonsets:
        _add_owners(store, "DaemonSet", name, namespace, count=len(every), at=stamp)
        for i, node in enumerate(every):
            pod = _running(f"{name}-{i:05d}", namespace, name, "DaemonSet", node=node, at=stamp)
            store.put(pod)
    masters = [n for p in spec.pools if platform.control_plane(p) for n in node_names(p)]
    for namespace, component in platform.static:
        for node in masters:
            mirror = _running(
                f"{component}-{node}", namespace, component, "Node", node=node, at=stamp
            )
            mirror["metadata"]["annotations"] = {o.MIRROR_ANNOTATION: f"{component}-{node}"}
            store.put(mirror)


def _running(name: str, namespace: str, app: str, owner_kind: str, *, node: str, at: str) -> o.Obj:
    """A ready platform pod of `app` on `node`, owned by its DaemonSet or (a mirror pod)
    by the node."""
    owner = node if owner_kind == "Node" else app
    pod = o.pod(
        name,
        namespace,
        owner=owner,
        owner_kind=owner_kind,
        labels={"app": app},
        node_name=node,
        created=at,
    )
    pod["status"]["conditions"][0]["status"] = "True"
    return pod
