"""The live document's reading of events, on drawn sequences (hypothesis): a node's phase
is the one its last lifecycle event begins, since the upgrade started; a drain is shown
held by a budget only while it drains, after its last refusal, and while that budget
still allows no disruption."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.sim.openshift.platform import OPENSHIFT
from kupgrade.views.live import HOLDS, PHASE_OF, _pools

REFUSAL = (
    "pod/{ns}/web-0: Cannot evict pod as it would violate the pod's disruption budget. "
    "The disruption budget {name} needs 3 healthy pods and has 3 currently"
)
REASONS = [*PHASE_OF, "Evicted", "Rendered", "SetDesiredConfig"]


def _node(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"node-role.kubernetes.io/worker": ""}},
        "spec": {},
        "status": {
            "nodeInfo": {"kubeletVersion": "v1.27.0"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


events = st.lists(
    st.tuples(st.floats(0, 100), st.sampled_from(REASONS), st.sampled_from(["shop", "data"])),
    max_size=30,
)


@given(events, st.floats(0, 100), st.booleans())
def test_a_nodes_phase_is_its_last_lifecycle_events(
    drawn: list[tuple[float, str, str]], since: float, allowed: bool
) -> None:
    log = sorted(
        (
            {
                "at": at,
                "kind": "Normal",
                "object": "node/w-0",
                "reason": reason,
                "message": REFUSAL.format(ns=ns, name="web") if reason in HOLDS else reason,
            }
            for at, reason, ns in drawn
        ),
        key=lambda e: e["at"],
    )
    budgets = {"shop/web": int(allowed), "data/web": int(allowed)}
    (pool,) = _pools([_node("w-0")], log, since, budgets, OPENSHIFT.pool_of)
    (row,) = pool["nodes"]
    seen = [e for e in log if e["at"] >= since and e["reason"] in PHASE_OF]
    assert row["phase"] == (PHASE_OF[seen[-1]["reason"]] if seen else "pending")
    assert pool["counts"][row["phase"]] == 1 and sum(pool["counts"].values()) == 1
    drains = [i for i, e in enumerate(seen) if e["reason"] == "Drain"]
    holds = [e for e in seen[drains[-1] if drains else 0 :] if e["reason"] in HOLDS]
    if row["phase"] != "draining" or not holds:
        assert "blockedBy" not in row
    else:
        held = row["blockedBy"]
        namespace = held["pod"].split("/")[0]
        assert held["budget"] == f"{namespace}/web"
        assert held["holding"] is (not allowed)
        assert held["message"] == holds[-1]["message"]
