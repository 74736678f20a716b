"""The node controller and the drain controller (SPEC E1-E6).

Pools are handled independently, so they update in parallel (E1). In each pass a pool
targets as many candidates as its capacity allows (E2, E4), and its status is written
as `oc get mcp` shows it (E6). Draining follows the machine-config drain controller:
cordon, evict every pod through the eviction API (PodDisruptionBudgets decide), retry
every minute and every five minutes once it has failed for ten, report DrainFailed after
an hour and keep trying; uncordon when the node's daemon asks for it (E3).
"""

from __future__ import annotations

import sys
from typing import Any

from kupgrade.cluster import mco
from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import find, set_condition
from kupgrade.cluster.drain import Flags, cordoned, drain, evict_round, uncordoned
from kupgrade.cluster.objects import key_of
from kupgrade.controllers.nodes import pool as rules
from kupgrade.controllers.nodes.drains import DrainState, drain_state, save_drain
from kupgrade.controllers.nodes.tracker import PoolTracker
from kupgrade.controllers.protocol import Progress
from kupgrade.errors import InputError
from kupgrade.versions.times import rfc3339

RETRY = 60.0
SLOW_AFTER = 600.0
RETRY_SLOW = 300.0
DRAIN_TIMEOUT = 3600.0


def pool_progress(api: Backend) -> list[Progress]:
    """(pool, nodes at the target, nodes) per pool.

    While an update runs, a pool counts towards the release being applied: until the
    machine-config operator renders that release's config for the pool (its rendered
    MachineConfig names the release), none of its nodes is there yet; its
    updatedMachineCount still counts the old config, which would show the bar full
    and then drop to zero when the rollout starts."""
    cv = api.get("ClusterVersion", "version") or {}
    target = str(((cv.get("status") or {}).get("desired") or {}).get("version") or "")
    rows = []
    for pool in api.list("MachineConfigPool"):
        total = int(pool["status"].get("machineCount", 0)) or 1
        done = int(pool["status"].get("updatedMachineCount", 0))
        if target and _rendered_for(api, pool) != target:
            done = 0
        rows.append(Progress(f"pool {pool['metadata']['name']}", done, total))
    return rows


def _rendered_for(api: Backend, pool: dict[str, Any]) -> str | None:
    """The release the pool's wanted config was rendered from."""
    name = ((pool.get("spec") or {}).get("configuration") or {}).get("name")
    config = api.get("MachineConfig", str(name)) if name else None
    notes = ((config or {}).get("metadata") or {}).get("annotations") or {}
    return notes.get(mco.RELEASE_IMAGE_VERSION)


