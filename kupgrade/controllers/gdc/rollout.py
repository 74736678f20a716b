"""Node pools rolled node by node, as the distributed-cloud cluster operator does: each
node goes into maintenance mode (tainted, drained), is upgraded, and comes back
(SPEC G6, G11).

The drain follows the *target* release's policy (SPEC G11): from 1.29 pods leave through
the Eviction API, which honours PodDisruptionBudgets; up to 1.28 they are deleted,
budgets ignored (best effort). Either way a node that has drained for more than 20
minutes goes into maintenance anyway (the maintenance-mode page of GDC 1.29 keeps the
timeout; the conformance data's README, note (c), reads it the same way). Worker pools
upgrade `min(concurrentNodes, nodes - minimumAvailable)` nodes at once
(BareMetalParallelUpgradeConfig); control-plane and load-balancer pools one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.disruption import GDC_DRAIN_CAP_MINUTES, gdc_drain_policy
from kupgrade.cluster.drain import evict_round, evictable
from kupgrade.cluster.gdc import (
    MAINTENANCE_TAINT,
    NODE_STATE,
    NODE_VERSION,
    WORKER,
    is_ready,
    pool_role,
)
from kupgrade.cluster.objects import Obj, key_of
from kupgrade.plan.engines import gdc_parallel
from kupgrade.versions import GdcVersion

DESIRED = "kupgrade.io/desired-version"
DRAIN_STARTED = "kupgrade.io/drain-started"
HELD_BY = "kupgrade.io/drain-held-by"  # what the last refusal said (one event per change)
RETRY = 5.0  # seconds between eviction attempts, as kubectl drain waits
CAP = GDC_DRAIN_CAP_MINUTES * 60.0
# A node's upgrade: draining (entering maintenance mode), then in maintenance while its
# job upgrades it, then back (the annotation goes).
DRAINING = "draining"
MAINTENANCE = "maintenance"


def honours_budgets(target: str) -> bool:
    version = GdcVersion.parse(target)
    return bool(gdc_drain_policy((version.major, version.minor))["pdb_honoured"])


def max_parallel(pool: Obj, size: int) -> int:
    """How many of the pool's nodes may be in maintenance at once."""
    if pool_role(pool) != WORKER:
        return 1
    config = ((pool["spec"].get("upgradeStrategy") or {}).get("parallelUpgradeConfig")) or {}
    return int(
        gdc_parallel(
            {
                "pool_nodes": size,
                "concurrentNodes": config.get("concurrentNodes", 1),
                "minimumAvailableNodes": config.get("minimumAvailable", 0),
            }
        )["max_parallel"]
    )


