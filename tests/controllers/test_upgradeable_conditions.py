"""The long-standing Upgradeable conditions (SPEC C6), as the cluster-version operator
writes them: pkg/cvo/upgradeable.go at ea13ba611^ (setUpgradeableConditions, NeedsUpdate,
the five checks of defaultUpgradeableChecks) and pkg/internal/constants.go.

One failing check puts its reason and message straight on Upgradeable=False; two or more
keep each check's own `Upgradeable*` condition beside Upgradeable=False MultipleReasons;
a check that clears loses its condition. Conditions are sorted by type and keep their
lastTransitionTime until their status changes.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cluster.conditions import find
from kupgrade.controllers.version import upgradeable as up
from kupgrade.controllers.version.controller import VersionController
from kupgrade.controllers.version.preconditions import OVERRIDES_MESSAGE
from kupgrade.controllers.version.record import version_state
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.openshift.wiring import wiring_for
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.store import Store

GATE = "ack-4.14-kube-1.28-api-removals-in-4.15"
ACK_TEXT = "Kubernetes 1.28 and therefore OpenShift 4.15 remove several APIs."
CO_MESSAGE = "Cluster operator etcd should not be upgraded between minor or major versions: m"
DELETES_MESSAGE = (
    "Cluster minor or major version upgrades are not allowed while resource deletions are in "
    'progress; resources=ClusterRole "gone"'
)
IN_PROGRESS_MESSAGE = (
    "An update is already in progress and the details are in the Progressing condition"
)

# check name -> the arguments that make it fail alone, and what it reports:
# (condition type, status of its own condition, reason, message), in the controller's order.
CHECKS: dict[str, tuple[dict[str, Any], tuple[str, str, str, str]]] = {
    "overrides": (
        {"overrides": True},
        (up.OVERRIDES, "False", "ClusterVersionOverridesSet", OVERRIDES_MESSAGE),
    ),
    "admin-ack": (
        {"version": "4.14.26", "admin_gates": {GATE: ACK_TEXT}, "admin_acks": {}},
        (up.ADMIN_ACK_REQUIRED, "False", "AdminAckRequired", ACK_TEXT),
    ),
    "operators": (
        {
            "operators": [
                {"name": "etcd", "upgradeable": {"status": "False", "reason": "R", "message": "m"}}
            ]
        },
        (up.CLUSTER_OPERATORS, "False", "R", CO_MESSAGE),
    ),
    "deletes": (
        {"deletes": [("ClusterRole", "", "gone")]},
        (up.DELETES_IN_PROGRESS, "False", "ResourceDeletesInProgress", DELETES_MESSAGE),
    ),
    "in-progress": (
        {"progressing": True},
        (up.UPGRADE_IN_PROGRESS, "True", "UpdateInProgress", IN_PROGRESS_MESSAGE),
    ),
}
ORDER = list(CHECKS)


def found_for(names: list[str] | tuple[str, ...]) -> list[up.Found]:
    kwargs: dict[str, Any] = {}
    for name in names:
        kwargs.update(CHECKS[name][0])
    return up.checks(**kwargs)


def aggregate(names: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Upgradeable=False MultipleReasons exactly as setUpgradeableConditions words it."""
    ordered = [CHECKS[n][1] for n in ORDER if n in names]
    return {
        "type": "Upgradeable",
        "status": "False",
        "reason": "MultipleReasons",
        "message": "Cluster should not be upgraded between minor or major versions for multiple "
        "reasons: "
        + ",".join(r for _, _, r, _ in ordered)
        + "".join(f"\n* {m}" for _, _, _, m in ordered),
    }


def fields(c: dict[str, Any]) -> dict[str, Any]:
    return {k: c[k] for k in ("type", "status", "reason", "message")}


@pytest.mark.parametrize("name", ORDER)
def test_one_failing_check_goes_straight_on_upgradeable(name: str) -> None:
    _, (_, _, reason, message) = CHECKS[name]
    got = up.conditions(found_for([name]))
    # Even the update in progress, whose own condition would be True.
    assert got == [{"type": "Upgradeable", "status": "False", "reason": reason, "message": message}]


@pytest.mark.parametrize(("a", "b"), list(combinations(ORDER, 2)))
def test_two_failing_checks_keep_their_own_conditions(a: str, b: str) -> None:
    got = up.conditions(found_for([a, b]))
    own = [
        {"type": t, "status": s, "reason": r, "message": m}
        for t, s, r, m in (CHECKS[a][1], CHECKS[b][1])
    ]
    assert got == sorted([aggregate([a, b]), *own], key=lambda c: c["type"])
    assert got[0]["type"] == "Upgradeable"  # "Upgradeable" sorts before every Upgradeable*