class NodeController:
    """Works from watches, as the machine-config controllers do from informers: each pass
    looks only at the nodes, pools and pods that changed (or asked to be looked at again),
    so a step costs what it changed and a 5,000-node rollout stays linear."""

    def __init__(self, backend: Backend) -> None:
        self.api = backend
        self.changes = backend.watch("Node", "MachineConfigPool")
        self.pod_changes = backend.watch("Pod")
        self.trackers: dict[str, PoolTracker] = {}
        self.pool_of: dict[str, str] = {}  # node -> pool ("" when no pool selects it)
        self.selectors: dict[str, Any] = {}  # pool -> nodeSelector the mapping was built for
        self.pod_node: dict[tuple[str, str, str], str] = {}

    def sync(self) -> None:
        """One pass over what changed; drain retries are queued through the backend."""
        pools, nodes = self._changed_nodes()
        for name in sorted(pools):
            pool = self.api.get("MachineConfigPool", name)
            if pool is not None:
                self._pool(pool)
        for name in sorted(nodes | self._pods_moved()):
            node = self.api.get("Node", name)
            if node is not None:
                self._drain(node)

    def progress(self) -> list[Progress]:
        """Nodes at the target per pool (pool_progress)."""
        return pool_progress(self.api)

    def _changed_nodes(self) -> tuple[set[str], set[str]]:
        """Bring the trackers up to date; the pools and nodes to look at this pass."""
        keys = self.changes.drain()
        pools = {k[2] for k in keys if k[0] == "MachineConfigPool"}
        nodes = {k[2] for k in keys if k[0] == "Node"}
        unknown = any(n not in self.pool_of and self.api.get("Node", n) for n in nodes)
        if unknown or (pools and self._selectors_changed()):
            self._rebuild()
            return set(self.trackers), nodes
        for name in pools:
            pool = self.api.get("MachineConfigPool", name)
            if pool is not None and name in self.trackers:
                self.trackers[name].retarget(pool["spec"]["configuration"]["name"])
        for name in nodes:
            owner = self.pool_of.get(name)
            if not owner:  # "" is a node no pool selects
                continue
            pools.add(owner)
            node = self.api.get("Node", name)
            if node is None:
                self.trackers[owner].remove(name)
            else:
                self.trackers[owner].put(node)
        return pools, nodes

    def _selectors_changed(self) -> bool:
        current = {
            p["metadata"]["name"]: p["spec"].get("nodeSelector")
            for p in self.api.list("MachineConfigPool")
        }
        return current != self.selectors

    def _rebuild(self) -> None:
        pools = self.api.list("MachineConfigPool")
        self.selectors = {p["metadata"]["name"]: p["spec"].get("nodeSelector") for p in pools}
        self.trackers = {
            p["metadata"]["name"]: PoolTracker(p["spec"]["configuration"]["name"]) for p in pools
        }
        self.pool_of = {}
        for node in self.api.list("Node"):
            owner = mco.pool_of(node, pools)
            self.pool_of[node["metadata"]["name"]] = owner
            if owner:
                self.trackers[owner].put(node)

    def _pods_moved(self) -> set[str]:
        """Nodes whose pods changed: a drain may have finished."""
        nodes = set()
        for key in self.pod_changes.drain():
            kind, namespace, name = key
            pod = self.api.get(kind, name, namespace)
            if pod is not None and pod["spec"].get("nodeName"):
                on = pod["spec"]["nodeName"]
                if self.pod_node.get(key) != on:  # one string per node, not per pod
                    self.pod_node[key] = sys.intern(on)
            node = self.pod_node.get(key) if pod is not None else self.pod_node.pop(key, None)
            if node is not None:
                nodes.add(node)
        return nodes

    def _pool(self, pool: dict[str, Any]) -> None:
        spec = pool["spec"]
        target = spec["configuration"]["name"]
        name = pool["metadata"]["name"]
        tracker = self.trackers.setdefault(name, PoolTracker(target))
        tracker.retarget(target)
        if not spec.get("paused"):
            try:
                limit = rules.max_unavailable(spec.get("maxUnavailable"), len(tracker.nodes), name)
            except InputError as exc:
                self.api.record(key_of(pool), "InvalidMaxUnavailable", exc.message)
                limit = 1
            targeted = tracker.candidates(limit)
            for node_name in targeted:
                node = self.api.get("Node", node_name)
                assert node is not None
                node["metadata"]["annotations"][mco.DESIRED] = target
                self.api.write(node)
                tracker.put(node)
            if len(targeted) == 1:
                self.api.record(
                    key_of(pool),
                    "SetDesiredConfig",
                    f"Targeted node {targeted[0]} to MachineConfig: {target}",
                )
            elif targeted:
                self.api.record(
                    key_of(pool),
                    "SetDesiredConfig",
                    f"Set target for {len(targeted)} nodes to MachineConfig: {target}",
                )
        current = (pool.get("status") or {}).get("configuration", {}).get("name", target)
        render = find((pool.get("status") or {}).get("conditions"), "RenderDegraded")
        computed = tracker.status(
            current,
            paused=bool(spec.get("paused")),
            render_degraded=str(render.get("message") or "")
            if render is not None and render.get("status") == "True"
            else None,
        )
        status = dict(pool.get("status") or {})
        new = {**status, **computed.status()}
        conditions = [dict(c) for c in status.get("conditions") or []]
        now = rfc3339(self.api.now())
        for kind in ("Updated", "Updating", "NodeDegraded", "Degraded"):
            set_condition(conditions, {"type": kind, **computed.conditions[kind]}, now)
        new["conditions"] = conditions
        if new != pool.get("status"):
            pool["status"] = new
            self.api.write(pool)

    def _flags(self, node: str) -> Flags:
        pool = self.api.get("MachineConfigPool", self.pool_of.get(node, "")) or {}
        notes = pool.get("metadata", {}).get("annotations") or {}
        return Flags.of(notes.get(mco.DRAIN_FLAGS, mco.DEFAULT_DRAIN_FLAGS).split())

    def _evict(self, node: dict[str, Any], state: DrainState, now: float) -> tuple[list[str], int]:
        """One drain attempt: kubectl drain's filters pick the pods, then each is evicted
        through the eviction API. Returns what blocked it and how many pods must still go."""
        name = node["metadata"]["name"]
        on_node = self.api.pods_on(name)
        decision, going = drain(on_node, self._flags(name), now)
        warned = set(state.warned)
        for message, names in decision.warnings.items():
            if message not in warned:
                warned.add(message)
                self.api.record(key_of(node), "DrainWarning", f"{message}: {', '.join(names)}")
        state.warned = sorted(warned)
        if decision.errors:
            # kubectl refuses the whole drain before evicting anything.
            return [f"{m}: {', '.join(p)}" for m, p in decision.errors.items()], len(on_node)
        # A terminating pod counts until it is gone, whichever filter it passed.
        going += [p for p in on_node if p["metadata"].get("deletionTimestamp")]
        done = evict_round(self.api, going)
        return [str(b) for b in done.blocked], done.left

    def _drain(self, node: dict[str, Any]) -> None:
        notes = node["metadata"]["annotations"]
        wanted, applied = notes.get(mco.DESIRED_DRAIN), notes.get(mco.LAST_APPLIED_DRAIN)
        if wanted == applied or not wanted:
            return
        name = node["metadata"]["name"]
        if wanted.startswith("uncordon-"):
            node = uncordoned(node)
            node["metadata"]["annotations"][mco.LAST_APPLIED_DRAIN] = wanted
            self.api.write(node)
            self.api.record(key_of(node), "Uncordon", "node is schedulable again")
            return
        state = drain_state(self.api, name)
        now = self.api.now()
        if state is None or state.request != wanted:
            state = DrainState(request=wanted, started=now, next=now)
            node = cordoned(node)
            notes = node["metadata"]["annotations"]
            self.api.write(node)
            self.api.record(key_of(node), "Cordon", "cordoned for drain")
        if now < state.next:
            return
        blocked, remaining = self._evict(node, state, now)
        if remaining == 0:
            notes[mco.LAST_APPLIED_DRAIN] = wanted
            self.api.write(node)
            self.api.record(key_of(node), "Drained", f"drained in {int(now - state.started)}s")
            save_drain(self.api, name, None)
            return
        if blocked:
            if state.failing is None:
                self.api.record(key_of(node), "EvictionBlocked", blocked[0])
                state.failing = now
            # drain_controller.go drainNode: both thresholds count from the start of the
            # drain (its ongoingDrains entry) and are exceeded only strictly.
            slow = now - state.started > SLOW_AFTER
            if slow and not state.threshold:
                state.threshold = True
                self.api.record(
                    key_of(node),
                    "DrainThresholdExceeded",
                    "Drain failed. Drain has been failing for more than 10 minutes. Waiting 5 minutes then retrying. "
                    f"Error message from drain: {blocked[0]}",
                )
            if now - state.started > DRAIN_TIMEOUT and not state.timeout:
                state.timeout = True
                self.api.record(
                    key_of(node),
                    "DrainFailed",
                    f"node {name}: drain exceeded timeout: 1h0m0s. Will continue to retry.",
                )
            state.retry = RETRY_SLOW if slow else RETRY
            state.next = now + state.retry
            state.blocked = blocked[:3]
            self.api.requeue_at(state.next, "Node", name)
        else:
            state.next = now
        save_drain(self.api, name, state)
