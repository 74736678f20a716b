"""The rollout timelines of mco/rollout.yaml replayed on the simulated cluster (SPEC E1-E6).

Each node's phases become real simulated behaviour: a pod pinned to the node that takes
`cordon_drain` minutes to terminate, and update/reboot times fixed per node. Pauses,
NotReady spells and blocked evictions are scheduled profile changes. The node and drain
controllers and the node daemons then run unaided on the virtual clock.
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import pytest

from kupgrade.cluster import mco
from kupgrade.controllers.nodes.drains import drain_state
from kupgrade.controllers.nodes.metrics import drain_errors
from kupgrade.controllers.nodes.pool import is_unavailable, is_updated, mcp_columns
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.loop import Local, Loop
from kupgrade.sim.openshift.releases import rendered_config
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
from tests.support.caseuse import case_params, plain, unused
from tests.support.conformance import conformance_cases
from tests.support.sim import runner as sim_loop

OLD = rendered_config("worker", Spec().version)
Obj = dict[str, Any]


def _ready(status: str) -> Obj:
    return {"status": {"conditions": [{"type": "Ready", "status": status}]}}


def _spec(case: Obj) -> Spec:
    pool, nodes = case["input"]["pool"], case["input"]["nodes"]
    name = pool["name"]
    changes = []
    if pool.get("paused_until_minute") is not None:
        changes.append(
            Change(
                pool["paused_until_minute"], "MachineConfigPool", name, {"spec": {"paused": False}}
            )
        )
    for n in nodes:
        if n.get("not_ready_until_minute") is not None:
            changes.append(Change(0, "Node", n["name"], _ready("False")))
            changes.append(Change(n["not_ready_until_minute"], "Node", n["name"], _ready("True")))
    return Spec(
        pools=[
            Pool(
                name,
                machines=[Machine(n["name"], n.get("zone"), n["created"]) for n in nodes],
                max_unavailable=pool.get("max_unavailable"),
                paused=pool.get("paused_until_minute") is not None,
            )
        ],
        workloads=[
            Workload(
                f"pinned-{n['name']}",
                "apps",
                1,
                pool=name,
                node=n["name"],
                termination_seconds=n["phases_minutes"]["cordon_drain"] * 60.0,
            )
            for n in nodes
        ],
        node_phases=NodePhases(
            overrides={
                n["name"]: NodeTiming(
                    update=n["phases_minutes"]["update"] * 60.0,
                    reboot=n["phases_minutes"]["reboot_uncordon"] * 60.0,
                )
                for n in nodes
            }
        ),
        changes=changes,
    )


def _runner(tmp_path: Path, spec: Spec, pool: str, target: str) -> tuple[Loop[Local], float]:
    root = create_cluster(tmp_path, "t", Profile(spec=spec))
    store = Store(root / "cluster.db")
    found = store.get("MachineConfigPool", pool)
    assert found is not None
    found["spec"]["configuration"]["name"] = target  # a new MachineConfig was rendered
    store.put(found)
    store.commit()
    runner = sim_loop(root, store, spec)
    return runner, runner.transport.sim.now()


def _minutes(at: float, t0: float) -> float:
    value = (at - t0) / 60
    return int(value) if value == int(value) else round(value, 3)


def _events(store: Store, t0: float) -> list[Obj]:
    """start/finish events from the daemons' own records: drain requested, done."""
    out: list[Obj] = []
    for e in store.events():
        if not e["object"].startswith("node/"):
            continue
        node, t = e["object"].removeprefix("node/"), _minutes(e["at"], t0)
        if e["reason"] == "Drain":
            if out and out[-1]["event"] == "start" and out[-1]["t"] == t:
                out[-1]["nodes"].append(node)
            else:
                out.append({"t": t, "event": "start", "nodes": [node]})
        elif e["reason"] == "Done":
            out.append({"t": t, "event": "finish", "node": node})
    return out


def _names(current: str) -> dict[str, str]:
    """The simulator's rendered config of the running release under the case's name (the
    target is set by name, so it needs none)."""
    return {OLD: current}


def _named(columns: Obj, current: str) -> Obj:
    names = _names(current)
    return {**columns, "CONFIG": names.get(columns["CONFIG"], columns["CONFIG"])}


