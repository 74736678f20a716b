"""The scheduler's round robin (sim/spread.py) against the walk it replaced: the same node
for every turn, on drawn sequences of node changes, and inside rehearsals (SPEC X2)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.cluster.objects import node
from kupgrade.sim.profile import Budget, Pool, Spec, Workload
from kupgrade.sim.spread import Ring, takes_pods
from kupgrade.sim.world import World
from tests.support.sim import upgrade


def walked(names: list[str], nodes: dict[str, Any], turn: int) -> int | None:
    """The walk from the turn round the pool, node by node (World._place before the ring)."""
    for i in range(len(names)):
        position = (turn + i) % len(names)
        if takes_pods(nodes.get(names[position])):
            return position
    return None


def _node(name: str) -> dict[str, Any]:
    made = node(name, "worker", None, "rendered-worker-1", "2026-01-01T00:00:00Z")
    made["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return made


CHANGES = st.tuples(
    st.sampled_from(["cordon", "uncordon", "not-ready", "ready", "delete", "create", "ask"]),
    st.integers(0, 11),  # a node (names repeat: a name twice in a pool is allowed)
    st.integers(0, 40),  # a turn, also past the pool's end
)


@settings(max_examples=300, deadline=None)
@given(size=st.integers(0, 8), doubled=st.booleans(), changes=st.lists(CHANGES, max_size=60))
def test_the_ring_finds_the_node_the_walk_finds(
    size: int, doubled: bool, changes: list[tuple[str, int, int]]
) -> None:
    names = [f"n{i}" for i in range(size)] + (["n0"] if doubled and size else [])
    nodes: dict[str, Any] = {n: _node(n) for n in names if int(n[1:]) % 3}  # some absent
    ring = Ring(names, nodes.get)
    for what, which, turn in changes:
        name = f"n{which}"
        found = nodes.get(name)
        if what == "ask" and names:
            assert ring.first_from(turn) == walked(names, nodes, turn)
            continue
        if what == "create":
            nodes[name] = _node(name)
        elif what == "delete":
            nodes.pop(name, None)
        elif found is not None and what in ("cordon", "uncordon"):
            found["spec"]["unschedulable"] = what == "cordon"
        elif found is not None:
            found["status"]["conditions"][0]["status"] = "True" if what == "ready" else "False"
        ring.changed(name, nodes.get(name))  # what the store's observer does after a write
    for turn in range(len(names) + 2):
        if names:
            assert ring.first_from(turn) == walked(names, nodes, turn)


ROLLING = Spec(
    pools=[
        Pool("master", 3, max_unavailable=1, zones=["a", "b", "c"]),
        Pool("worker", 9, max_unavailable=3, zones=["a", "b", "c"]),
    ],
    workloads=[
        Workload(f"app-{i}", "shop", 6, pdb=Budget(max_unavailable=1), termination_seconds=20)
        for i in range(6)
    ],
)


def test_every_placement_of_a_rehearsal_is_the_walks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rolling upgrade (three workers cordoned at a time, 36 pods moved about): at each
    placement the ring answers what the node-by-node walk answers on the store as it is."""
    placed: list[tuple[str | None, str | None]] = []
    skipped = 0  # placements that passed a node taking no pods
    place = World._place

    def checked(world: World, workload: Workload) -> str | None:
        names = world.by_role.get(workload.pool, [])
        nodes = {n: world.sim.get("Node", n) for n in names}
        turn = int(world.sim.store.meta(f"turn:{workload.pool}", 0))
        expected = walked(names, copy.deepcopy(nodes), turn) if workload.node is None else None
        got = place(world, workload)
        nonlocal skipped
        skipped += bool(names) and expected != turn % len(names)
        if workload.node is None:
            placed.append((None if expected is None else names[expected], got))
        return got

    monkeypatch.setattr(World, "_place", checked)
    _, outcome = upgrade(tmp_path, ROLLING)
    assert outcome.reason == "completed"
    moved = [p for p in placed if p[1] is not None]
    assert len(moved) > 36  # the first placements and the evicted pods' replacements
    assert skipped > 0
    assert all(expected == got for expected, got in placed), placed
