"""The node controller and the drain controller (SPEC E1-E6).

Pools are handled independently, so they update in parallel (E1). In each pass a pool
targets as many candidates as its capacity allows (E2, E4), and its status is written
as `oc get mcp` shows it (E6). Draining follows the machine-config drain controller:
cordon, evict every pod through the eviction API (PodDisruptionBudgets decide), retry
every minute and every five minutes once it has failed for ten, report DrainFailed after
an hour and keep trying; uncordon when the node's daemon asks for it (E3).
"""

from __future__ import annotations

from typing import Any

from kupgrade.cluster import mco
from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import set_condition
from kupgrade.cluster.objects import key_of, rfc3339
from kupgrade.controllers.nodes import pool as rules
from kupgrade.errors import InputError

RETRY = 60.0
SLOW_AFTER = 600.0
RETRY_SLOW = 300.0
DRAIN_TIMEOUT = 3600.0


def pool_nodes(pool: dict[str, Any], nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    wanted = (pool["spec"].get("nodeSelector") or {}).get("matchLabels") or {}
    return [
        n
        for n in nodes
        if all(n["metadata"].get("labels", {}).get(k) == v for k, v in wanted.items())
    ]


class NodeController:
    def __init__(self, backend: Backend) -> None:
        self.api = backend

    def sync(self) -> None:
        nodes = self.api.list("Node")
        for pool in self.api.list("MachineConfigPool"):
            self._pool(pool, pool_nodes(pool, nodes))
        for node in nodes:
            self._drain(node)

    def _pool(self, pool: dict[str, Any], nodes: list[dict[str, Any]]) -> None:
        spec = pool["spec"]
        target = spec["configuration"]["name"]
        name = pool["metadata"]["name"]
        if not spec.get("paused"):
            try:
                limit = rules.max_unavailable(spec.get("maxUnavailable"), len(nodes), name)
            except InputError as exc:
                self.api.record(key_of(pool), "InvalidMaxUnavailable", exc.message)
                limit = 1
            chosen = rules.candidates(nodes, target, limit)
            for node_name in chosen.targeted:
                node = next(n for n in nodes if n["metadata"]["name"] == node_name)
                node["metadata"]["annotations"][mco.DESIRED] = target
                self.api.write(node)
            if len(chosen.targeted) == 1:
                self.api.record(
                    key_of(pool),
                    "SetDesiredConfig",
                    f"Targeted node {chosen.targeted[0]} to MachineConfig: {target}",
                )
            elif chosen.targeted:
                self.api.record(
                    key_of(pool),
                    "SetDesiredConfig",
                    f"Set target for {len(chosen.targeted)} nodes to MachineConfig: {target}",
                )
        current = (pool.get("status") or {}).get("configuration", {}).get("name", target)
        computed = rules.pool_status(nodes, target, current, paused=bool(spec.get("paused")))
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

    def _drain(self, node: dict[str, Any]) -> None:
        notes = node["metadata"]["annotations"]
        wanted, applied = notes.get(mco.DESIRED_DRAIN), notes.get(mco.LAST_APPLIED_DRAIN)
        if wanted == applied or not wanted:
            return
        name = node["metadata"]["name"]
        if wanted.startswith("uncordon-"):
            node["spec"]["unschedulable"] = False
            notes[mco.LAST_APPLIED_DRAIN] = wanted
            self.api.write(node)
            self.api.record(key_of(node), "Uncordon", "node is schedulable again")
            return
        state = dict(self.api.state(f"drain:{name}") or {})
        now = self.api.now()
        if state.get("for") != wanted:
            state = {"for": wanted, "started": now, "next": now, "failing": None}
            node["spec"]["unschedulable"] = True
            self.api.write(node)
            self.api.record(key_of(node), "Cordon", "cordoned for drain")
        if now < state["next"]:
            return
        blocked: list[str] = []
        remaining = 0
        for pod in self.api.list("Pod"):
            if pod["spec"].get("nodeName") != name:
                continue
            remaining += 1
            if pod["metadata"].get("deletionTimestamp"):
                continue
            answer = self.api.evict(pod)
            if answer.code != 200:
                blocked.append(f"{key_of(pod)}: {answer.message}")
        if remaining == 0:
            notes[mco.LAST_APPLIED_DRAIN] = wanted
            self.api.write(node)
            self.api.record(key_of(node), "Drained", f"drained in {int(now - state['started'])}s")
            self.api.set_state(f"drain:{name}", None)
            return
        if blocked:
            if state["failing"] is None:
                self.api.record(key_of(node), "EvictionBlocked", blocked[0])
            failing = state["failing"] if state["failing"] is not None else now
            state["failing"] = failing
            slow = now - failing >= SLOW_AFTER
            if slow and not state.get("threshold"):
                state["threshold"] = True
                self.api.record(
                    key_of(node),
                    "DrainThresholdExceeded",
                    "Drain failed. Drain has been failing for more than 10 minutes. Waiting 5 minutes then retrying. "
                    f"Error message from drain: {blocked[0]}",
                )
            if now - state["started"] >= DRAIN_TIMEOUT and not state.get("timeout"):
                state["timeout"] = True
                self.api.record(
                    key_of(node),
                    "DrainFailed",
                    f"node {name}: drain exceeded timeout: 1h0m0s. Will continue to retry.",
                )
            state["retry"] = RETRY_SLOW if slow else RETRY
            state["next"] = now + state["retry"]
            state["blocked"] = blocked[:3]
            self.api.wake_at(state["next"])
        else:
            state["next"] = now
        self.api.set_state(f"drain:{name}", state)