@pytest.mark.parametrize(
    "case", conformance_cases("timelines", "mco", "rollout.yaml"), ids=lambda c: c["id"]
)
def test_timeline_replays_on_the_simulator(tmp_path: Path, case: Obj) -> None:
    pool = case["input"]["pool"]
    target = pool["target_config"]
    runner, t0 = _runner(tmp_path, _spec(case), pool["name"], target)
    seen: dict[float, Obj] = {}

    def snapshot(r: Loop[Local]) -> None:
        found = r.transport.store.get("MachineConfigPool", pool["name"])
        assert found is not None
        seen[_minutes(r.transport.sim.now(), t0)] = _named(
            mcp_columns(found), pool["current_config"]
        )

    for action in runner.transport.store.pop_due(t0):
        runner.transport.world.fire(action)
    runner.settle()
    snapshot(runner)
    outcome = runner.run(on_step=snapshot, max_seconds=86400.0)
    assert outcome.reason == "completed"

    expect = case["expect"]
    events = _events(runner.transport.store, t0)
    assert events == expect["events"]
    starts = [n for e in events if e["event"] == "start" for n in e["nodes"]]
    finishes = [e["node"] for e in events if e["event"] == "finish"]
    assert starts == expect["start_order"]
    assert finishes == expect["finish_order"]
    busy, worst = 0, 0
    for e in events:
        busy += len(e["nodes"]) if e["event"] == "start" else -1
        worst = max(worst, busy)
    assert worst == expect["max_unavailable_at_once"]
    for row in expect["pool_after_each_step"]:
        t = row["t"]
        assert seen[t] == {k: v for k, v in row.items() if k != "t"}, f"t={t}"


def _step_view(node: Obj, current: str, target: str) -> Obj:
    names = _names(current)
    notes = node["metadata"]["annotations"]
    annotations = {}
    for key in (mco.CURRENT, mco.DESIRED, mco.STATE, mco.DESIRED_DRAIN, mco.LAST_APPLIED_DRAIN):
        value = notes.get(key, "")
        for old, new in names.items():
            value = value.replace(old, new)
        annotations[key] = value
    annotations[mco.REASON] = notes.get(mco.REASON, "")
    return {
        "annotations": annotations,
        "unschedulable": bool(node["spec"].get("unschedulable")),
        "counts_as_unavailable": is_unavailable(node),
        "counts_as_updated": is_updated(node, target),
    }


