"""The simulated cluster's API: objects in the store, a virtual clock, evictions that
honour PodDisruptionBudgets, and a seeded random source that survives restarts."""

from __future__ import annotations

import builtins
import random
from typing import Any

from kupgrade.cluster.backend import Watch
from kupgrade.cluster.disruption import Answer, eviction
from kupgrade.cluster.objects import applies_nothing, is_ready_pod, key_of
from kupgrade.sim.budgets import ledger
from kupgrade.sim.events import PodGone, Wake
from kupgrade.sim.store import Obj, Store
from kupgrade.versions.times import rfc3339


def _pod_node(pod: Obj) -> list[str]:
    node = pod["spec"].get("nodeName")
    return [node] if node else []


class SimCluster:
    """The Backend of a simulated cluster (see kupgrade.cluster.backend)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.rng = random.Random()
        state = store.meta("rng")
        if state is not None:
            self.rng.setstate((state[0], tuple(state[1]), state[2]))
        else:
            self.rng.seed(int(store.meta("seed", 1)))
        self.changed = False
        store.index("Pod", "node", _pod_node)
        # Budget status as the disruption controller publishes it, kept as pods change.
        self.budgets = ledger(store)

    # --- Backend ------------------------------------------------------------------------

    def now(self) -> float:
        return float(self.store.meta("now", 0.0))

    def get(self, kind: str, name: str, namespace: str = "") -> Obj | None:
        return self.store.get(kind, name, namespace)

    def list(self, kind: str) -> builtins.list[Obj]:
        return self.store.list(kind)

    def apply(self, obj: Obj) -> Obj:
        meta = obj["metadata"]
        existing = self.store.get(obj["kind"], meta["name"], meta.get("namespace", ""))
        merged = dict(obj)
        if existing is not None:
            if "status" in existing:
                merged["status"] = existing["status"]
            if applies_nothing(existing, merged):
                return existing
            merged["metadata"] = {**existing["metadata"], **meta}
        else:
            merged["metadata"] = {**meta, "creationTimestamp": rfc3339(self.now())}
            if obj["kind"] == "ClusterOperator":
                merged["status"] = {"conditions": [], "versions": []}
        self.write(merged)
        return merged

    def write(self, obj: Obj) -> None:
        self.store.put(obj)
        self.changed = True

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        found = self.store.get(kind, name, namespace)
        if found is not None and kind == "Pod":
            # A pod is deleted gracefully: terminating now, gone after its grace period
            # (never, for a pod that does not stop), whatever budget covers it.
            if not found["metadata"].get("deletionTimestamp"):
                self._terminate(found)
                self.record(
                    key_of(found), "Deleted", f"deleted from {found['spec'].get('nodeName', '')}"
                )
            return
        self.remove(kind, name, namespace, found)

    def remove(self, kind: str, name: str, namespace: str = "", found: Obj | None = None) -> None:
        """The object leaves the store (a pod whose grace period ended, or a delete)."""
        found = found or self.store.get(kind, name, namespace)
        if found is not None and (found.get("metadata") or {}).get("finalizers"):
            # The API server keeps an object with finalizers until they are removed.
            if not found["metadata"].get("deletionTimestamp"):
                marked = {**found, "metadata": {**found["metadata"]}}
                marked["metadata"]["deletionTimestamp"] = rfc3339(self.now())
                self.write(marked)
            return
        self.store.delete(kind, name, namespace)
        self.changed = True

    def watch(self, *kinds: str) -> Watch:
        return self.store.watch(*kinds)

    def pods_on(self, node: str) -> builtins.list[Obj]:
        return self.store.lookup("Pod", "node", node)

    def evict(self, pod: Obj, *, dry: bool = False) -> Answer:
        """The Eviction API's answer for `pod`; unless `dry`, the pod starts terminating."""
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            return Answer(200, "already terminating")
        answer = eviction(is_ready_pod(pod), self.budgets.weighed(pod))
        if answer.code != 200:
            return answer
        if dry:
            return Answer(200, "would be evicted")
        self._terminate(pod)
        self.record(key_of(pod), "Evicted", f"evicted from {pod['spec'].get('nodeName', '')}")
        return Answer(200, "evicted")

    def _terminate(self, pod: Obj) -> None:
        """Mark a pod terminating; the kubelet removes it after its grace period."""
        meta = pod["metadata"]
        meta["deletionTimestamp"] = rfc3339(self.now())
        self.write(pod)
        grace = float(meta.get("annotations", {}).get("kupgrade.io/termination-seconds", 30))
        if meta.get("annotations", {}).get("kupgrade.io/never-terminates") != "true":
            self.store.schedule(
                self.now() + grace, PodGone(meta.get("namespace", ""), meta["name"])
            )

    def budgets_for(self, pod: Obj) -> builtins.list[Obj]:
        """The PodDisruptionBudgets whose selector matches the pod."""
        return self.budgets.budgets_for(pod)

    def budget(self, pdb: Obj) -> dict[str, Any]:
        return self.budgets.status(pdb)

    def requeue_at(self, at: float, kind: str, name: str, namespace: str = "") -> None:
        self.store.schedule(at, Wake(kind, namespace, name))

    def record(self, obj: str, reason: str, message: str) -> None:
        self.store.event(self.now(), "Normal", obj, reason, message)

    def warn(self, obj: str, reason: str, message: str) -> None:
        self.store.event(self.now(), "Warning", obj, reason, message)

    def state(self, key: str, default: Any = None) -> Any:
        return self.store.meta(f"state:{key}", default)

    def set_state(self, key: str, value: Any) -> None:
        if self.store.meta(f"state:{key}") != value:
            self.store.set_meta(f"state:{key}", value)
            self.changed = True

    # --- the simulator's own bookkeeping --------------------------------------------------

    def save_rng(self) -> None:
        version, internal, gauss = self.rng.getstate()
        self.store.set_meta("rng", [version, list(internal), gauss])

    def uniform(self, bounds: tuple[float, float]) -> float:
        low, high = bounds
        return low if high <= low else self.rng.uniform(low, high)