def test_every_check_failing_is_sorted_by_type() -> None:
    got = up.conditions(found_for(ORDER))
    assert [c["type"] for c in got] == [
        "Upgradeable",
        "UpgradeableAdminAckRequired",
        "UpgradeableClusterOperators",
        "UpgradeableClusterVersionOverrides",
        "UpgradeableDeletesInProgress",
        "UpgradeableUpgradeInProgress",
    ]
    assert got[0] == aggregate(ORDER)
    assert got[0]["message"].startswith(
        "Cluster should not be upgraded between minor or major versions for multiple reasons: "
        "ClusterVersionOverridesSet,AdminAckRequired,R,ResourceDeletesInProgress,UpdateInProgress"
        "\n* Disabling ownership"
    )
    # The in-progress check's own condition is True (upgradeInProgressUpgradeable).
    assert find(got, up.UPGRADE_IN_PROGRESS) == {
        "type": up.UPGRADE_IN_PROGRESS,
        "status": "True",
        "reason": "UpdateInProgress",
        "message": IN_PROGRESS_MESSAGE,
    }


def test_nothing_failing_gives_no_condition() -> None:
    assert up.conditions([]) == []
    assert up.checks() == []


def test_clearing_one_of_two_removes_its_condition() -> None:
    conditions: list[dict[str, Any]] = [{"type": "Available", "status": "True"}]
    up.apply(conditions, found_for(["overrides", "operators"]), "2024-06-01T10:00:00Z")
    assert [c["type"] for c in conditions] == [
        "Available",
        "Upgradeable",
        "UpgradeableClusterOperators",
        "UpgradeableClusterVersionOverrides",
    ]
    up.apply(conditions, found_for(["operators"]), "2024-06-01T10:05:00Z")
    assert conditions[0] == {"type": "Available", "status": "True"}
    assert [fields(c) for c in conditions[1:]] == [
        {"type": "Upgradeable", "status": "False", "reason": "R", "message": CO_MESSAGE},
    ]
    # Still False: the aggregate keeps its transition time though its reason changed.
    assert conditions[1]["lastTransitionTime"] == "2024-06-01T10:00:00Z"
    up.apply(conditions, [], "2024-06-01T10:10:00Z")
    assert [c["type"] for c in conditions] == ["Available"]


def test_last_transition_time_changes_only_with_the_status() -> None:
    conditions: list[dict[str, Any]] = []
    up.apply(conditions, found_for(["deletes", "in-progress"]), "2024-06-01T10:00:00Z")
    assert {c["lastTransitionTime"] for c in conditions} == {"2024-06-01T10:00:00Z"}
    # Same checks, new messages: no transition.
    again = [
        f._replace(message=f.message + " (again)") for f in found_for(["deletes", "in-progress"])
    ]
    up.apply(conditions, again, "2024-06-01T10:05:00Z")
    assert {c["lastTransitionTime"] for c in conditions} == {"2024-06-01T10:00:00Z"}
    assert all(c["message"].endswith("(again)") for c in conditions[1:])
    # A new check joins: only its condition is new.
    up.apply(conditions, found_for(["overrides", "deletes", "in-progress"]), "2024-06-01T10:07:00Z")
    stamps = {c["type"]: c["lastTransitionTime"] for c in conditions}
    assert stamps == {
        "Upgradeable": "2024-06-01T10:00:00Z",
        up.DELETES_IN_PROGRESS: "2024-06-01T10:00:00Z",
        up.UPGRADE_IN_PROGRESS: "2024-06-01T10:00:00Z",
        up.OVERRIDES: "2024-06-01T10:07:00Z",
    }
    # Existing conditions keep their place; the new one is appended.
    assert [c["type"] for c in conditions] == [
        "Upgradeable",
        up.DELETES_IN_PROGRESS,
        up.UPGRADE_IN_PROGRESS,
        up.OVERRIDES,
    ]


