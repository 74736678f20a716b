"""The workloads of a simulated cluster's profile as pods and budgets, and the profile's
scripted changes as scheduled events: the same for every platform."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from kupgrade.cluster import objects as o
from kupgrade.sim.profile import PodAt, Pool, Spec, Workload, node_names
from kupgrade.sim.store import Store

# The name a twin's pod had in the user's cluster (SPEC X7).
IMPORTED_AS = "kupgrade.io/imported-as"
# Who owns a workload's pod (name, kind): its ReplicaSet, its DaemonSet, nobody (a bare
# pod), or the Node whose kubelet runs the static pod it mirrors.
OWNERS: dict[str, Callable[[str, str], tuple[str, str | None]]] = {
    "Deployment": lambda name, node: (name, "ReplicaSet"),
    "StatefulSet": lambda name, node: (name, "StatefulSet"),
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
        placed = w.pods or _spread(w, nodes[w.pool])
        per_node = w.kind in ("DaemonSet", "StaticPod")
        count = len(placed) if per_node else w.replicas
        _add_owners(store, w, count=count, at=stamp)
        store.set_meta(f"replicas:{w.namespace}/{w.name}", count)
        for i, at in enumerate(placed):
            store.put(_workload_pod(spec, w, i, at, stamp))
        store.set_meta(f"serial:{w.namespace}/{w.name}", len(placed))
        if w.pdb is not None:
            budget = {k: v for k, v in msgspec.to_builtins(w.pdb).items() if v is not None}
            store.put(o.pdb(w.name, w.namespace, w.pod_labels(), budget))


def _spread(w: Workload, pool: list[str]) -> list[PodAt]:
    """Where a profile's workload runs: every replica on its pinned node, or round robin
    over its pool; one pod per node for DaemonSets and static pods."""
    targets = [w.node] if w.node else pool
    count = len(targets) if w.kind in ("DaemonSet", "StaticPod") else w.replicas
    return [PodAt(targets[i % len(targets)]) for i in range(count)]


def _workload_pod(spec: Spec, w: Workload, i: int, at: PodAt, stamp: str) -> o.Obj:
    """Pod `i` of a workload: named `<workload>-<i>` unless its imported name already
    reads as the workload's (the ReplicaSets find a pod's owner by that prefix)."""
    owner, owner_kind = OWNERS[w.kind](w.name, at.node)
    fits = at.name is not None and at.name.rsplit("-", 1)[0] == w.name
    name = at.name if fits and at.name else f"{w.name}-{i:05d}"
    pod = o.pod(
        f"{w.name}-{at.node}" if w.kind == "StaticPod" and at.name is not None else name,
        w.namespace,
        owner=owner,
        owner_kind=owner_kind,
        labels=w.pod_labels(),
        node_name=at.node,
        created=stamp,
    )
    pod["status"]["conditions"][0]["status"] = "True" if at.ready else "False"
    notes = {"kupgrade.io/termination-seconds": str(w.termination_seconds)}
    if at.name is not None:
        notes[IMPORTED_AS] = at.name
    if w.kind == "StaticPod":
        notes[o.MIRROR_ANNOTATION] = f"{w.name}-{at.node}"
    if any(f.pod == f"{w.namespace}/{w.name}" for f in spec.faults):
        notes["kupgrade.io/never-terminates"] = "true"
    pod["metadata"]["annotations"] = notes
    if w.empty_dir:
        pod["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    return pod


def _add_owners(store: Store, w: Workload, *, count: int, at: str) -> None:
    """A Deployment's pods are owned by its ReplicaSet (named as the Deployment here: the
    simulated Deployment never rolls its template), a DaemonSet's or StatefulSet's by
    itself."""
    _put_owners(store, w.kind, w.name, w.namespace, count=count, at=at, labels=w.pod_labels())


def _put_owners(
    store: Store,
    kind: str,
    name: str,
    namespace: str,
    *,
    count: int,
    at: str,
    labels: dict[str, str] | None = None,
) -> None:
    if kind == "Deployment":
        store.put(o.workload_owner(kind, name, namespace, count, created=at, labels=labels))
        store.put(
            o.workload_owner(
                "ReplicaSet", name, namespace, count, created=at, owner=name, labels=labels
            )
        )
    elif kind in ("DaemonSet", "StatefulSet"):
        store.put(o.workload_owner(kind, name, namespace, count, created=at, labels=labels))


def _add_platform_pods(store: Store, spec: Spec, stamp: str, platform: PlatformPods) -> None:
    every = [n for p in spec.pools for n in node_names(p)]
    for namespace, name in platform.daemonsets:
        _put_owners(store, "DaemonSet", name, namespace, count=len(every), at=stamp)
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
