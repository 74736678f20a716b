"""Every branch of the controller's preconditions and Upgradeable condition, including the
ones no public case pins (SPEC C6), each read from cluster-version-operator 6e719331f:
pkg/payload/precondition/clusterversion/{gianthop,rollback,upgradeable,recommendedupdate}.go
and, for the long-standing Upgradeable checks, pkg/cvo/upgradeable.go at ea13ba611^."""

from __future__ import annotations

from typing import Any

import pytest

from kupgrade.controllers.version import preconditions as pre
from kupgrade.controllers.version import upgradeable
from kupgrade.controllers.version.status import merge_history, release_accepted

Expect = tuple[str, bool, str] | None  # (reason, warning, message) or passes


def cv(
    current: str,
    *,
    image: str = "",
    history: list[dict[str, Any]] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    channel: str = "",
    overrides: bool = False,
    available: tuple[str, ...] = (),
    conditional: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "spec": {
            "channel": channel,
            "overrides": [{"kind": "Deployment", "name": "x", "unmanaged": True}]
            if overrides
            else [],
        },
        "status": {
            "desired": {"version": current, "image": image},
            "history": history or [],
            "conditions": conditions or [],
            "availableUpdates": [{"version": v} for v in available],
            "conditionalUpdates": conditional or [],
        },
    }


def check(got: pre.PreconditionError | None, want: Expect) -> None:
    if want is None:
        assert got is None
        return
    assert got is not None
    assert (got.reason, got.warning, got.message) == want


GIANT = "ClusterVersionGiantHop"
ONLY_MAJOR = "and only updates within the current major version are supported."


@pytest.mark.parametrize(
    ("current", "target", "want"),
    [
        ("4.14.0", "4.14.3", None),
        ("4.14.3", "4.14.0", None),  # a downgrade is the Rollback check's business
        ("4.14.0", "4.15.9", None),
        ("4.14.0", "3.12.0", None),  # lower major, lower minor
        ("4.14.0", "3.99.0", ("MultipleMinorVersionsUpdate", False, None)),  # minors only
        ("4.18.0", "5.0.0", None),  # the one major update planned for
        ("4.18.0", "5.0.1-rc.1", None),
        (
            "4.18.0",
            "5.1.0",
            (
                "MajorVersionUpdate",
                False,
                "5.1.0 has a larger major version than the current target 4.18.0 (5 > 4), and "
                "only updates within the current major version or to 5.0 are supported.",
            ),
        ),
        (
            "3.11.0",
            "4.0.0",
            (
                "MajorVersionUpdate",
                False,
                f"4.0.0 has a larger major version than the current target 3.11.0 (4 > 3), {ONLY_MAJOR}",
            ),
        ),
        (
            "4.1.0",
            "6.0.0",
            (
                "MajorVersionUpdate",
                False,
                f"6.0.0 has a larger major version than the current target 4.1.0 (6 > 4), {ONLY_MAJOR}",
            ),
        ),
        (
            # The minor check ignores the majors: 5.0 -> 4.20 is "more than one minor".
            "5.0.0",
            "4.20.0",
            (
                "MultipleMinorVersionsUpdate",
                False,
                "4.20.0 is more than one minor version beyond the current target 5.0.0 "
                "(4.20 > 5.(0+1)), and only updates within the current minor version or to the "
                "next minor version are supported.",
            ),
        ),
        ("4.14.0", "4.16.0+build.1", ("MultipleMinorVersionsUpdate", False, None)),
        ("4.14", "4.15.0", ("InvalidCurrentVersion", True, "No Major.Minor.Patch elements found")),
        ("", "4.15.0", ("InvalidCurrentVersion", True, "Version string empty")),
        (
            "4.14.0",
            "4.015.0",
            ("InvalidDesiredVersion", False, 'Minor number must not contain leading zeroes "015"'),
        ),
    ],
)
def test_giant_hop_branches(current: str, target: str, want: Any) -> None:
    got = pre.giant_hop(cv(current), target)
    if want is not None and want[2] is None:  # only the reason matters here
        assert got is not None and (got.reason, got.warning) == want[:2]
        return
    check(got, want)


A, B, C = (f"quay.io/r@sha256:{c * 64}" for c in "abc")


def entry(version: str, image: str, state: str = "Completed") -> dict[str, str]:
    return {"version": version, "image": image, "state": state}


