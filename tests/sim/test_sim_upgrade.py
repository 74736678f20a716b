"""A simulated cluster upgraded by the version and node controllers (SPEC C, D, E, X2, X3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kupgrade.cluster.conditions import find
from kupgrade.cluster.objects import merge_patch
from kupgrade.controllers.version.progress import runlevel_rows
from kupgrade.controllers.version.record import version_state
from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.profile import (
    Budget,
    Fault,
    Operator,
    Pool,
    Spec,
    Workload,
    operators_of,
)
from kupgrade.sim.store import Store
from tests.support.sim import TARGET, runner, start, upgrade

SMALL = Spec(
    pools=[
        Pool("master", 3, max_unavailable=1, zones=["a", "b", "c"]),
        Pool("worker", 4, max_unavailable=2),
    ],
    workloads=[Workload("web", "shop", 4, pdb=Budget(min_available=3), termination_seconds=20)],
)


def test_upgrade_completes_in_runlevel_order(tmp_path: Path) -> None:
    store, outcome = upgrade(tmp_path, SMALL)
    assert outcome.reason == "completed"
    cv = store.get("ClusterVersion", "version")
    assert cv is not None
    history = cv["status"]["history"]
    assert [(h["state"], h["version"]) for h in history] == [
        ("Completed", TARGET),
        ("Completed", "4.13.40"),
    ]
    assert (
        find(cv["status"]["conditions"], "Progressing")["message"] == f"Cluster version is {TARGET}"
    )  # type: ignore[index]
    for co in store.list("ClusterOperator"):
        assert co["status"]["versions"] == [{"name": "operator", "version": TARGET}]
    for node in store.list("Node"):
        notes = node["metadata"]["annotations"]
        assert (
            notes["machineconfiguration.openshift.io/currentConfig"]
            == notes["machineconfiguration.openshift.io/desiredConfig"]
        )
        assert not node["spec"].get("unschedulable")
    # SPEC D1/D4: an operator starts only after every lower runlevel reported the new version.
    runlevel = {o.name: o.runlevel for o in operators_of(SMALL)}
    reached: dict[str, float] = {}
    for e in store.events():
        name = e["object"].removeprefix("clusteroperator/")
        if e["reason"] == "VersionReached":
            reached[name] = e["at"]
        elif e["reason"] == "Progressing" and name in runlevel:
            lower = [n for n, r in runlevel.items() if r < runlevel[name]]
            assert all(n in reached and reached[n] <= e["at"] for n in lower), name


def test_node_rollout_respects_max_unavailable_and_pdb(tmp_path: Path) -> None:
    store, outcome = upgrade(tmp_path, SMALL)
    assert outcome.reason == "completed"
    draining: dict[str, set[str]] = {"master": set(), "worker": set()}
    worst = {"master": 0, "worker": 0}
    for e in store.events():
        if not e["object"].startswith("node/"):
            continue
        node = e["object"].removeprefix("node/")
        pool = node.split("-")[0]
        if e["reason"] == "Drain":
            draining[pool].add(node)
        elif e["reason"] == "Done":
            draining[pool].discard(node)
        worst[pool] = max(worst[pool], len(draining[pool]))
    assert worst == {"master": 1, "worker": 2}


def test_same_seed_same_run_and_restart_resumes(tmp_path: Path) -> None:
    """SPEC X3: stopping after any step and starting a new process gives the same result."""
    store, _ = upgrade(tmp_path / "a", SMALL)
    expected = [(e["at"], e["object"], e["reason"]) for e in store.events()]
    root, store2 = start(tmp_path / "b", SMALL)
    steps = 0
    while True:
        r = runner(root, store2, SMALL)
        out = r.run(on_step=None, max_seconds=900.0)
        steps += out.steps
        store2.close()
        store2 = Store(root / "cluster.db")
        if out.reason == "completed":
            break
    events = [(e["at"], e["object"], e["reason"]) for e in store2.events()]
    assert events == expected
    history = store2.get("ClusterVersion", "version")["status"]["history"]  # type: ignore[index]
    assert len(history) == 2


def test_degraded_operator_stops_the_update_with_the_controllers_message(tmp_path: Path) -> None:
    spec = Spec(
        operators=[Operator("etcd", 10, (2, 2)), Operator("dns", 50, (2, 2))],
        faults=[Fault(operator="etcd", degrade=True)],
        pools=[Pool("master", 1), Pool("worker", 1)],
    )
    store, outcome = upgrade(tmp_path, spec, max_seconds=3 * 3600.0)
    assert outcome.reason == "stalled"  # the operator stays degraded: nothing moves
    cv = store.get("ClusterVersion", "version")
    assert cv is not None
    failing = find(cv["status"]["conditions"], "Failing")
    progressing = find(cv["status"]["conditions"], "Progressing")
    assert failing is not None and progressing is not None
    assert (failing["status"], failing["reason"]) == ("True", "ClusterOperatorDegraded")
    assert failing["message"] == "Cluster operator etcd is degraded"
    assert (
        progressing["message"]
        == f"Unable to apply {TARGET}: wait has exceeded 40 minutes for these operators: etcd"
    )
    dns = store.get("ClusterOperator", "dns")
    assert dns is not None and dns["status"]["versions"][0]["version"] == "4.13.40"


def test_pdb_that_never_allows_eviction_keeps_the_node_draining(tmp_path: Path) -> None:
    spec = Spec(
        operators=[Operator("machine-config", 80, (1, 1))],
        pools=[Pool("master", 1), Pool("worker", 2)],
        workloads=[Workload("db", "data", 1, pdb=Budget(min_available=1))],
    )
    store, outcome = upgrade(tmp_path, spec, max_seconds=2 * 3600.0)
    assert outcome.reason == "limit"
    reasons = [e["reason"] for e in store.events() if e["object"].startswith("node/worker")]
    assert "DrainThresholdExceeded" in reasons and "DrainFailed" in reasons
    pool = store.get("MachineConfigPool", "worker")
    assert pool is not None
    assert find(pool["status"]["conditions"], "Degraded")["status"] == "True"  # type: ignore[index]
    cv = store.get("ClusterVersion", "version")
    assert cv is not None and cv["status"]["history"][0]["state"] == "Completed"  # SPEC C11


@pytest.mark.parametrize("image", ["sim.example/none@sha256:" + "a" * 64])
def test_release_that_cannot_be_loaded_is_refused(tmp_path: Path, image: str) -> None:
    root, store = start(tmp_path, SMALL)
    cv = store.get("ClusterVersion", "version")
    assert cv is not None
    cv["spec"]["desiredUpdate"] = {"version": "", "image": image}
    store.put(cv)
    store.commit()
    runner(root, store, SMALL).run(max_seconds=600.0)
    cv = store.get("ClusterVersion", "version")
    assert cv is not None
    accepted = find(cv["status"]["conditions"], "ReleaseAccepted")
    assert accepted is not None and (accepted["status"], accepted["reason"]) == (
        "False",
        "LoadPayload",
    )
    assert cv["status"]["desired"]["version"] == "4.13.40"
    assert len(cv["status"]["history"]) == 1


def test_restarted_controller_does_not_extract_again(tmp_path: Path) -> None:
    """SPEC C4/X3: one extraction Job per release, however often the controller restarts."""
    root, store = start(tmp_path, SMALL)
    cv = store.get("ClusterVersion", "version")
    assert cv is not None
    cv["spec"]["desiredUpdate"] = {"version": "", "image": model_image(SMALL, TARGET, root)}
    store.put(cv)
    store.commit()
    while runner(root, store, SMALL).run(max_seconds=900.0).reason != "completed":
        store.close()
        store = Store(root / "cluster.db")
    assert len(store.list("Job")) == 1


@pytest.mark.parametrize(
    ("target", "patch", "result"),
    [  # RFC 7386 appendix A
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_profile_changes_are_json_merge_patches(target: Any, patch: Any, result: Any) -> None:
    assert merge_patch(target, patch) == result


def test_live_view_counts_each_runlevel_in_order(tmp_path: Path) -> None:
    """The per-runlevel bars: a runlevel shows progress only once every lower one is done."""

    root, store = start(tmp_path, SMALL)
    r = runner(root, store, SMALL)
    seen: list[list[tuple[str, int, int]]] = []
    r.run(
        on_step=lambda x: seen.append(
            [row[:3] for row in x.progress() if row.label.startswith("runlevel")]
        )
    )
    assert any(0 < done < total for rows in seen for _, done, total in rows)
    for rows in seen:
        started = [i for i, (_, done, _) in enumerate(rows) if done > 0]
        if started:
            assert all(done == total for _, done, total in rows[: started[-1]]), rows
    final = runlevel_rows(version_state(r.transport.sim))
    assert [label for label, _, _ in final] == sorted(label for label, _, _ in final)
    assert all(done == total for _, done, total in final) and sum(t for *_, t in final) > 20


def test_live_pool_bars_only_climb(tmp_path: Path) -> None:
    """The live view's pool bars count nodes at the release being applied: they start at
    zero and only climb (they used to start full, drop to zero, then climb)."""
    root, store = start(tmp_path, SMALL)
    seen: dict[str, list[int]] = {}

    def on_step(r: Any) -> None:
        for label, done, total, *_ in r.progress():
            if not label.startswith("pool "):
                continue
            seen.setdefault(label, []).append(done)
            assert done <= total

    assert runner(root, store, SMALL).run(on_step=on_step).reason == "completed"
    assert seen
    for label, counts in seen.items():
        assert counts[0] == 0, label
        assert counts == sorted(counts), f"{label} went down: {counts}"
        assert counts[-1] == max(counts) > 0