@pytest.mark.parametrize(
    "case", conformance_cases("node_state_machine", "mco", "rollout.yaml"), ids=lambda c: c["id"]
)
def test_node_goes_through_the_daemon_state_machine(
    tmp_path: Path, case: Obj, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every state the node object passes through, in order, as the daemon writes it."""
    steps = case["steps"]
    current = steps[0]["annotations"][mco.CURRENT]
    target = next(
        s["annotations"][mco.DESIRED] for s in steps if s["annotations"][mco.DESIRED] != current
    )
    unused(case, "steps[].step", "steps[].actor")  # labels for the reader
    spec = Spec(
        pools=[Pool("worker", machines=[Machine("worker-0")])],
        workloads=[Workload("app", "apps", 1, node="worker-0", termination_seconds=60.0)],
        node_phases=NodePhases(overrides={"worker-0": NodeTiming(update=120.0, reboot=240.0)}),
    )
    runner, _ = _runner(tmp_path, spec, "worker", target)
    states: list[Obj] = [
        _step_view(runner.transport.store.get("Node", "worker-0") or {}, current, target)
    ]
    original = SimCluster.write

    def spy(self: SimCluster, obj: Obj) -> None:
        if obj["kind"] == "Node":
            view = _step_view(copy.deepcopy(obj), current, target)
            if view != states[-1]:
                states.append(view)
        original(self, obj)

    monkeypatch.setattr(SimCluster, "write", spy)
    assert runner.run(max_seconds=3600.0).reason == "completed"
    expected = [
        {
            "annotations": plain(s["annotations"]),
            "unschedulable": s["unschedulable"],
            "counts_as_unavailable": s["counts_as_unavailable"],
            "counts_as_updated": s["counts_as_updated"],
        }
        for s in steps
    ]
    deduped = [s for i, s in enumerate(expected) if i == 0 or s != expected[i - 1]]
    assert [s for s in states if s in deduped] == deduped
    # The only state in between: cordoned while the pods are still leaving, which the
    # case folds into "cordoned-drained" (the cordon is its own write, as in the cluster).
    for before, extra in itertools.pairwise(states):
        if extra not in deduped:
            assert extra == {**before, "unschedulable": True}


# A drain blocked past the drain controller's hour: the fields the README documents for a
# drain timeline (drain_policy and node_state_errors: the daemon's Degraded state and its
# reason, the pool's degraded count, the DrainFailed / FailedToDrain events and the
# mcc_drain_err metric) that no public case reaches yet.
PAST_THE_HOUR: Obj = {
    "id": "own/drain-timeline/pdb-75min",
    "input": {
        "node": "worker-1",
        "drain_requested_at_minute": 0,
        "evictions_blocked_until_minute": 75,
        "update_and_reboot_after_drain_minutes": 20,
    },
    "expect": {
        "checkpoints": [
            {
                "t": 5,
                "draining": True,
                "node_state": "Working",
                "node_reason": "",
                "drain_retry_every_minutes": 1,
                "drain_threshold_event_seen": False,
                "drain_failed_event_seen": False,
                "mcc_drain_err": 0,
                "degraded_machine_count": 0,
                "pool_degraded": False,
            },
            {
                "t": 65,
                "draining": True,
                "node_state": "Degraded",
                "node_reason_contains": "failed to drain node: <node> after 1 hour. Please see "
                "machine-config-controller logs for more information",
                "drain_retry_every_minutes": 5,
                "drain_failed_event_seen": True,
                "failed_to_drain_event_seen": True,
                "events_seen": ["DrainThresholdExceeded", "DrainFailed", "FailedToDrain"],
                "mcc_drain_err": 1,
                "degraded_machine_count": 1,
                "pool_degraded": True,
            },
            # Drained: the metric is cleared, the daemon stays Degraded until Done.
            {
                "t": 90,
                "draining": False,
                "state": "Degraded",  # node_state_errors' names
                "event": "FailedToDrain",
                "mcc_drain_err": 0,
                "degraded_machine_count": 1,
            },
            {
                "t": 130,
                "draining": False,
                "node_state": "Done",
                "node_reason": "",
                "degraded_machine_count": 0,
                "pool_degraded": False,
            },
        ]
    },
}


# A drain asked for at minute 10 (the pool is paused until then): times count from the
# start of the timeline, not from the request.
LATE_REQUEST: Obj = {
    "id": "own/drain-timeline/requested-at-10",
    "input": {
        "node": "worker-1",
        "drain_requested_at_minute": 10,
        "evictions_blocked_until_minute": 30,
        "update_and_reboot_after_drain_minutes": 10,
    },
    "expect": {
        "checkpoints": [
            {"t": 5, "draining": False, "node_state": "Done", "pool_degraded": False},
            {"t": 15, "draining": True, "node_state": "Working", "drain_retry_every_minutes": 1},
            {"t": 25, "draining": True, "drain_retry_every_minutes": 5},
            {"t": 60, "draining": False, "node_state": "Done", "degraded_machine_count": 0},
        ]
    },
}


@pytest.mark.parametrize(
    "case",
    [
        *conformance_cases("drain_timelines", "mco", "rollout.yaml"),
        *case_params([PAST_THE_HOUR, LATE_REQUEST]),
    ],
    ids=lambda c: c["id"],
)
def test_drain_blocked_by_a_budget(tmp_path: Path, case: Obj) -> None:
    inp = case["input"]
    node = inp["node"]
    blocked = inp["evictions_blocked_until_minute"]
    half = inp["update_and_reboot_after_drain_minutes"] * 30.0
    requested = inp["drain_requested_at_minute"]
    # The drain is requested when the node is targeted: a paused pool holds that back.
    held = (
        [Change(requested, "MachineConfigPool", "worker", {"spec": {"paused": False}})]
        if requested
        else []
    )
    spec = Spec(
        pools=[
            Pool(
                "worker",
                machines=[Machine(node), Machine(f"{node}-spare")],
                paused=bool(requested),
            )
        ],
        workloads=[
            Workload("db", "data", 1, node=node, pdb=Budget(min_available=1), termination_seconds=0)
        ],
        node_phases=NodePhases(overrides={node: NodeTiming(update=half, reboot=half)}),
        changes=[
            Change(blocked, "PodDisruptionBudget", "db", {"spec": {"minAvailable": 0}}, "data"),
            *held,
        ],
    )
    runner, t0 = _runner(tmp_path, spec, "worker", "rendered-worker-new")
    checkpoints = {c["t"]: c for c in case["expect"]["checkpoints"]}
    observed: dict[int, Obj] = {}
    last = {"view": _drain_view(runner, node)}

    def on_step(r: Loop[Local]) -> None:
        """The cluster at minute t is what the last step at or before t left."""
        now = _minutes(r.transport.sim.now(), t0)
        for t in checkpoints:
            if t not in observed and now > t:
                observed[t] = last["view"]
        last["view"] = _drain_view(r, node)

    outcome = runner.run(on_step=on_step, max_seconds=6 * 3600.0)
    assert outcome.reason == "completed"
    drains = [
        _minutes(e["at"], t0)
        for e in runner.transport.store.events()
        if e["object"] == f"node/{node}" and e["reason"] == "Drain"
    ]
    assert drains[:1] == [requested]
    for t, view in checkpoints.items():
        got = observed.get(t, last["view"])  # the run ended before t
        for key, value in view.items():
            if key != "t":
                _check_checkpoint(got, key, value, node, t)


# checkpoint `<x>_event_seen` -> the event's reason, where it is not x in CamelCase.
EVENT_REASONS = {"drain_threshold": "DrainThresholdExceeded"}
# node_state_errors' and get_mcp's names for the same things.
ALIASES = {
    "state": "node_state",
    "reason": "node_reason",
    "reason_contains": "node_reason_contains",
    "event": "events_seen",
    "events": "events_seen",
    "DEGRADEDMACHINECOUNT": "degraded_machine_count",
    "degradedMachineCount": "degraded_machine_count",
    "unschedulable": "cordoned",
}


def _check_checkpoint(got: Obj, key: str, want: Any, node: str, t: int) -> None:
    """One documented checkpoint field against the cluster at minute t.

    Reasons may be given whole (`node_reason`) or in part (`node_reason_contains`, with
    the README's `<node>` placeholder); `<x>_event_seen` names an event by its reason
    (x in CamelCase: drain_failed -> DrainFailed, failed_to_drain -> FailedToDrain);
    `events_seen` lists reasons that must all have been recorded by then; the metric
    compares as a number (absent = 0)."""
    where = f"t={t} {key}"
    key = ALIASES.get(key, key)
    if key == "node_reason_contains":
        assert str(want).replace("<node>", node) in got["node_reason"], where
    elif key == "events_seen":
        wanted = [want] if isinstance(want, str) else want
        assert set(wanted) <= got["events"], where
    elif key.endswith("_event_seen"):
        stem = key.removesuffix("_event_seen")
        reason = EVENT_REASONS.get(stem) or "".join(w.title() for w in stem.split("_"))
        assert (reason in got["events"]) == want, where
    elif key == "mcc_drain_err":
        assert got[key] == int(want), where
    else:
        assert key in got, f"{where}: a checkpoint field this test does not know"
        assert got[key] == want, where


def _drain_view(r: Loop[Local], node: str) -> Obj:
    found = r.transport.store.get("Node", node)
    assert found is not None
    notes = found["metadata"]["annotations"]
    drain = drain_state(r.transport.sim, node)
    pool = r.transport.store.get("MachineConfigPool", "worker")
    assert pool is not None
    columns = mcp_columns(pool)
    events = {e["reason"] for e in r.transport.store.events() if e["object"] in (f"node/{node}",)}
    return {
        "draining": notes.get(mco.DESIRED_DRAIN) != notes.get(mco.LAST_APPLIED_DRAIN)
        and str(notes.get(mco.DESIRED_DRAIN, "")).startswith("drain-"),
        "node_state": notes.get(mco.STATE),
        "node_reason": notes.get(mco.REASON, ""),
        "cordoned": bool(found["spec"].get("unschedulable")),
        "drain_retry_every_minutes": (drain.retry if drain and drain.retry else 60.0) / 60,
        "drain_threshold_event_seen": "DrainThresholdExceeded" in events,
        "events": events,
        "mcc_drain_err": int(node in drain_errors(r.transport.sim)),
        "degraded_machine_count": columns["DEGRADEDMACHINECOUNT"],
        "pool_degraded": columns["DEGRADED"] == "True",
    }