@pytest.mark.parametrize(
    ("current", "image", "history", "target", "want"),
    [
        # The newest entry that is not the current release (version *and* image) is the
        # previous one, whatever its state.
        ("4.14.2", A, [entry("4.14.2", A), entry("4.14.1", B, "Partial")], "4.14.1", None),
        (
            # An image-only change of the same version is an entry of its own: the previous
            # "version" is then the same version, and 4.14.1 is not it.
            "4.14.2",
            A,
            [entry("4.14.2", A), entry("4.14.2", C), entry("4.14.1", B)],
            "4.14.1",
            (
                "LowDesiredVersion",
                False,
                "4.14.1 is less than the current target 4.14.2, and the only supported rollback "
                f"is to the cluster's previous version 4.14.2 ({C})",
            ),
        ),
        (
            # The first other entry does not parse: the CVO does not look further.
            "4.14.2",
            A,
            [entry("4.14.2", A), entry("bad", C), entry("4.14.1", B)],
            "4.14.1",
            (
                "LowDesiredVersion",
                False,
                "4.14.1 is less than the current target 4.14.2, and the cluster has no previous "
                "Semantic Version",
            ),
        ),
        (
            "4.15.0",
            A,
            [entry("4.15.0", A, "Partial"), entry("4.14.9", B)],
            "4.14.9",
            (
                "LowDesiredVersion",
                False,
                "4.14.9 is less than the current target 4.15.0 and matches the cluster's previous "
                "version, but rollbacks that change major or minor versions are not recommended",
            ),
        ),
        ("4.14.2", A, [entry("4.14.2", A), entry("4.14.1", B)], "4.14.1+rebuild", None),
        ("4.14.2", A, [], "4.14.3", None),
        (
            "bad",
            A,
            [],
            "4.14.3",
            ("InvalidCurrentVersion", True, "No Major.Minor.Patch elements found"),
        ),
        (
            "4.14.2",
            A,
            [],
            "v4.14.1",
            ("InvalidDesiredVersion", False, 'Invalid character(s) found in major number "v4"'),
        ),
    ],
)
def test_rollback_branches(
    current: str, image: str, history: list[dict[str, str]], target: str, want: Expect
) -> None:
    check(pre.rollback(cv(current, image=image, history=history), target), want)


UP_FALSE = [{"type": "Upgradeable", "status": "False", "reason": "Held", "message": "held back"}]
PROGRESSING = [{"type": "Progressing", "status": "True"}]


@pytest.mark.parametrize(
    ("current", "target", "history", "extra", "overrides", "want"),
    [
        ("4.14.0", "4.15.0", [], [], False, ("Held", False, "held back")),
        ("4.14.0", "5.0.0", [], [], False, ("Held", False, "held back")),  # major
        ("4.14.5", "4.14.9", [], [], False, None),  # patch
        ("4.14.5", "4.13.9", [], [], False, None),  # downgrade: Rollback's business
        ("4.14.5", "3.20.0", [], [], False, None),
        (
            "4.14",
            "4.15.0",
            [],
            [],
            False,
            ("InvalidCurrentVersion", True, "No Major.Minor.Patch elements found"),
        ),
        (
            "4.14.0",
            "4.15",
            [],
            [],
            False,
            ("InvalidDesiredVersion", False, "No Major.Minor.Patch elements found"),
        ),
        (
            "5.0.1",
            "5.0.2",
            [entry("5.0.1", A, "Partial"), entry("4.18.3", B)],
            PROGRESSING,
            False,
            (
                "MajorVersionClusterUpdateInProgress",
                True,
                "Retarget to 5.0.2 while a major version update from 4.18.3 to 5.0.1 is in progress",
            ),
        ),
        (
            # No Completed entry: the oldest entry (the install) is the current version.
            "4.15.1",
            "4.15.2",
            [entry("4.15.1", A, "Partial"), entry("4.14.0", B, "Partial")],
            PROGRESSING,
            False,
            (
                "MinorVersionClusterUpdateInProgress",
                True,
                "Retarget to 4.15.2 while a minor version update from 4.14.0 to 4.15.1 is in progress",
            ),
        ),
        ("4.15.1", "4.15.2", [entry("4.14.0", B)], [], False, None),  # not Progressing
        (
            "4.15.1",
            "4.14.2",  # a downgrade is not patch-only: no in-progress warning
            [entry("4.14.0", B)],
            PROGRESSING,
            False,
            None,
        ),
        (
            "4.14.5",
            "4.13.9",
            [],
            [],
            True,
            (
                "ClusterVersionOverridesSet",
                True,
                "Retarget from 4.14.5 to 4.13.9 is not blocked by ClusterVersionOverridesSet. But "
                "the cluster-version operator is not managing these resources; they are currently "
                "the responsibility of the agent that set the overrides: " + pre.OVERRIDES_MESSAGE,
            ),
        ),
    ],
)
def test_upgradeable_precondition_branches(
    current: str,
    target: str,
    history: list[dict[str, str]],
    extra: list[dict[str, str]],
    overrides: bool,
    want: Expect,
) -> None:
    got = pre.upgradeable(
        cv(current, history=history, conditions=UP_FALSE + extra, overrides=overrides), target
    )
    check(got, want)


