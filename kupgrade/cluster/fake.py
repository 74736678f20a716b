"""A cluster held in memory, behind the `Backend` every controller acts through: the objects
it was given (a capture of a real cluster, a dump of manifests), a clock its owner moves,
evictions answered by the PodDisruptionBudgets as the Eviction API answers, and events,
timers and controller state kept in memory.

`upgrade status --mock-clusterversion` reads a captured cluster through it, as oc reads
its own captures; controllers are unit-tested on it without a simulated cluster (no store,
no world: only what the test puts in and what the controller writes).
"""

from __future__ import annotations

import builtins
import copy
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kupgrade.cluster.backend import Key, Obj, Watch
from kupgrade.cluster.disruption import Answer, budget_status, eviction
from kupgrade.cluster.objects import is_ready_pod, key_of
from kupgrade.cluster.selectors import matches
from kupgrade.versions.times import rfc3339

if TYPE_CHECKING:  # `get nodes` reads through here and imports nothing it does not print
    from kupgrade.cluster.alerts import Alert


def key(obj: Obj) -> Key:
    meta = obj["metadata"]
    return (str(obj["kind"]), str(meta.get("namespace") or ""), str(meta["name"]))


class MemoryBackend:
    """See the module. `changed` says whether anything was written since it was cleared.
    `as_given` lists objects in the order they were given, as oc's mock mode lists a
    capture's (its file order, which a hand-made capture need not keep sorted); otherwise
    in (namespace, name) order, as an API server lists them."""

    def __init__(self, objects: Iterable[Obj] = (), now: float = 0.0, as_given: bool = False):
        self.clock = now
        self.as_given = as_given
        # What the cluster's alerting answered, when the capture holds it (oc's
        # NAME-alerts.json); a text saying why it could not be read; None: not captured.
        self.alerts: list[Alert] | str | None = None
        self.objects: dict[Key, Obj] = {}
        self.events: list[dict[str, Any]] = []
        self.states: dict[str, Any] = {}
        self.timers: list[tuple[float, Key]] = []
        self.changed = False
        self._watches: list[tuple[weakref.ref[Watch], tuple[str, ...]]] = []
        for obj in objects:
            self.objects[key(obj)] = obj

    # --- reading ------------------------------------------------------------------------

    def now(self) -> float:
        return self.clock

    def get(self, kind: str, name: str, namespace: str = "") -> Obj | None:
        return self.objects.get((kind, namespace, name))

    def list(self, kind: str) -> builtins.list[Obj]:
        """Objects of one kind, in (namespace, name) order or as given."""
        if self.as_given:
            return [o for k, o in self.objects.items() if k[0] == kind]
        return [self.objects[k] for k in sorted(k for k in self.objects if k[0] == kind)]

    def pods_on(self, node: str) -> builtins.list[Obj]:
        return [p for p in self.list("Pod") if (p.get("spec") or {}).get("nodeName") == node]

    def watch(self, *kinds: str) -> Watch:
        found = Watch(k for k in self.objects if k[0] in kinds)
        self._watches.append((weakref.ref(found), kinds))
        return found

    # --- writing ------------------------------------------------------------------------

    def apply(self, obj: Obj) -> Obj:
        """Create, or update spec and metadata; the status stays the owner's."""
        existing = self.objects.get(key(obj))
        merged = copy.deepcopy(obj)
        if existing is not None:
            merged["metadata"] = {**existing["metadata"], **obj["metadata"]}
            if "status" in existing:
                merged["status"] = existing["status"]
        else:
            merged["metadata"].setdefault("creationTimestamp", rfc3339(self.clock))
        self.write(merged)
        return merged

    def write(self, obj: Obj) -> None:
        self.objects[key(obj)] = obj
        self._touch(key(obj))

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        """Gone at once, or, while it has finalizers, kept with a deletionTimestamp."""
        found = self.get(kind, name, namespace)
        if found is None:
            return
        if (found.get("metadata") or {}).get("finalizers"):
            found["metadata"].setdefault("deletionTimestamp", rfc3339(self.clock))
            self.write(found)
            return
        del self.objects[(kind, namespace, name)]
        self._touch((kind, namespace, name))

    def evict(self, pod: Obj) -> Answer:
        """The Eviction API's answer from the budgets over the pod; the pod goes on 200."""
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            return Answer(200, "already terminating")
        namespace, labels = meta.get("namespace", ""), meta.get("labels") or {}
        budgets = [
            (b["metadata"]["name"], b["spec"], self._status(b))
            for b in self.list("PodDisruptionBudget")
            if b["metadata"].get("namespace", "") == namespace
            and matches(b["spec"].get("selector"), labels)
        ]
        answer = eviction(is_ready_pod(pod), budgets)
        if answer.code == 200:
            self.delete("Pod", meta["name"], namespace)
            self.record(key_of(pod), "Evicted", f"evicted from {pod['spec'].get('nodeName', '')}")
        return answer

    def _status(self, budget: Obj) -> dict[str, int]:
        namespace = budget["metadata"].get("namespace", "")
        pods = [
            p
            for p in self.list("Pod")
            if p["metadata"].get("namespace", "") == namespace
            and matches(budget["spec"].get("selector"), p["metadata"].get("labels") or {})
        ]
        healthy = sum(
            1 for p in pods if is_ready_pod(p) and not p["metadata"].get("deletionTimestamp")
        )
        return budget_status(budget["spec"], len(pods), healthy)

    # --- time, events and state -----------------------------------------------------------

    def requeue_at(self, at: float, kind: str, name: str, namespace: str = "") -> None:
        self.timers.append((at, (kind, namespace, name)))

    def advance(self, to: float) -> None:
        """Move the clock to `to` (never back); the timers due by then requeue their
        objects to the watchers, as a real API's resync would."""
        self.clock = max(self.clock, to)
        due = [t for t in self.timers if t[0] <= self.clock]
        self.timers = [t for t in self.timers if t[0] > self.clock]
        for _, due_key in sorted(due):
            self._touch(due_key, written=False)

    def record(self, obj: str, reason: str, message: str) -> None:
        self._event("Normal", obj, reason, message)

    def warn(self, obj: str, reason: str, message: str) -> None:
        self._event("Warning", obj, reason, message)

    def _event(self, kind: str, obj: str, reason: str, message: str) -> None:
        self.events.append(
            {"at": self.clock, "kind": kind, "object": obj, "reason": reason, "message": message}
        )

    def state(self, name: str, default: Any = None) -> Any:
        return self.states.get(name, default)

    def set_state(self, name: str, value: Any) -> None:
        if self.states.get(name) != value:
            self.states[name] = value
            self.changed = True

    def _touch(self, changed: Key, *, written: bool = True) -> None:
        self.changed = self.changed or written
        alive = []
        for ref, kinds in self._watches:
            found = ref()
            if found is None:
                continue
            alive.append((ref, kinds))
            if changed[0] in kinds:
                found.add(changed)
        self._watches = alive
