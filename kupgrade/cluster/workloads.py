"""Workload objects as their controllers keep them: a Deployment's, ReplicaSet's,
DaemonSet's or StatefulSet's status counted from the pods it owns when it is read, and
every owner reference with the uid of the object it names.

The simulator keeps no status on these objects (its world counts pods itself), so the
API and `kupgrade get` read the counts from the pods, in the fields that
`kubectl get` and `kubectl rollout status` read (k8s.io/kubectl pkg/polymorphichelpers
rollout_status.go: observedGeneration, updated, available and ready counts).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from kupgrade.cluster.objects import is_ready_pod, key_of

OWNERS = ("Deployment", "ReplicaSet", "DaemonSet", "StatefulSet")
Key = tuple[str, str, str]  # namespace, owner kind, owner name


def uid_of(obj: dict[str, Any]) -> str:
    """The object's uid: its own, or one made from its key and creation time, stable for
    as long as the object lives (a new object of the same name gets a new one)."""
    meta = obj["metadata"]
    found = meta.get("uid")
    if found:
        return str(found)
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{key_of(obj)}@{meta.get('creationTimestamp', '')}"))


class PodCounts:
    """Pods per owner (all, not terminating, ready) and each Deployment's ReplicaSets."""

    def __init__(self, pods: Iterable[dict[str, Any]], sets: Iterable[dict[str, Any]]) -> None:
        self.pods: Counter[Key] = Counter()
        self.current: Counter[Key] = Counter()
        self.ready: Counter[Key] = Counter()
        self.rs_of: dict[tuple[str, str], list[str]] = {}  # (ns, deployment) -> its sets
        for pod in pods:
            meta = pod["metadata"]
            for ref in meta.get("ownerReferences") or ():
                if ref.get("controller") and ref.get("kind") in OWNERS:
                    key = (meta.get("namespace", ""), ref["kind"], ref.get("name", ""))
                    self.pods[key] += 1
                    self.current[key] += not meta.get("deletionTimestamp")
                    self.ready[key] += is_ready_pod(pod)
        for rs in sets:
            meta = rs["metadata"]
            for ref in meta.get("ownerReferences") or ():
                if ref.get("controller") and ref.get("kind") == "Deployment":
                    where = (meta.get("namespace", ""), ref.get("name", ""))
                    self.rs_of.setdefault(where, []).append(meta["name"])

    def of(self, obj: dict[str, Any]) -> tuple[int, int, int]:
        """(pods, not terminating, ready) of the workload `obj`."""
        namespace, name = obj["metadata"].get("namespace", ""), obj["metadata"]["name"]
        keys = [(namespace, obj["kind"], name)]
        if obj["kind"] == "Deployment":
            keys = [(namespace, "ReplicaSet", rs) for rs in self.rs_of.get((namespace, name), [])]
        return (
            sum(self.pods[k] for k in keys),
            sum(self.current[k] for k in keys),
            sum(self.ready[k] for k in keys),
        )


def workload_status(obj: dict[str, Any], counts: PodCounts) -> dict[str, Any]:
    """The status the workload's controller would write, from its pods."""
    pods, current, ready = counts.of(obj)
    generation = obj["metadata"].get("generation", 1)
    kind = obj["kind"]
    if kind == "DaemonSet":
        return {
            "observedGeneration": generation,
            "desiredNumberScheduled": current,
            "currentNumberScheduled": current,
            "updatedNumberScheduled": current,
            "numberReady": ready,
            "numberAvailable": ready,
            "numberMisscheduled": 0,
            **({"numberUnavailable": current - ready} if current > ready else {}),
        }
    status: dict[str, Any] = {
        "observedGeneration": generation,
        "replicas": pods,
        "readyReplicas": ready,
        "availableReplicas": ready,
    }
    if kind == "ReplicaSet":
        return {**status, "fullyLabeledReplicas": pods}
    status["updatedReplicas"] = current
    if kind == "StatefulSet":
        return {**status, "currentReplicas": current}
    wanted = (obj.get("spec") or {}).get("replicas", 1)
    if wanted > ready:
        status["unavailableReplicas"] = wanted - ready
    stamp = obj["metadata"].get("creationTimestamp", "")
    status["conditions"] = [
        _condition("Available", ready >= wanted, "MinimumReplicasAvailable", stamp),
        _condition("Progressing", True, "NewReplicaSetAvailable", stamp),
    ]
    return status


def _condition(kind: str, holds: bool, reason: str, stamp: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True" if holds else "False",
        "reason": reason if holds else "MinimumReplicasUnavailable",
        "lastTransitionTime": stamp,
        "lastUpdateTime": stamp,
    }


Find = Callable[[str, str, str], dict[str, Any] | None]  # kind, name, namespace


def owner_references(meta: dict[str, Any], find: Find) -> list[dict[str, Any]] | None:
    """The owner references with each owner's uid filled in (kubectl drain, garbage
    collection and `kubectl get -o yaml` read it); None when every one has its uid."""
    refs = meta.get("ownerReferences")
    if not refs or all(ref.get("uid") for ref in refs):
        return None
    namespace = meta.get("namespace", "")
    out = []
    for ref in refs:
        if ref.get("uid"):
            out.append(ref)
            continue
        kind, name = ref.get("kind", ""), ref.get("name", "")
        owner = find(kind, name, "" if kind == "Node" else namespace)
        if owner is None:  # a dangling reference: a uid of its key, stable all the same
            where = {} if kind == "Node" else {"namespace": namespace}
            owner = {"kind": kind, "metadata": {"name": name, **where}}
        out.append({**ref, "uid": uid_of(owner)})
    return out