def test_upgradeable_precondition_passes_without_a_false_condition() -> None:
    for status in ("True", "Unknown"):
        conditions = [{"type": "Upgradeable", "status": status}]
        assert pre.upgradeable(cv("nonsense", conditions=conditions), "4.99.0") is None


def conditional(*conditions: dict[str, str]) -> list[dict[str, Any]]:
    return [{"release": {"version": "4.15.1"}, "conditions": list(conditions)}]


@pytest.mark.parametrize(
    ("updates", "want"),
    [
        (conditional({"type": "Recommended", "status": "True"}), None),
        (
            conditional(
                {"type": "Other", "status": "False"},
                {
                    "type": "Recommended",
                    "status": "Unknown",
                    "reason": "EvaluationFailed",
                    "message": "no data",
                },
            ),
            (
                "EvaluationFailed",
                True,
                "Update from 4.14.0 to 4.15.1 is Recommended=Unknown: EvaluationFailed: no data",
            ),
        ),
        (
            conditional({"type": "Other", "status": "False"}),
            (
                "UnknownConditionType",
                True,
                "Update from 4.14.0 to 4.15.1 has a status.conditionalUpdates entry, but no "
                "Recommended condition.",
            ),
        ),
        (
            [{"release": {"version": "4.15.1"}}],
            (
                "UnknownConditionType",
                True,
                "Update from 4.14.0 to 4.15.1 has a status.conditionalUpdates entry, but no "
                "Recommended condition.",
            ),
        ),
    ],
)
def test_recommended_update_branches(updates: list[dict[str, Any]], want: Expect) -> None:
    # The conditional entry decides even without a channel: it is looked at first.
    check(pre.recommended_update(cv("4.14.0", conditional=updates), "4.15.1"), want)


def test_summarize_quotes_as_go_does() -> None:
    error = pre.PreconditionError("m", 'Odd"Name', "Re\\ason")
    assert str(error) == 'Precondition "Odd\\"Name" failed because of "Re\\\\ason": m'


# --- the Upgradeable condition ----------------------------------------------------------

GATE = "ack-4.14-kube-1.28-api-removals-in-4.15"


@pytest.mark.parametrize(
    ("gates", "acks", "want"),
    [
        ({GATE: "please ack"}, {}, ("AdminAckRequired", "please ack")),
        ({GATE: "please ack"}, {GATE: "True"}, ("AdminAckRequired", "please ack")),  # only "true"
        ({GATE: "please ack"}, {GATE: "true"}, None),
        ({"ack-4.13-old": "old"}, {}, None),  # another minor
        ({"ack-5.14-x": "only minors compare"}, {}, ("AdminAckRequired", "only minors compare")),
        ({"ack-4.14-b": "second", "ack-4.14-a": "first"}, {}, ("AdminAckRequired", "first second")),
        (
            {"bad-gate": "x"},
            {},
            (
                "AdminAckConfigMapGateNameError",
                "admin-gates configmap gate name bad-gate has invalid format; must comply with "
                '"^ack-[4-5][.]([0-9]{1,})-[^-]"',
            ),
        ),
        (
            {GATE: ""},
            {},
            (
                "AdminAckConfigMapGateValueError",
                f"admin-gates configmap gate {GATE} must contain a non-empty value.",
            ),
        ),
        (
            {GATE: "please ack", "ack-4.14-empty": ""},
            {},
            (
                "MultipleReasons",
                "admin-gates configmap gate ack-4.14-empty must contain a non-empty value. please ack",
            ),
        ),
        (None, {}, ("UnableToAccessAdminGatesConfigMap", "admin-gates configmap not found.")),
        (
            {GATE: "x"},
            None,
            ("UnableToAccessAdminAcksConfigMap", "admin-acks configmap not found."),
        ),
    ],
)
def test_admin_ack_branches(
    gates: dict[str, str] | None, acks: dict[str, str] | None, want: tuple[str, str] | None
) -> None:
    found = upgradeable.reasons(version="4.14.26", admin_gates=gates, admin_acks=acks)
    assert found == ([want] if want else [])


