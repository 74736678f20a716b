"""The physics every simulated cluster shares, whatever its platform (SPEC X2): pods
start and stop, ReplicaSets replace evicted pods on other nodes, the profile's scripted
changes happen, and woken objects are handed to their watchers. Each platform's package
adds its own components on top (sim/openshift/world.py, sim/gdc/world.py,
sim/kubernetes/world.py).

Scheduled events are a tagged union (`Event`): each is stored as `[tag, field, ...]` and
carried out by the handler its world's table names. An event with no handler in that
table is an error, not a silent no-op: a schedule written by another kupgrade, or an
event scheduled for the wrong platform, must be seen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Union

import msgspec

from kupgrade.cluster.conditions import set_condition
from kupgrade.cluster.objects import key_of, merge_patch, pod
from kupgrade.errors import KupgradeError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.events import Change, Event, PodGone, PodReady, Wake
from kupgrade.sim.profile import REPLACED_KINDS, Fault, Spec, Workload
from kupgrade.sim.spread import Ring, takes_pods
from kupgrade.versions.times import rfc3339

Handler = Callable[[Any], None]


class UnknownEventError(KupgradeError):
    """The schedule holds an event this cluster's world cannot carry out."""


class World:
    """The shared physics; `pools` names the nodes each profile pool holds, which the
    simulated scheduler places a workload's replacement pods on."""

    def __init__(self, sim: SimCluster, spec: Spec, pools: dict[str, list[str]]) -> None:
        self.sim = sim
        self.spec = spec
        # Only a Deployment's ReplicaSet and a StatefulSet replace their evicted pods;
        # DaemonSet and static pods are never drained, and a bare pod is gone for good.
        self.workloads = {
            (w.namespace, w.name): w for w in spec.workloads if w.kind in REPLACED_KINDS
        }
        self.nodes = sim.watch("Node")
        self.short: set[tuple[str, str]] = set(self.workloads)  # may be missing replicas
        self.starved: set[tuple[str, str]] = set()  # missing replicas and no node for them
        self.alive: set[tuple[str, str, str]] = set()  # pods counted in `live`
        self.live: dict[tuple[str, str], int] = {}  # running (not terminating) pods per owner
        # The ReplicaSets follow every pod change as it happens (as the ledger does), not
        # through a watch: a watch hands over each changed pod once more, sorted, only for
        # the count of running pods per owner that every change already tells.
        for key, found in sim.store.scan("Pod"):
            self._pod_changed(key, found)
        sim.store.observe("Pod", self._pod_changed)
        self.by_role = pools
        self.rings: dict[str, Ring] = {}  # pool -> its nodes that take pods (sim/spread.py)
        sim.store.observe("Node", self._node_changed)
        self.handlers: dict[type[Event], Handler] = {
            Wake: self._on_wake,
            PodGone: self._on_pod_gone,
            PodReady: self._on_pod_ready,
            Change: self._on_change,
        }
        self._union: Any = None

    def fault(self, **match: str) -> Fault | None:
        for fault in self.spec.faults:
            if all(getattr(fault, k) == v for k, v in match.items()):
                return fault
        return None

    def react(self) -> None:
        """What the world does about what the controllers wrote; platforms add theirs."""
        self._replicasets()

    # --- scheduled events ---------------------------------------------------------------

    def schedule(self, at: float, event: Event) -> None:
        self.sim.store.schedule(at, event)

    def fire(self, action: Event | list[Any]) -> None:
        """Carry out one scheduled event: one made in this process, or one read back
        from the store as `[tag, field, ...]`."""
        event = action if isinstance(action, Event) else self._decode(action)
        handler = self.handlers.get(type(event))
        if handler is None:
            raise UnknownEventError(
                f"the schedule of cluster {self.sim.store.meta('name')} holds a "
                f"{type(event).__name__} event, which this cluster's platform does not carry out",
                hint="the cluster was written by another kupgrade: create it again",
            )
        handler(event)

    def _decode(self, action: list[Any]) -> Event:
        if self._union is None:
            self._union = Union[tuple(self.handlers)]  # noqa: UP007 (built at run time)
        try:
            event: Event = msgspec.convert(action, self._union)
        except msgspec.ValidationError as exc:
            raise UnknownEventError(
                f"the schedule of cluster {self.sim.store.meta('name')} holds an event this "
                f"kupgrade cannot carry out: {action!r} ({exc})",
                hint="the cluster was written by another kupgrade: create it again",
            ) from None
        return event

    def _on_wake(self, e: Wake) -> None:
        if e.kind:
            self.sim.store.touch((e.kind, e.namespace, e.name))

    def _on_pod_gone(self, e: PodGone) -> None:
        self.sim.remove("Pod", e.name, e.namespace)

    def _on_pod_ready(self, e: PodReady) -> None:
        found = self.sim.get("Pod", e.name, e.namespace)
        if found is not None and not found["metadata"].get("deletionTimestamp"):
            set_condition(
                found["status"]["conditions"], {"type": "Ready", "status": "True"}, self._stamp()
            )
            self.sim.write(found)

    def _on_change(self, e: Change) -> None:
        found = self.sim.get(e.kind, e.name, e.namespace)
        if found is None:
            self.sim.warn(f"{e.kind.lower()}/{e.name}", "ChangeSkipped", "no such object to patch")
            return
        self.sim.write(merge_patch(found, e.patch))
        self.sim.record(key_of(found), "Changed", f"patched {sorted(e.patch)}")

    # --- shared helpers -------------------------------------------------------------------

    def _stamp(self) -> str:
        return rfc3339(self.sim.now())

    def _timing(self, node: str, phase: str) -> float:
        override = self.spec.node_phases.overrides.get(node)
        if override is not None:
            return float(getattr(override, phase))
        return self.sim.uniform(getattr(self.spec.node_phases, phase))

    def changed_nodes(self) -> list[dict[str, Any]]:
        """Nodes changed since the last look; a change may have made room for the
        replicas that found none."""
        changed = self.nodes.drain()
        if changed:
            self.short |= self.starved
        return [n for key in changed if (n := self.sim.get("Node", key[2])) is not None]

    # --- ReplicaSets ----------------------------------------------------------------------

    def _pod_changed(self, key: tuple[str, str, str], found: dict[str, Any] | None) -> None:
        """A pod that starts or stops running changes what its owner is short of. Every
        change is seen, so a pod created and evicted between two reactions counts too."""
        owner = (key[1], key[2].rsplit("-", 1)[0])
        if owner not in self.workloads:
            return
        alive = found is not None and not found["metadata"].get("deletionTimestamp")
        if alive != (key in self.alive):
            (self.alive.add if alive else self.alive.discard)(key)
            self.live[owner] = self.live.get(owner, 0) + (1 if alive else -1)
            self.short.add(owner)

    def _replicasets(self) -> None:
        """Replace the missing replicas of the owners that may be short of some. One that
        could not be placed is looked at again when nodes change (changed_nodes); until
        then nothing could place it, and its pods becoming ready change nothing either."""
        for owner in sorted(self.short):
            workload = self.workloads[owner]
            missing = workload.replicas - self.live.get(owner, 0)
            while missing > 0 and self._create_pod(workload):
                missing -= 1
            (self.starved.add if missing > 0 else self.starved.discard)(owner)
        self.short.clear()

    def _place(self, workload: Workload) -> str | None:
        """The next schedulable node of the pool, round robin (the scheduler's spreading)."""
        if workload.node is not None:
            return workload.node if takes_pods(self.sim.get("Node", workload.node)) else None
        ring = self._ring(workload.pool)
        key = f"turn:{workload.pool}"
        position = ring.first_from(int(self.sim.store.meta(key, 0)))
        if position is None:
            return None
        self.sim.store.set_meta(key, (position + 1) % len(ring.names))
        return ring.names[position]

    def _ring(self, pool: str) -> Ring:
        """The pool's ring, made on first use."""
        ring = self.rings.get(pool)
        if ring is None:
            ring = self.rings[pool] = Ring(self.by_role.get(pool, []), self._node)
        return ring

    def _node(self, name: str) -> dict[str, Any] | None:
        return self.sim.get("Node", name)

    def _node_changed(self, key: tuple[str, str, str], node: dict[str, Any] | None) -> None:
        for ring in self.rings.values():
            ring.changed(key[2], node)

    def _create_pod(self, workload: Workload) -> bool:
        node_name = self._place(workload)
        if node_name is None:
            return False
        serial = int(self.sim.store.meta(f"serial:{workload.namespace}/{workload.name}", 0))
        self.sim.store.set_meta(f"serial:{workload.namespace}/{workload.name}", serial + 1)
        name = f"{workload.name}-{serial:05d}"
        created = pod(
            name,
            workload.namespace,
            owner=workload.name,
            owner_kind="StatefulSet" if workload.kind == "StatefulSet" else "ReplicaSet",
            labels=workload.pod_labels(),
            node_name=node_name,
            created=self._stamp(),
        )
        notes = {"kupgrade.io/termination-seconds": str(workload.termination_seconds)}
        fault = self.fault(pod=f"{workload.namespace}/{workload.name}")
        if fault is not None:
            notes["kupgrade.io/never-terminates"] = "true"
        created["metadata"]["annotations"] = notes
        self.sim.write(created)
        self.schedule(self.sim.now() + workload.start_seconds, PodReady(workload.namespace, name))
        return True
