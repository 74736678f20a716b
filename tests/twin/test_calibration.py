"""Calibrating a twin on its cluster's own history (SPEC X7): each figure measured from the
objects that carry it (ClusterVersion history, ClusterOperator conditions, the
machine-config daemon's and kubelet's Node events, Pod conditions), with the profile's
value kept and named where the history is silent; oc's captured clusters calibrate; and
no input, however broken, raises."""

from __future__ import annotations

import time
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kupgrade.intake import load_yaml, read_file
from kupgrade.sim.profile import (
    DEFAULT_OPERATORS,
    NodePhases,
    Operator,
    Spec,
    Workload,
    check_common,
    operators_of,
)
from kupgrade.twin.calibration import DEFAULT, NO_UPDATE, Calibration, Figure, calibrate, calibrated
from kupgrade.versions.times import parse_rfc3339, rfc3339
from tests.support.conformance import SHARED

EXAMPLES = SHARED / "peer" / "oc" / "status-examples"
CAPTURES = sorted(p.name.removesuffix("-cv.yaml") for p in EXAMPLES.glob("*-cv.yaml"))
needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"{EXAMPLES} not found")

T0 = parse_rfc3339("2024-03-01T10:00:00Z")


def at(seconds: float) -> str:
    """A timestamp `seconds` after T0, as the API writes it."""
    return rfc3339(T0 + seconds)


def entry(state: str, version: str, started: float, completed: float | None) -> dict[str, Any]:
    return {
        "state": state,
        "version": version,
        "image": f"quay.io/openshift-release-dev/ocp-release:{version}-x86_64",
        "verified": True,
        "startedTime": at(started),
        "completionTime": None if completed is None else at(completed),
    }


def clusterversion(*history: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"channel": "stable-4.14", "clusterID": "c0ffee"},
        "status": {"desired": {"version": history[0]["version"]}, "history": list(history)},
    }


def figure(calibration: Calibration, name: str) -> Figure:
    found = calibration.figure(name)
    assert found is not None, name
    return found


# --- cluster update ---------------------------------------------------------------------

HISTORY = (
    entry("Partial", "4.14.12", 9000, None),  # running now
    entry("Completed", "4.14.10", 6000, 6000 + 3100),
    entry("Completed", "4.14.8", 3000, 3000 + 2500),
    entry("Completed", "4.13.30", 1000, 1000 + 4200),
    entry("Completed", "4.13.29", 800, 700),  # a broken clock: ends before it starts
    {"state": "Completed", "version": "4.13.28", "startedTime": at(500)},  # no completionTime
    entry("Completed", "4.13.0", 0, 1900),  # the install
)


def test_the_cluster_update_spans_the_completed_updates() -> None:
    got = figure(calibrate([clusterversion(*HISTORY)], Spec()), "cluster update")
    assert got == Figure(
        "cluster update", (2500.0, 4200.0), True, "3 completed updates in ClusterVersion history", 3
    )


def test_changing_the_history_changes_the_figure() -> None:
    before = figure(calibrate([clusterversion(*HISTORY)], Spec()), "cluster update")
    longer = list(HISTORY)
    longer[1] = entry("Completed", "4.14.10", 6000, 6000 + 7200)
    after = figure(calibrate([clusterversion(*longer)], Spec()), "cluster update")
    assert after.seconds == (2500.0, 7200.0) != before.seconds
    fewer = figure(calibrate([clusterversion(*HISTORY[:2], HISTORY[-1])], Spec()), "cluster update")
    assert fewer.seconds == (3100.0, 3100.0)
    assert fewer.source == "1 completed update in ClusterVersion history"


def test_an_install_alone_stands_in_and_says_so() -> None:
    got = figure(calibrate([clusterversion(HISTORY[0], HISTORY[-1])], Spec()), "cluster update")
    assert got.measured and got.seconds == (1900.0, 1900.0) and got.samples == 1
    assert got.source == "the install in ClusterVersion history (no completed update)"


