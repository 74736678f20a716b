"""The scheduler's round robin over a pool: the first node that takes pods from a turn on.

A replacement pod goes to the pool's next schedulable node after the last one used
(sim/world.py, `World._place`). Walking the pool from the turn to that node passes every
cordoned or rebooting node between: during a rollout of a 5,000-node pool at
maxUnavailable 10% that is a run of up to 500 nodes, walked again for each of the
thousands of evicted pods, and it grew with the square of the pool. A `Ring` keeps the
positions of the nodes that take pods sorted, kept as the store reports each Node's
change, and finds the same node by bisection (SPEC X2: the same simulated result).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from typing import Any


def takes_pods(node: dict[str, Any] | None) -> bool:
    """Whether the scheduler places pods on the node: it exists, is not cordoned and is
    Ready."""
    return (
        node is not None
        and not node["spec"].get("unschedulable")
        and any(
            c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"]
        )
    )


class Ring:
    """A pool's node names in their fixed order, and which of them take pods now."""

    def __init__(self, names: list[str], node: Callable[[str], dict[str, Any] | None]) -> None:
        self.names = names
        self.positions: dict[str, list[int]] = {}
        for position, name in enumerate(names):
            self.positions.setdefault(name, []).append(position)
        self.open = [p for p, name in enumerate(names) if takes_pods(node(name))]

    def changed(self, name: str, node: dict[str, Any] | None) -> None:
        """The store says the node changed (None: it is gone)."""
        ok = takes_pods(node)
        for position in self.positions.get(name, ()):
            i = bisect_left(self.open, position)
            present = i < len(self.open) and self.open[i] == position
            if ok and not present:
                self.open.insert(i, position)
            elif present and not ok:
                del self.open[i]

    def first_from(self, turn: int) -> int | None:
        """The position of the first node that takes pods at `turn` or after it, going
        round past the end (None when no node does)."""
        if not self.open:
            return None
        i = bisect_left(self.open, turn % len(self.names))
        return self.open[i] if i < len(self.open) else self.open[0]