def test_a_status_change_moves_the_transition_time() -> None:
    """A per-check condition someone left True turns False: a transition."""
    conditions: list[dict[str, Any]] = [
        {"type": up.OVERRIDES, "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
    ]
    up.apply(conditions, found_for(["overrides", "deletes"]), "2024-06-01T10:00:00Z")
    assert find(conditions, up.OVERRIDES) == {
        "type": up.OVERRIDES,
        "status": "False",
        "reason": "ClusterVersionOverridesSet",
        "message": OVERRIDES_MESSAGE,
        "lastTransitionTime": "2024-06-01T10:00:00Z",
    }


def test_stale_upgradeable_conditions_of_any_type_are_removed() -> None:
    """NeedsUpdate removes every Upgradeable-prefixed condition the checks no longer give
    (cvo_test.go: UpgradeableA and UpgradeableB)."""
    conditions: list[dict[str, Any]] = [
        {"type": "Failing", "status": "False"},
        {"type": "UpgradeableA", "status": "False"},
        {"type": "Upgradeable", "status": "False", "reason": "Old"},
    ]
    up.apply(conditions, [], "2024-06-01T10:00:00Z")
    assert conditions == [{"type": "Failing", "status": "False"}]


@given(st.lists(st.sampled_from(ORDER), unique=True), st.lists(st.sampled_from(ORDER), unique=True))
def test_any_subset_of_failing_checks(first: list[str], then: list[str]) -> None:
    """For any failing checks, and after any change to another set: the conditions match
    the rule, sorted by type, and only a status change moves lastTransitionTime."""
    conditions: list[dict[str, Any]] = [{"type": "Available", "status": "True"}]
    up.apply(conditions, found_for(first), "T1")
    before = {c["type"]: dict(c) for c in conditions}
    up.apply(conditions, found_for(then), "T2")
    ours = [c for c in conditions if c["type"].startswith("Upgradeable")]
    assert conditions[0] == {"type": "Available", "status": "True"}
    if not then:
        assert ours == []
    elif len(then) == 1:
        _, (_, _, reason, message) = CHECKS[then[0]]
        assert [fields(c) for c in ours] == [
            {"type": "Upgradeable", "status": "False", "reason": reason, "message": message}
        ]
    else:
        own = {t: (s, r, m) for t, s, r, m in (CHECKS[n][1] for n in then)}
        assert {c["type"] for c in ours} == {"Upgradeable", *own}
        assert fields(find(ours, "Upgradeable") or {}) == aggregate(then)
        for c in ours:
            if c["type"] != "Upgradeable":
                assert (c["status"], c["reason"], c["message"]) == own[c["type"]]
    for c in ours:
        old = before.get(c["type"])
        kept = old is not None and old["status"] == c["status"]
        assert c["lastTransitionTime"] == ("T1" if kept else "T2")
    # Sorted by type when written from scratch.
    fresh: list[dict[str, Any]] = []
    up.apply(fresh, found_for(then), "T3")
    assert [c["type"] for c in fresh] == sorted(c["type"] for c in fresh)


# --- on the simulated cluster --------------------------------------------------------------


def controller(tmp_path: Path) -> tuple[VersionController, SimCluster]:
    spec = Spec(pools=[])
    root = create_cluster(tmp_path, "c", Profile(spec=spec))
    store = Store(root / "cluster.db")
    api = SimCluster(store)
    return VersionController(api, wiring_for(root, spec)), api


def test_the_controller_writes_and_clears_the_per_check_conditions(tmp_path: Path) -> None:
    version, api = controller(tmp_path)

    def written() -> list[dict[str, Any]]:
        cv = api.get("ClusterVersion", "version")
        assert cv is not None
        version._write_status(cv, version_state(api), [])
        cv = api.get("ClusterVersion", "version")
        assert cv is not None
        return [c for c in cv["status"]["conditions"] if c["type"].startswith("Upgradeable")]

    cv = api.get("ClusterVersion", "version")
    assert cv is not None
    cv["spec"]["overrides"] = [
        {"kind": "Deployment", "group": "apps", "namespace": "x", "name": "y", "unmanaged": True}
    ]
    api.write(cv)
    api.apply(
        {
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterOperator",
            "metadata": {"name": "etcd-test"},
        }
    )
    co = api.get("ClusterOperator", "etcd-test")
    assert co is not None
    co["status"]["conditions"] = [
        {"type": "Upgradeable", "status": "False", "reason": "R", "message": "m"}
    ]
    api.write(co)
    got = written()
    assert [c["type"] for c in got] == [
        "Upgradeable",
        up.CLUSTER_OPERATORS,
        up.OVERRIDES,
    ]
    assert got[0]["reason"] == "MultipleReasons"
    assert got[0]["message"].startswith(
        "Cluster should not be upgraded between minor or major versions for multiple reasons: "
        "ClusterVersionOverridesSet,R\n* "
    )
    co["status"]["conditions"] = []
    api.write(co)
    got = written()
    assert [fields(c) for c in got] == [
        {
            "type": "Upgradeable",
            "status": "False",
            "reason": "ClusterVersionOverridesSet",
            "message": OVERRIDES_MESSAGE,
        }
    ]