@dataclass
class PoolRollout:
    """One pool's rollout to `target`; `step()` moves every node as far as it can."""

    api: Backend
    pool: Obj
    nodes: list[Obj]
    target: str
    wake: list[float]  # times the controller asks to be woken at

    def step(self) -> bool:
        """Advance the pool; True when every node runs the target and is back.

        Each node's state is read once per step (a 500-node rehearsal steps its pools
        ~90,000 times): advancing a node only ever takes it out of maintenance, and only
        once it runs the target, so the nodes busy after are those busy before that still
        are, and the nodes waiting are the others not yet at the target."""
        states = [_state(n) for n in self.nodes]
        before = [n for n, state in zip(self.nodes, states, strict=True) if state]
        for node in before:
            self._advance(node)
        busy = [n for n in before if _state(n)]
        room = max_parallel(self.pool, len(self.nodes)) - len(busy)
        waiting = [
            n
            for n, state in zip(self.nodes, states, strict=True)
            if not state and _version(n) != self.target
        ]
        for node in waiting[: max(0, room)]:
            self._start(node)
        if waiting and room <= 0 and not busy:
            self._stalled()
        return not waiting and not busy

    # --- one node ---------------------------------------------------------------------

    def _start(self, node: Obj) -> None:
        notes = node["metadata"].setdefault("annotations", {})
        notes[NODE_STATE] = DRAINING
        notes[DRAIN_STARTED] = repr(self.api.now())  # unix seconds, exact: the timeout counts
        notes[DESIRED] = self.target
        node["spec"]["unschedulable"] = True
        taints = node["spec"].setdefault("taints", [])
        if not any(t.get("key") == MAINTENANCE_TAINT["key"] for t in taints):
            taints.append(dict(MAINTENANCE_TAINT))
        self.api.write(node)
        self.api.record(key_of(node), "Drain", f"maintenance mode for {self.target}")
        self._advance(node)

    def _advance(self, node: Obj) -> None:
        state = _state(node)
        if state == DRAINING:
            self._drain(node)
        elif state == MAINTENANCE and _version(node) == self.target and is_ready(node):
            notes = node["metadata"]["annotations"]
            for key in (NODE_STATE, DRAIN_STARTED, HELD_BY):
                notes.pop(key, None)
            node["spec"]["unschedulable"] = False
            node["spec"]["taints"] = [
                t
                for t in node["spec"].get("taints") or []
                if t.get("key") != MAINTENANCE_TAINT["key"]
            ]
            self.api.write(node)
            self.api.record(key_of(node), "Done", f"running {self.target}")

    def _drain(self, node: Obj) -> None:
        """One pass of maintenance mode's drain (SPEC G11)."""
        notes = node["metadata"]["annotations"]
        started = float(notes[DRAIN_STARTED])
        left = evictable(self.api.pods_on(node["metadata"]["name"]), self.api.now())
        waited = self.api.now() - started
        if not left:
            self._drained(node, f"drained in {waited / 60:.1f} min")
            return
        if waited > CAP:
            held = notes.get(HELD_BY) or f"{len(left)} pods had not stopped"
            self.api.record(
                key_of(node),
                "DrainTimeout",
                f"drained for more than {GDC_DRAIN_CAP_MINUTES} minutes ({held}); "
                "the node goes into maintenance anyway",
            )
            self._drained(node, f"gave up after {waited / 60:.1f} min: {held}")
            return
        reason, held = self._evict(left)
        if held and held != notes.get(HELD_BY):
            notes[HELD_BY] = held
            self.api.write(node)
            self.api.record(key_of(node), reason, held)
        self.wake.append(min(self.api.now() + RETRY, started + CAP + 1))

    def _evict(self, pods: list[Obj]) -> tuple[str, str]:
        """Ask every pod still running to leave; what holds the drain up, if anything:
        EvictionBlocked (a budget refused) or DrainWaiting (a pod is still stopping)."""
        done = evict_round(self.api, pods, budgets=honours_budgets(self.target))
        if done.blocked:  # the budget the API names, or its message when it names none
            first = done.blocked[0]
            return "EvictionBlocked", f"{first.pod}: {first.answer.cause or first.answer.message}"
        waiting = f"{key_of(done.terminating[0])} is still terminating" if done.terminating else ""
        return "DrainWaiting", waiting

    def _drained(self, node: Obj, note: str) -> None:
        notes = node["metadata"]["annotations"]
        notes[NODE_STATE] = MAINTENANCE
        self.api.write(node)
        self.api.record(key_of(node), "Drained", note)
        self.api.record(key_of(node), "Upgrade", f"upgrading to {self.target}")

    def _stalled(self) -> None:
        name = self.pool["metadata"]["name"]
        notes = self.pool["metadata"].setdefault("annotations", {})
        if notes.get(HELD_BY) != "stalled":
            notes[HELD_BY] = "stalled"
            self.api.write(self.pool)
            self.api.record(
                f"nodepool/{name}",
                "PoolStalled",
                "minimumAvailable leaves no node to upgrade; lower it in the pool's "
                "upgradeStrategy.parallelUpgradeConfig",
            )


def _state(node: Obj) -> str:
    return str((node["metadata"].get("annotations") or {}).get(NODE_STATE, ""))


def _version(node: Obj) -> str:
    return str((node["metadata"].get("annotations") or {}).get(NODE_VERSION, ""))


def pool_status(nodes: list[Obj], target: str | None) -> dict[str, Any]:
    """A NodePool's status: node counts by state and the versions its nodes run."""
    versions: dict[str, int] = {}
    counts = {
        "readyNodes": 0,
        "reconcilingNodes": 0,
        "stalledNodes": 0,
        "underMaintenanceNodes": 0,
        "unknownNodes": 0,
    }
    for node in nodes:
        version = _version(node)
        versions[version] = versions.get(version, 0) + 1
        state = _state(node)
        if state == MAINTENANCE:
            counts["underMaintenanceNodes"] += 1
        elif state:
            counts["reconcilingNodes"] += 1
        elif is_ready(node):
            counts["readyNodes"] += 1
        else:
            counts["unknownNodes"] += 1
    lowest = min(versions, key=GdcVersion.parse) if versions else ""
    return {
        **counts,
        "anthosBareMetalVersion": lowest,
        "anthosBareMetalVersions": dict(sorted(versions.items())),
        **({"targetVersion": target} if target else {}),
    }
