"""The drain controller's policy and the daemon's error states of mco/rollout.yaml
(`drain_policy`, `node_state_errors`; SPEC E3), checked on the simulated cluster.

machine-config-operator @ 7ff337a4: pkg/controller/drain/drain_controller.go (retries,
thresholds, DrainThresholdExceeded / DrainFailed, mcc_drain_err) and pkg/daemon/drain.go,
daemon.go, writer.go (the node's Degraded state and its reason). A PodDisruptionBudget
blocks the only pod of `worker-1` for 75 minutes, past the controller's hour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kupgrade.cluster import mco
from kupgrade.controllers.nodes import controller as drains
from kupgrade.controllers.nodes import pool as mcp
from kupgrade.controllers.nodes.metrics import drain_errors
from kupgrade.sim.create import create_cluster
from kupgrade.sim.loop import Local, Loop
from kupgrade.sim.profile import (
    Budget,
    Change,
    Machine,
    NodePhases,
    NodeTiming,
    Pool,
    Profile,
    Spec,
    Workload,
)
from kupgrade.sim.store import Store
from tests.support.caseuse import case_params, unused
from tests.support.conformance import conformance_cases, need_case
from tests.support.mcokit import node_of
from tests.support.sim import runner as sim_loop

FILE = ("mco", "rollout.yaml")
NODE = "worker-1"
TARGET = "rendered-worker-new"
BLOCKED_MINUTES = 75
Obj = dict[str, Any]


def blocked_drain(root: Path) -> tuple[list[tuple[float, Obj]], list[Obj]]:
    """The node's annotations and its drain metric after every step (minutes since the
    drain was asked for), and the events, for a drain blocked for BLOCKED_MINUTES."""
    spec = Spec(
        pools=[Pool("worker", machines=[Machine(NODE), Machine(f"{NODE}-spare")])],
        workloads=[
            Workload("db", "data", 1, node=NODE, pdb=Budget(min_available=1), termination_seconds=0)
        ],
        node_phases=NodePhases(overrides={NODE: NodeTiming(update=600.0, reboot=600.0)}),
        changes=[
            Change(
                BLOCKED_MINUTES, "PodDisruptionBudget", "db", {"spec": {"minAvailable": 0}}, "data"
            )
        ],
    )
    home = create_cluster(root, "t", Profile(spec=spec))
    store = Store(home / "cluster.db")
    pool = store.get("MachineConfigPool", "worker")
    assert pool is not None
    pool["spec"]["configuration"]["name"] = TARGET
    store.put(pool)
    store.commit()
    runner = sim_loop(home, store, spec)
    t0 = runner.transport.sim.now()
    seen: list[tuple[float, Obj]] = []

    def on_step(r: Loop[Local]) -> None:
        node = r.transport.store.get("Node", NODE)
        assert node is not None
        view = {
            **node["metadata"]["annotations"],
            "unschedulable": bool(node["spec"].get("unschedulable")),
            "mcc_drain_err": NODE in drain_errors(r.transport.sim),
        }
        seen.append(((r.transport.sim.now() - t0) / 60, view))

    assert runner.run(on_step=on_step, max_seconds=6 * 3600.0).reason == "completed"
    events = [
        {**e, "t": (e["at"] - t0) / 60}
        for e in runner.transport.store.events()
        if e["object"] == f"node/{NODE}"
    ]
    return seen, events


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[tuple[float, Obj]], list[Obj]]:
    return blocked_drain(tmp_path_factory.mktemp("drain"))


def _at(seen: list[tuple[float, Obj]], minute: float) -> Obj:
    """The node as the last step at or before `minute` left it."""
    return [view for t, view in seen if t <= minute][-1]


@pytest.mark.parametrize("case", conformance_cases("drain_policy", *FILE))
def test_drain_policy(case: Any, run: tuple[list[tuple[float, Obj]], list[Obj]]) -> None:
    case = need_case(case, *FILE)
    facts = case["facts"]
    seen, events = run
    if "drain_timeout_minutes" in facts:
        assert facts["requeue_after_failure_minutes"] * 60 == drains.RETRY
        assert facts["slow_down_after_minutes"] * 60 == drains.SLOW_AFTER
        assert facts["requeue_after_failure_when_slow_minutes"] * 60 == drains.RETRY_SLOW
        assert facts["drain_timeout_minutes"] * 60 == drains.DRAIN_TIMEOUT
        # The simulated eviction API answers at once, so the drain helper's own 90 s
        # timeout, its 5 s eviction retries, the work queue's 15 retries before it drops
        # a key (the controller never gives up either way) and the cordon backoff have
        # nothing to bound; the eviction rules are drain.yaml's (tests/cluster).
        unused(
            case,
            "facts.drain_helper_timeout_seconds",
            "facts.eviction_retry_seconds",
            "facts.max_retries_before_dropping_key",
            "facts.cordon_uncordon_backoff",
            "facts.eviction",
        )
        rounds = [e["t"] for e in events if e["reason"] == "EvictionBlocked"][:1]
        assert rounds == [0]
    if "threshold_event" in facts:
        _messages(facts, seen, events)


def _template(fact: str) -> tuple[str, str]:
    """'Reason: "text"' -> (reason, text)."""
    reason, text = fact.split(": ", 1)
    return reason, text.strip('"')


def _messages(facts: Obj, seen: list[tuple[float, Obj]], events: list[Obj]) -> None:
    by_reason = {e["reason"]: e for e in events}
    reason, text = _template(facts["threshold_event"])
    said = by_reason[reason]
    head = text.split("<err>")[0]
    assert said["message"].startswith(head) and len(said["message"]) > len(head)
    assert 10 < said["t"] <= 11  # the first retry after ten minutes of failures
    reason, text = _template(facts["timeout_event"])
    said = by_reason[reason]
    assert said["message"] == text.replace("<node>", NODE)
    assert 60 < said["t"] <= 65
    # mcc_drain_err{node} is 1 once the drain has run past the hour, cleared on success.
    assert "mcc_drain_err" in facts["metric"]
    flagged = [t for t, view in seen if view["mcc_drain_err"]]
    assert flagged and 60 < flagged[0] <= 65 and flagged[-1] >= BLOCKED_MINUTES
    drained = next(t for t, v in seen if v[mco.LAST_APPLIED_DRAIN] == f"drain-{TARGET}")
    assert not _at(seen, drained)["mcc_drain_err"]
    assert BLOCKED_MINUTES <= drained <= BLOCKED_MINUTES + 5  # the next slow retry
    # success: lastAppliedDrain=drain-<target> only after the drain, the node cordoned.
    assert facts["success"].startswith("lastAppliedDrain=drain-<target>")
    assert _at(seen, drained)["unschedulable"]
    assert all(v[mco.LAST_APPLIED_DRAIN] != f"drain-{TARGET}" for t, v in seen if t < drained)


# The daemon's errors the simulator reproduces, by the reason they begin with.
SIMULATED = ("failed to drain node",)


# Our own case: an error with every documented effect field, the exact reason included.
OWN_ERROR = {
    "id": "own/state-machine/apply-failure-exact",
    "trigger": "writing files fails",
    "effect": {"state": "Unreconcilable", "reason": 'open "/etc/x": permission denied'},
}


@pytest.mark.parametrize(
    "case", conformance_cases("node_state_errors", *FILE) + case_params([OWN_ERROR])
)
def test_node_state_errors(case: Any, run: tuple[list[tuple[float, Obj]], list[Obj]]) -> None:
    case = need_case(case, *FILE)
    check_error_state(case, run)


def check_error_state(case: Obj, run: tuple[list[tuple[float, Obj]], list[Obj]]) -> None:
    """A node left in the effect's state and reason is a failing, degraded node whose
    reason the pool quotes (status.go); a drain that never finishes produces it on the
    simulator, with the effect's event."""
    unused(case, "trigger")  # prose: how the daemon gets there
    effect = case["effect"]
    state = effect["state"]
    assert state in (mco.DEGRADED, mco.UNRECONCILABLE)
    contains = effect.get("reason_contains")
    # `reason` is either the literal text or, in the public cases, prose about it.
    reason = (
        contains.replace("<node>", NODE)
        if contains
        else str(effect["reason"])
        if "reason" in effect
        else ""
    )
    node = node_of(
        {
            "name": NODE,
            "currentConfig": "rendered-worker-old",
            "desiredConfig": TARGET,
            "state": state,
            "reason": reason,
            "conditions": {"Ready": "True"},
        }
    )
    assert mcp.is_degraded(node) and mcp.is_failing(node) and not mcp.is_unavailable(node)
    status = mcp.pool_status([node], TARGET, "rendered-worker-old")
    assert status.columns()["DEGRADEDMACHINECOUNT"] == 1
    assert status.conditions["NodeDegraded"]["message"].startswith(f"Node {NODE} is reporting: ")
    if contains and contains.startswith(SIMULATED):
        seen, events = run
        degraded = [(t, v) for t, v in seen if v[mco.STATE] == state]
        assert degraded, "the node never reached the effect's state"
        t, view = degraded[0]
        assert 60 <= t <= 61  # the daemon gives up waiting after an hour
        assert reason in view[mco.REASON]
        if "event" in effect:
            said = [e for e in events if e["reason"] == effect["event"]]
            assert said and said[0]["message"] == view[mco.REASON]
        # A Degraded state is not reset by retries; Done clears the reason.
        after = [v for t2, v in seen if t2 >= t and v[mco.STATE] != mco.DONE]
        assert {v[mco.STATE] for v in after} == {state}
        assert _at(seen, 1e9)[mco.REASON] == ""
    else:
        assert "event" not in effect, "an error event the simulator does not reproduce"