def test_admin_acks_wait_for_a_history() -> None:
    assert upgradeable.reasons(version="", admin_gates=None, admin_acks=None) == []


def test_classic_checks_in_the_controllers_order_with_their_reasons_listed() -> None:
    found = upgradeable.reasons(
        operators=[
            {"name": "etcd", "upgradeable": {"status": "False", "reason": "R", "message": "m"}}
        ],
        overrides=True,
        progressing=True,
        version="4.14.26",
        admin_gates={GATE: "ack it"},
        admin_acks={},
        deletes=[("Deployment", "ns", "old"), ("ClusterRole", "", "gone")],
    )
    assert [reason for reason, _ in found] == [
        "ClusterVersionOverridesSet",
        "AdminAckRequired",
        "R",
        "ResourceDeletesInProgress",
        "UpdateInProgress",
    ]
    assert found[3][1] == (
        "Cluster minor or major version upgrades are not allowed while resource deletions are "
        'in progress; resources=ClusterRole "gone",Deployment "ns/old"'
    )
    got = upgradeable.condition(found)
    assert got is not None and got["reason"] == "MultipleReasons"
    assert got["message"].startswith(
        "Cluster should not be upgraded between minor or major versions for multiple reasons: "
        "ClusterVersionOverridesSet,AdminAckRequired,R,ResourceDeletesInProgress,UpdateInProgress\n* "
    )


def test_risk_form_checks_the_reason_only_for_a_single_risk() -> None:
    one = upgradeable.risk_condition([("Not a reason!", "m")])
    assert one is not None and one["reason"] == "RiskNameNotCompatibleWithReasonProperty"
    assert upgradeable.risk_condition([]) is None


def test_release_accepted_when_the_payload_is_another_version() -> None:
    got = release_accepted(
        "VerifyPayloadVersion",
        "4.15.1",
        A,
        failure="release image version 4.15.2 does not match the expected upstream version 4.15.1",
    )
    assert (got["status"], got["reason"]) == ("False", "VerifyPayloadVersion")
    assert got["message"] == (
        f'Verifying payload failed version="4.15.1" image="{A}" failure=release image version '
        "4.15.2 does not match the expected upstream version 4.15.1"
    )


# --- history merge for every state of the newest entry (status.go mergeOperatorHistory) ---

NOW = "2024-05-04T10:00:00Z"


@pytest.mark.parametrize(
    ("newest", "completed", "want_states", "want_completion"),
    [
        ({"state": ""}, False, ["Partial"], None),  # an empty state reads as Partial
        ({}, True, ["Completed"], NOW),
        (
            {"state": "Completed", "completionTime": "2024-05-01T00:00:00Z"},
            True,
            ["Completed"],
            "2024-05-01T00:00:00Z",
        ),
        (
            {"state": "Partial", "completionTime": "2024-05-02T00:00:00Z"},
            True,
            ["Completed"],
            "2024-05-02T00:00:00Z",
        ),
    ],
)
def test_merge_into_the_newest_entry(
    newest: dict[str, Any], completed: bool, want_states: list[str], want_completion: str | None
) -> None:
    entry = {"version": "4.14.2", "image": A, "startedTime": "2024-05-01T00:00:00Z", **newest}
    got = merge_history([entry], {"version": "4.14.2", "image": A}, now=NOW, completed=completed)
    assert [e["state"] for e in got] == want_states
    assert got[0].get("completionTime") == want_completion


def test_a_new_release_completed_at_once_closes_the_old_entry() -> None:
    old = {"version": "4.14.1", "image": B, "state": "Partial", "startedTime": NOW}
    got = merge_history([old], {"version": "4.14.2", "image": A}, now=NOW, completed=True)
    assert [(e["version"], e["state"], e["completionTime"]) for e in got] == [
        ("4.14.2", "Completed", NOW),
        ("4.14.1", "Partial", NOW),
    ]


def test_a_local_payload_keeps_the_recorded_accepted_risks() -> None:
    entry = {"version": "4.14.2", "image": A, "state": "Partial", "acceptedRisks": "earlier"}
    got = merge_history(
        [entry],
        {"version": "4.14.2", "image": A},
        now=NOW,
        completed=False,
        accepted_risks="new",
        local_payload=True,
    )
    assert got[0]["acceptedRisks"] == "earlier"
