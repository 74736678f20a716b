"""SPEC X1 + X5 as a property: for random small distributed-cloud fleets (user clusters
with lagging worker pools among them) and targets,
whenever the planner returns a plan the rehearsal reaches the target with every recorded
state legal; whenever it refuses, breadth-first search over every order of cluster steps
finds none either."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kupgrade.plan.gdc_fleet import Goal
from kupgrade.sim.fleet.rehearsal import PlanRefusedError, Settings
from kupgrade.skew.fleet import parse_fleet
from kupgrade.skew.gdc import WARNINGS, check_fleet
from tests.plan.test_plan import GDC_VERSIONS, _fewest_gdc_steps, _history
from tests.support.conformance import conformance_doc
from tests.support.fleetkit import control_planes, create, gdc_broken, rehearse, states


@st.composite
def fleets(draw: st.DrawFn) -> tuple[dict[str, Any], str, list[str]]:
    pick = st.sampled_from(GDC_VERSIONS[:5])  # where clusters start
    starts = draw(st.lists(pick, min_size=1, max_size=3))
    # mostly a legal start (the admin at the newest); sometimes any order
    head = max(starts, key=GDC_VERSIONS.index) if draw(st.integers(0, 3)) else starts[0]
    clusters: dict[str, Any] = {"m": {"version": head, "role": "admin"}}
    for i, version in enumerate(starts[1:]):
        clusters[f"u{i}"] = {"version": version, "role": "user", "managed_by": "m"}
        # worker pools at or behind their cluster (a lagging pool is what SPEC G4 limits)
        older = [v for v in GDC_VERSIONS if GDC_VERSIONS.index(v) <= GDC_VERSIONS.index(version)]
        pools = draw(st.lists(st.sampled_from(older), max_size=2))
        if pools:
            clusters[f"u{i}"]["pools"] = {f"p{j}": v for j, v in enumerate(pools)}
    target = draw(st.sampled_from(GDC_VERSIONS[2:]))
    return {"clusters": clusters}, target, draw(st.lists(st.sampled_from(GDC_VERSIONS), max_size=3))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleets())
def test_plans_rehearse_legally_and_refusals_have_no_order(
    example: tuple[dict[str, Any], str, list[str]],
) -> None:
    data, target, available = example
    order = list(conformance_doc("skew", "gdc.yaml")["release_order_synthetic"])
    doc = {**data, "release_order": order, "simulation": {"controlPlanes": 1, "nodesPerPool": 1}}
    fleet = parse_fleet(data, "generated", _history())
    legal = not any(v.id not in WARNINGS for v in check_fleet(fleet))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        create(home, doc)
        try:
            report, events = rehearse(home, Settings(target, available, "gdc", 0))
        except PlanRefusedError:
            fewest = (
                _fewest_gdc_steps(fleet, Goal.of(target, available, fleet.history))
                if legal
                else None
            )
            assert fewest is None
            event("refused")
            return
    event("rehearsed")
    assert report["outcome"] == "completed", report.get("stop")
    for at, state in states(events):
        assert gdc_broken(doc, state) == [], at
    assert control_planes(states(events)[-1][1]) == {target}