def test_no_completed_entry_is_no_measurement() -> None:
    for objects in ([], [clusterversion(HISTORY[0])], [{"kind": "ClusterVersion"}]):
        got = figure(calibrate(objects, Spec()), "cluster update")
        assert got == Figure("cluster update", (0.0, 0.0), False, NO_UPDATE, 0)


def test_a_list_is_read_for_its_items() -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [clusterversion(*HISTORY)]}
    assert figure(calibrate([listed], Spec()), "cluster update").samples == 3


# --- operators --------------------------------------------------------------------------


def clusteroperator(name: str, progressing: str, since: float, version: str) -> dict[str, Any]:
    conditions = [
        {"type": "Available", "status": "True", "lastTransitionTime": at(0)},
        {"type": "Progressing", "status": progressing, "lastTransitionTime": at(since)},
        {"type": "Degraded", "status": "False", "lastTransitionTime": at(0)},
    ]
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterOperator",
        "metadata": {"name": name},
        "status": {
            "conditions": conditions,
            "versions": [{"name": "operator", "version": version}],
        },
    }


UPDATE = (
    entry("Completed", "4.14.10", 6000, 6000 + 3600),
    entry("Completed", "4.14.0", 0, 2000),
)
OPERATORS = [
    clusteroperator("etcd", "False", 6000 + 480, "4.14.10"),  # runlevel 10: 8 min from start
    clusteroperator("kube-apiserver", "False", 6000 + 1200, "4.14.10"),  # 20: 12 min after
    clusteroperator("kube-controller-manager", "False", 6000 + 1500, "4.14.10"),  # 25: 5 min
    clusteroperator("kube-scheduler", "False", 6000 + 1380, "4.14.10"),  # 25: 3 min
    clusteroperator("openshift-apiserver", "False", 6000 + 1440, "4.14.10"),  # 30: before kcm
    clusteroperator("authentication", "True", 6000 + 1600, "4.14.0"),  # still rolling out
    clusteroperator("network", "False", 100, "4.14.10"),  # last moved in the install
    clusteroperator("not-in-the-profile", "False", 6000 + 60, "4.14.10"),
]


def test_operator_minutes_follow_progressing_transitions_by_runlevel() -> None:
    got = calibrate([clusterversion(*UPDATE), *OPERATORS], Spec())
    source = "from ClusterOperator/{} Progressing transition in the 4.14.10 update"
    expected = {
        "etcd": 8.0,
        "kube-apiserver": 12.0,
        "kube-controller-manager": 5.0,
        "kube-scheduler": 3.0,
        "openshift-apiserver": 0.5,  # finished before its runlevel could start: the floor
    }
    for name, minutes in expected.items():
        low, high = round(minutes * 60 * 0.8, 1), round(minutes * 60 * 1.2, 1)
        assert figure(got, f"operator {name}") == Figure(
            f"operator {name}", (low, high), True, source.format(name), 1
        )
    for name in ("authentication", "network", "monitoring"):
        op = next(o for o in DEFAULT_OPERATORS if o.name == name)
        assert figure(got, f"operator {name}") == Figure(
            f"operator {name}", (op.minutes[0] * 60, op.minutes[1] * 60), False, DEFAULT, 0
        )
    assert got.figure("operator not-in-the-profile") is None
    names = [f.name for f in got.figures if f.name.startswith("operator ")]
    by_level = sorted(DEFAULT_OPERATORS, key=lambda o: (o.runlevel, o.name))
    assert names == [f"operator {o.name}" for o in by_level]


def test_an_install_does_not_time_operators() -> None:
    got = calibrate([clusterversion(UPDATE[1]), *OPERATORS], Spec())
    assert not any(f.measured for f in got.figures if f.name.startswith("operator "))


