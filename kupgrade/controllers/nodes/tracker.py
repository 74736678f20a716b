"""A pool's counts and candidates kept up to date node by node.

`pool.candidates` and `pool.pool_status` state the machine-config rules over a whole
list of nodes; run on every change they make a rollout of N nodes cost N² (a 5,000-node
pool changes some node tens of thousands of times). The tracker keeps what those
functions count — unavailable, failing, updated, degraded, candidates in zone order —
and adjusts it for the one node that changed, giving the same answers (a property test
holds it to them).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from kupgrade.cluster import mco
from kupgrade.controllers.nodes import pool as rules


@dataclass(frozen=True)
class _Facts:
    unavailable: bool
    failing: bool
    updated: bool
    ready_updated: bool
    degraded: bool
    candidate: bool
    reason: str


def _order_key(node: rules.Node) -> tuple[int, str, str, str]:
    """zone_order's key, with the name last (zone_order sorts a name-ordered list stably)."""
    meta = node.get("metadata") or {}
    zone = (meta.get("labels") or {}).get(mco.ZONE_LABEL)
    created = rules.sortable_time(str(meta.get("creationTimestamp", "")))
    name = rules.name_of(node)
    return (1, "", created, name) if zone is None else (0, str(zone), created, name)


class PoolTracker:
    def __init__(self, target: str) -> None:
        self.target = target
        self.nodes: dict[str, rules.Node] = {}
        self.facts: dict[str, _Facts] = {}
        self.unavailable = 0
        self.failing_others = 0  # failing and not a candidate
        self.updated = 0
        self.ready_updated = 0
        self.degraded: set[str] = set()
        self.pending: list[tuple[int, str, str, str]] = []  # candidates in zone order

    def retarget(self, target: str) -> None:
        if target == self.target:
            return
        self.target = target
        nodes = list(self.nodes.values())
        for node in nodes:
            self.remove(rules.name_of(node))
        for node in nodes:
            self.put(node)

    def _facts(self, node: rules.Node) -> _Facts:
        updated = rules.is_updated(node, self.target)
        return _Facts(
            unavailable=rules.is_unavailable(node),
            failing=rules.is_failing(node),
            updated=updated,
            ready_updated=updated and rules.is_ready(node),
            degraded=rules.is_degraded(node),
            candidate=rules.is_candidate(node, self.target),
            reason=rules.notes_of(node).get(mco.REASON, ""),
        )

    def _count(self, name: str, node: rules.Node, facts: _Facts, sign: int) -> None:
        self.unavailable += sign * facts.unavailable
        self.failing_others += sign * (facts.failing and not facts.candidate)
        self.updated += sign * facts.updated
        self.ready_updated += sign * facts.ready_updated
        if facts.degraded:
            (self.degraded.add if sign > 0 else self.degraded.discard)(name)
        if facts.candidate:
            key = _order_key(node)
            if sign > 0:
                bisect.insort(self.pending, key)
            else:
                at = bisect.bisect_left(self.pending, key)
                del self.pending[at]

    def put(self, node: rules.Node) -> None:
        name = rules.name_of(node)
        self.remove(name)
        facts = self._facts(node)
        self.nodes[name] = node
        self.facts[name] = facts
        self._count(name, node, facts, +1)

    def remove(self, name: str) -> None:
        facts = self.facts.pop(name, None)
        if facts is not None:
            self._count(name, self.nodes[name], facts, -1)
            del self.nodes[name]

    def candidates(self, limit: int, defer: str | None = None) -> list[str]:
        """The names `rules.candidates(...).targeted` gives for the same nodes."""
        if self.unavailable >= limit:
            return []
        capacity = limit - self.unavailable
        if self.failing_others >= capacity:
            return []
        capacity -= self.failing_others
        # Enough room for all: the pool's own (name) order; else zone order (SPEC E4).
        enough = capacity >= len(self.pending)
        names = [key[3] for key in (self.pending if enough else self.pending[: capacity + 1])]
        if enough:
            names.sort()
        if defer is not None and len(self.pending) > 1 and defer in names:
            names = [n for n in names if n != defer] + [defer]
        return names[:capacity]

    def status(
        self, configuration: str, *, paused: bool = False, render_degraded: str | None = None
    ) -> rules.PoolStatus:
        """What `rules.pool_status` reports for the same nodes."""
        counts = rules.Counts(len(self.nodes), self.updated, self.ready_updated, self.unavailable)
        degraded = [self.nodes[n] for n in sorted(self.degraded)]  # the pool lists nodes by name
        return rules.summarize_pool(
            self.target,
            configuration,
            counts,
            degraded,
            paused=paused,
            render_degraded=render_degraded,
        )