def test_the_profiles_own_operators_are_the_ones_timed() -> None:
    spec = Spec(operators=[Operator("etcd", 5, (1, 2)), Operator("custom", 7, (1, 3))])
    objects = [clusterversion(*UPDATE), *OPERATORS, clusteroperator("custom", "False", 6060, "x")]
    got = calibrate(objects, spec)
    assert [f.name for f in got.figures[1:3]] == ["operator etcd", "operator custom"]
    assert figure(got, "operator custom").seconds == (0.5 * 60 * 0.8, 0.5 * 60 * 1.2)
    assert figure(got, "operator etcd").seconds == (384.0, 576.0)


# --- nodes ------------------------------------------------------------------------------


def core_event(node: str, reason: str, first: float, last: float | None = None) -> dict[str, Any]:
    """A core/v1 Event as the machine-config daemon or the kubelet records it."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{node}.{int(first)}", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": node, "uid": node},
        "reason": reason,
        "message": f"{reason} on {node}",
        "source": {"component": "machineconfigdaemon", "host": node},
        "firstTimestamp": at(first),
        "lastTimestamp": at(first if last is None else last),
        "count": 1 if last is None else 2,
        "type": "Normal",
    }


def new_event(node: str, reason: str, when: float) -> dict[str, Any]:
    """An events.k8s.io/v1 Event: `regarding` and a microsecond eventTime."""
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"{node}.{int(when)}", "namespace": "default"},
        "regarding": {"kind": "Node", "name": node},
        "reason": reason,
        "note": reason,
        "eventTime": at(when).replace("Z", ".250000Z"),
        "reportingController": "machineconfigdaemon",
        "type": "Normal",
    }


def node(name: str, ready_since: float) -> dict[str, Any]:
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": at(ready_since)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"conditions": [ready]},
    }


NODE_OBJECTS = [
    # worker-0: the whole story, with the drain and the kubelet's NotReady around it
    core_event("worker-0", "Drain", 0),
    core_event("worker-0", "OSUpdateStarted", 60),
    core_event("worker-0", "OSUpdateStaged", 150),
    core_event("worker-0", "Reboot", 160),
    core_event("worker-0", "NodeNotReady", 170),
    core_event("worker-0", "NodeReady", 160 + 240),
    node("worker-0", 400),
    # worker-1 (events.k8s.io/v1): its NodeReady expired; the Node's Ready condition ends it
    new_event("worker-1", "OSUpdateStarted", 1000),
    new_event("worker-1", "Reboot", 1000 + 130),
    node("worker-1", 1000 + 130 + 300),
    # worker-2: the Reboot event expired: the update ends when the OS was staged
    core_event("worker-2", "OSUpdateStarted", 2000),
    core_event("worker-2", "OSUpdateStaged", 2000 + 80),
    node("worker-2", 0),  # Ready since long before: no reboot to end
    # not a node: the same reasons on a pod say nothing
    {**core_event("pod-x", "Reboot", 5), "involvedObject": {"kind": "Pod", "name": "pod-x"}},
]


def test_node_update_and_reboot_from_daemon_and_kubelet_events() -> None:
    got = calibrate(NODE_OBJECTS, Spec())
    update, reboot = figure(got, "node update"), figure(got, "node reboot")
    # worker-0 100 s (start to Reboot), worker-1 130 s, worker-2 80 s (start to staged)
    assert update.seconds == (80.0, 130.0) and update.samples == 3 and update.measured
    assert update.source == (
        "3 spans of OSUpdateStarted to Reboot (or OSUpdateStaged) in Node events on 3 nodes"
    )
    # worker-0 240 s (Reboot to NodeReady), worker-1 299.75 s (Reboot to Ready condition)
    assert reboot.seconds == (240.0, 299.8) and reboot.samples == 2
    assert (
        reboot.source
        == "2 spans of Reboot to NodeReady (or Ready condition) in Node events on 2 nodes"
    )


def test_a_folded_event_counts_both_occurrences() -> None:
    # Two updates of one node: the recorder folded the identical OSUpdateStarted events
    # into one (count 2); the Reboot events differ by config and stayed apart.
    objects = [
        core_event("worker-0", "OSUpdateStarted", 0, 10_000),
        core_event("worker-0", "Reboot", 90),
        core_event("worker-0", "NodeReady", 90 + 200),
        core_event("worker-0", "Reboot", 10_000 + 120),
        core_event("worker-0", "NodeReady", 10_000 + 120 + 260),
    ]
    got = calibrate(objects, Spec())
    assert figure(got, "node update").seconds == (90.0, 120.0)
    assert figure(got, "node reboot").seconds == (200.0, 260.0)


def test_no_node_events_keeps_the_profiles_phases() -> None:
    spec = Spec(node_phases=NodePhases(update=(30.0, 40.0), reboot=(50.0, 60.0)))
    got = calibrate([node("worker-0", 100)], spec)
    assert figure(got, "node update") == Figure("node update", (30.0, 40.0), False, DEFAULT, 0)
    assert figure(got, "node reboot") == Figure("node reboot", (50.0, 60.0), False, DEFAULT, 0)


# --- pods -------------------------------------------------------------------------------


def pod(
    name: str,
    owner: tuple[str, str] | None,
    scheduled: float | None,
    ready: float,
    *,
    phase: str = "Running",
    ready_status: str = "True",
    namespace: str = "shop",
) -> dict[str, Any]:
    conditions = [
        {"type": "Initialized", "status": "True", "lastTransitionTime": at(0)},
        {"type": "Ready", "status": ready_status, "lastTransitionTime": at(ready)},
        {"type": "ContainersReady", "status": ready_status, "lastTransitionTime": at(ready)},
    ]
    if scheduled is not None:
        conditions.append(
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": at(scheduled)}
        )
    refs = (
        [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "controller": True}]
        if owner
        else []
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "ownerReferences": refs},
        "spec": {"terminationGracePeriodSeconds": 600},  # not history: never read
        "status": {"phase": phase, "conditions": conditions, "startTime": at(7)},
    }


WEB = ("ReplicaSet", "web-5d8f7c9b6d")
PODS = [
    pod("web-5d8f7c9b6d-a1", WEB, 100, 110),  # 10 s
    pod("web-5d8f7c9b6d-b2", WEB, 100, 114),  # 14 s
    pod("web-5d8f7c9b6d-c3", WEB, 100, 190),  # 90 s: a slow one
    pod("web-5d8f7c9b6d-d4", WEB, None, 20),  # no PodScheduled: from startTime, 13 s
    pod("web-5d8f7c9b6d-e5", WEB, 100, 5000, phase="Pending"),
    pod("web-5d8f7c9b6d-f6", WEB, 100, 5000, ready_status="False"),
    pod("web-5d8f7c9b6d-g7", WEB, 300, 200),  # Ready before scheduled: skipped
    pod("db-0", ("StatefulSet", "db"), 0, 45),
    pod("db-1", ("StatefulSet", "db"), 0, 55),
    pod("web-elsewhere", WEB, 0, 1, namespace="other"),
]
WORKLOADS = [
    Workload("web", namespace="shop", start_seconds=5.0),
    Workload("db", namespace="shop", start_seconds=6.0),
    Workload("cache", namespace="shop", start_seconds=7.0),
]


def test_pod_start_up_is_the_median_per_workload() -> None:
    got = calibrate(PODS, Spec(workloads=WORKLOADS))
    web = figure(got, "pod start-up shop/web")
    assert web == Figure(
        "pod start-up shop/web",
        (13.5, 13.5),
        True,
        "median of 4 Running pods (PodScheduled to Ready)",
        4,
    )
    assert figure(got, "pod start-up shop/db").seconds == (50.0, 50.0)
    assert figure(got, "pod start-up shop/cache") == Figure(
        "pod start-up shop/cache", (7.0, 7.0), False, DEFAULT, 0
    )
    names = [f.name for f in got.figures if f.name.startswith("pod ")]
    assert names == ["pod start-up shop/cache", "pod start-up shop/db", "pod start-up shop/web"]


# --- applying the figures ---------------------------------------------------------------


def test_calibrated_applies_measured_figures_and_keeps_the_rest() -> None:
    spec = Spec(workloads=WORKLOADS)
    objects = [clusterversion(*UPDATE), *OPERATORS, *NODE_OBJECTS, *PODS]
    twin = calibrated(spec, calibrate(objects, spec))
    minutes = {o.name: o.minutes for o in operators_of(twin)}
    assert minutes["etcd"] == pytest.approx((6.4, 9.6))
    assert minutes["kube-apiserver"] == pytest.approx((9.6, 14.4))
    for op in DEFAULT_OPERATORS:
        if op.name not in (
            "etcd",
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
            "openshift-apiserver",
        ):
            assert minutes[op.name] == op.minutes
    assert [(o.name, o.runlevel) for o in operators_of(twin)] == [
        (o.name, o.runlevel) for o in DEFAULT_OPERATORS
    ]
    assert twin.node_phases.update == (80.0, 130.0)
    assert twin.node_phases.reboot == (240.0, 299.8)
    assert [w.start_seconds for w in twin.workloads] == [13.5, 50.0, 7.0]
    check_common(twin, "twin")  # still a valid profile
    assert spec.operators is None and spec.workloads[0].start_seconds == 5.0  # a copy
    assert DEFAULT_OPERATORS[0].minutes == (6, 12)


def test_calibrated_without_measurements_is_the_profile() -> None:
    spec = Spec(workloads=WORKLOADS)
    assert calibrated(spec, calibrate([], spec)) == spec
    assert calibrated(spec, calibrate([], spec)).operators is None


def test_to_json_lists_every_figure() -> None:
    got = calibrate([clusterversion(*HISTORY)], Spec()).to_json()
    assert got[0] == {
        "name": "cluster update",
        "seconds": [2500.0, 4200.0],
        "measured": True,
        "source": "3 completed updates in ClusterVersion history",
        "samples": 3,
    }
    assert msgspec.json.decode(msgspec.json.encode(got)) == got
    assert len(got) == 1 + len(DEFAULT_OPERATORS) + 2


# --- oc's captured clusters -------------------------------------------------------------


def captured(name: str) -> list[dict[str, Any]]:
    out = []
    for suffix in ("cv", "co", "node", "mcp"):
        path = EXAMPLES / f"{name}-{suffix}.yaml"
        if path.exists():
            out.append(load_yaml(read_file(path), str(path)))
    return out


@needs_examples
@pytest.mark.parametrize("name", CAPTURES)
def test_captured_clusters_calibrate(name: str) -> None:
    spec = Spec()
    got = calibrate(captured(name), spec)
    update = figure(got, "cluster update")
    assert update.measured and update.samples >= 1  # every capture has a Completed entry
    check_common(calibrated(spec, got), name)


@needs_examples
def test_captured_figures_checked_by_hand() -> None:
    # not-upgrading: only the install, 2023-11-02T12:48:56Z to 13:09:35Z
    alone = figure(calibrate(captured("not-upgrading"), Spec()), "cluster update")
    assert alone.seconds == (1239.0, 1239.0)
    assert alone.source == "the install in ClusterVersion history (no completed update)"
    # the newest update, 4.16.0-ec.3, started 2024-02-27T12:12:27Z and etcd stopped
    # Progressing at 12:20:21Z: 474 s
    name = "4.16.0-ec2-control-plane-updated-pdb-prohibits-draining"
    got = calibrate(captured(name), Spec())
    update = figure(got, "cluster update")
    # 74 Completed entries, the last (4.5.6) the install, left out: 73 updates, of which
    # 4.10.1 took 17 min 19 s and 4.7.9 2 days 6 h 30 min 2 s
    assert update.seconds == (1039.0, 196202.0) and update.samples == 73
    assert update.source == "73 completed updates in ClusterVersion history"
    assert figure(got, "operator etcd").seconds == (round(474 * 0.8, 1), round(474 * 1.2, 1))
    assert figure(got, "operator etcd").source == (
        "from ClusterOperator/etcd Progressing transition in the 4.16.0-ec.3 update"
    )


# --- hostile input ----------------------------------------------------------------------

stamps = st.one_of(
    st.datetimes().map(lambda d: d.isoformat() + "Z"),
    st.sampled_from(
        ["", "Z", "2024-13-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-23:59"]
    ),
    st.integers(),
    st.none(),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8), stamps
)
KEYS = [
    "kind",
    "metadata",
    "name",
    "namespace",
    "status",
    "history",
    "state",
    "startedTime",
    "completionTime",
    "version",
    "conditions",
    "type",
    "lastTransitionTime",
    "involvedObject",
    "regarding",
    "reason",
    "firstTimestamp",
    "lastTimestamp",
    "eventTime",
    "series",
    "lastObservedTime",
    "phase",
    "ownerReferences",
    "controller",
    "startTime",
    "items",
]
VALUES = [
    "ClusterVersion",
    "ClusterOperator",
    "Event",
    "Node",
    "Pod",
    "List",
    "version",
    "Completed",
    "Progressing",
    "False",
    "True",
    "Ready",
    "PodScheduled",
    "Running",
    "ReplicaSet",
    "OSUpdateStarted",
    "OSUpdateStaged",
    "Reboot",
    "NodeReady",
    "etcd",
    "web",
    "shop",
]
json_like = st.recursive(
    st.one_of(scalars, st.sampled_from(VALUES)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=3)), inner, max_size=5),
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(json_like, max_size=6))
def test_arbitrary_objects_never_raise(objects: list[Any]) -> None:
    spec = Spec(workloads=[Workload("web", namespace="shop")])
    got = calibrate(objects, spec)
    assert got == calibrate(objects, spec)  # deterministic
    check_common(calibrated(spec, got), "fuzz")


def corrupt(value: Any, path: list[int], junk: Any) -> Any:
    """`value` with the leaf or branch that `path` picks replaced by `junk`."""
    if not path or not isinstance(value, (dict, list)) or not value:
        return junk
    keys = list(value) if isinstance(value, dict) else list(range(len(value)))
    key = keys[path[0] % len(keys)]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[key] = corrupt(value[key], path[1:], junk)
    return copy


REALISTIC = [clusterversion(*HISTORY), *OPERATORS, *NODE_OBJECTS, *PODS]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.lists(st.integers(0, 50), max_size=7), json_like), min_size=1, max_size=8)
)
def test_realistic_objects_with_broken_fields_never_raise(
    damage: list[tuple[list[int], Any]],
) -> None:
    objects: Any = list(REALISTIC)
    for path, junk in damage:
        objects = corrupt(objects, path, junk)
    spec = Spec(workloads=WORKLOADS)
    check_common(calibrated(spec, calibrate(objects, spec)), "fuzz")


def test_a_large_history_is_read_in_one_pass() -> None:
    events = [
        core_event(f"worker-{n}", reason, n * 1000 + offset)
        for n in range(5000)
        for reason, offset in (("OSUpdateStarted", 0), ("Reboot", 100 + n % 50), ("NodeReady", 400))
    ]
    pods = [pod(f"web-5d8f7c9b6d-{i}", WEB, 0, 10 + i % 7) for i in range(20_000)]
    began = time.perf_counter()
    got = calibrate([*events, *pods], Spec(workloads=WORKLOADS))
    assert time.perf_counter() - began < 20
    assert figure(got, "node update").seconds == (100.0, 149.0)
    assert figure(got, "node update").samples == 5000
    assert figure(got, "pod start-up shop/web").seconds == (13.0, 13.0)
