"""ClusterVersion status, history, preconditions and operator waits against
../shared/conformance/cvo/status.yaml (SPEC A1, C6, C7, C10, D4)."""

from __future__ import annotations

from typing import Any

import pytest

from kupgrade.controllers.version import preconditions as pre
from kupgrade.controllers.version import upgradeable
from kupgrade.controllers.version.errors import (
    PlainError,
    SyncError,
    UpdateError,
    summarize_task_graph_errors,
)
from kupgrade.controllers.version.health import check_operator_health
from kupgrade.controllers.version.status import (
    SyncState,
    clusterversion_columns,
    merge_history,
    mode,
    progress,
    prune_history,
    release_accepted,
    same_entry,
)
from tests.support.conformance import conformance_cases, need_case

FILE = ("cvo", "status.yaml")


def cases(section: str) -> list[Any]:
    return conformance_cases(section, *FILE)


def need(case: Any) -> dict[str, Any]:
    return need_case(case, *FILE)


def failure_of(spec: dict[str, Any] | None) -> SyncError | None:
    if spec is None:
        return None
    if spec.get("type") == "plain":
        return PlainError(spec["message"])
    return UpdateError(
        reason=spec.get("reason", ""),
        message=spec.get("message", ""),
        effect=spec.get("effect") or "",
        name=spec.get("name") or "",
        names=tuple(spec.get("names") or ()),
        nested=tuple(e for n in spec.get("nested") or [] if (e := failure_of(n)) is not None),
    )


def state_of(i: dict[str, Any], reconciling: bool | None = None) -> SyncState:
    return SyncState(
        version=str(i["version"]),
        done=i["done"],
        total=i["total"],
        reconciling=i.get("reconciling", False) if reconciling is None else reconciling,
        failure=failure_of(i.get("failure")),
        validation_errors=["invalid"] * i.get("validation_errors", 0),
        waiting_minutes=i.get("co_update_started_minutes_ago") or {},
    )


# SPEC C10: "Working towards V: N of M done (P% complete)", float32-truncated.
@pytest.mark.parametrize("case", cases("progress_messages"))
def test_progress_messages(case: Any) -> None:
    case = need(case)
    got = progress(state_of(case["input"]), history_empty=False)
    assert got.progressing == case["expect"]["progressing"]
    assert got.failing == case["expect"]["failing"]


@pytest.mark.parametrize("case", cases("failing_from_errors"))
def test_failing_from_errors(case: Any) -> None:
    case = need(case)
    expect = case["expect"]
    updating = progress(state_of(case["input"], reconciling=False), history_empty=False)
    assert updating.failing == expect["updating_with_history"]["failing"]
    assert updating.progressing == expect["updating_with_history"]["progressing"]
    for reconciling, empty in ((True, False), (False, True)):
        other = progress(state_of(case["input"], reconciling=reconciling), history_empty=empty)
        assert other.failing == expect["reconciling_or_history_empty"]["failing"]


# SPEC D4: 30 / 90 minute slow-operator and 40 minute degraded thresholds.
@pytest.mark.parametrize("case", cases("operator_wait_timing"))
def test_operator_wait_timing(case: Any) -> None:
    case = need(case)
    got = progress(state_of(case["input"]), history_empty=case["input"]["history_empty"])
    assert got.failing == case["expect"]["failing"]
    assert got.progressing == case["expect"]["progressing"]


def operator_error(spec: dict[str, Any]) -> SyncError:
    """A task error as the controller raises it, built by the real health check."""
    if "clusteroperator" not in spec:
        return UpdateError(reason=spec["reason"], message=spec["message"])
    name = spec["clusteroperator"]
    conditions = {
        "ClusterOperatorNotAvailable": [{"type": "Available", "status": "False"}],
        "ClusterOperatorDegraded": [
            {"type": "Available", "status": "True"},
            {"type": "Degraded", "status": "True"},
        ],
        "ClusterOperatorUpdating": [
            {"type": "Available", "status": "True"},
            {"type": "Degraded", "status": "False"},
        ],
    }[spec["reason"]]
    actual = {
        "status": {"conditions": conditions, "versions": [{"name": "operator", "version": "1"}]}
    }
    error = check_operator_health(name, [{"name": "operator", "version": "2"}], actual, "Updating")
    assert error is not None and error.effect == spec["effect"]
    return error


@pytest.mark.parametrize("case", cases("condense_errors"))
def test_condense_errors(case: Any) -> None:
    case = need(case)
    got = summarize_task_graph_errors([operator_error(e) for e in case["input"]["task_errors"]])
    assert isinstance(got, UpdateError)
    expect = case["expect"]
    assert (got.reason, got.message, got.effect, got.name) == (
        expect["reason"],
        expect["message"],
        expect["effect"],
        expect["name"],
    )


@pytest.mark.parametrize("case", cases("clusteroperator_health"))
def test_clusteroperator_health(case: Any) -> None:
    case = need(case)
    i = case["input"]
    co = i["clusteroperator"]
    got = check_operator_health(co["name"], i["manifest_versions"], {"status": co}, i["mode"])
    expect = case["expect"]
    assert (got is None) == expect["done"]
    if expect["error"] is None:
        assert got is None
        return
    assert got is not None
    want = expect["error"]
    assert (got.reason, got.effect, got.message) == (
        want["reason"],
        want["effect"],
        want["message"],
    )
    for key, value in (
        ("plural_reason", got.plural_reason),
        ("plural_message_format", got.plural_message_format),
        ("nested", got.detail),
        ("undone", list(got.undone)),
    ):
        if key in want:
            assert value == want[key], key


@pytest.mark.parametrize("case", cases("history_merge"))
def test_history_merge(case: Any) -> None:
    case = need(case)
    i = case["input"]
    got = merge_history(
        i["history"],
        i["desired"],
        now=i["now"],
        completed=i["completed"],
        verified=i["verified"],
        accepted_risks=i["accepted_risks"],
        local_payload=i["local_payload"],
    )
    assert got == case["expect"]["history"]


@pytest.mark.parametrize("case", cases("history_same_entry"))
def test_history_same_entry(case: Any) -> None:
    case = need(case)
    entry = dict(case["input"]["history_0"])
    assert same_entry(entry, case["input"]["desired"]) == case["expect"]["same_entry"]


@pytest.mark.parametrize("case", cases("history_prune"))
def test_history_prune(case: Any) -> None:
    case = need(case)
    pruned, removed = prune_history(case["input"]["history"], case["input"]["max_history"])
    assert removed == case["expect"]["removed_index"]
    assert pruned == case["expect"]["history"]


def test_history_prune_keeps_short_history() -> None:
    history = [{"state": "Completed", "version": f"4.{i}.0"} for i in range(5)]
    assert prune_history(history, 10) == (history, None)


@pytest.mark.parametrize("case", cases("mode_selection"))
def test_mode_selection(case: Any) -> None:
    case = need(case)
    assert mode(case["input"]["history"], case["input"]["desired_image"]) == case["expect"]["mode"]


def clusterversion(c: dict[str, Any]) -> dict[str, Any]:
    """A ClusterVersion object from the shorthand of the precondition cases."""
    conditions = list(c.get("conditions") or [])
    if c.get("upgradeable"):
        conditions.append({"type": "Upgradeable", **c["upgradeable"]})
    if "progressing" in c:
        conditions.append(
            {"type": "Progressing", "status": "True" if c["progressing"] else "False"}
        )
    desired = c.get("desired") or {
        "version": c.get("desired_version", ""),
        "image": c.get("desired_image", ""),
    }
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"channel": c.get("channel", ""), "overrides": c.get("overrides") or []},
        "status": {
            "desired": desired,
            "history": c.get("history") or [],
            "conditions": conditions,
            "availableUpdates": [{"version": v} for v in c.get("available_updates") or []],
            "conditionalUpdates": [
                {"release": {"version": u["version"]}, "conditions": u["conditions"]}
                for u in c.get("conditional_updates") or []
            ],
        },
    }


CHECKS = {
    "precondition_gianthop": pre.giant_hop,
    "precondition_rollback": pre.rollback,
    "precondition_upgradeable": pre.upgradeable,
    "precondition_recommended_update": pre.recommended_update,
}


@pytest.mark.parametrize(
    ("section", "case"),
    [pytest.param(s, c.values[0], id=c.id) for s in CHECKS for c in cases(s)],
)
def test_precondition_checks(section: str, case: Any) -> None:
    case = need(case)
    got = CHECKS[section](
        clusterversion(case["input"]["clusterversion"]), str(case["input"]["target_version"])
    )
    expect = case["expect"]
    if expect is None:
        assert got is None
        return
    assert got is not None
    assert (got.precondition, got.reason, got.warning) == (
        expect["precondition"],
        expect["reason"],
        expect["non_blocking_warning"],
    )
    if got.reason not in ("InvalidCurrentVersion", "InvalidTargetVersion"):
        assert got.message == expect["message"]


def precondition_error(spec: dict[str, Any]) -> pre.PreconditionError:
    return pre.PreconditionError(
        spec["message"],
        spec.get("precondition", ""),
        spec.get("reason", ""),
        spec.get("non_blocking_warning", False),
    )


@pytest.mark.parametrize("case", cases("precondition_summarize"))
def test_precondition_summarize(case: Any) -> None:
    case = need(case)
    errors = case["input"]["errors"]
    got = pre.summarize(
        None if errors is None else [precondition_error(e) for e in errors], case["input"]["force"]
    )
    assert (got.blocking, got.error) == (case["expect"]["blocking"], case["expect"]["error"])


@pytest.mark.parametrize("case", cases("precondition_scenarios"))
def test_precondition_scenarios(case: Any) -> None:
    case = need(case)
    c = case["input"]["clusterversion"]
    target = case["input"]["target"]
    summary = pre.summarize(pre.run_checks(clusterversion(c), target["version"]), c["force"])
    expect = case["expect"]
    assert (summary.blocking, summary.error) == (expect["blocking"], expect["preconditions_error"])
    if "history_accepted_risks" in expect:
        history = merge_history(
            c["history"],
            target,
            now="2024-05-04T10:00:00Z",
            completed=False,
            accepted_risks=summary.error or "",
        )
        assert history[0]["acceptedRisks"] == expect["history_accepted_risks"]
    if "release_accepted" in expect:
        if summary.blocking:
            got = release_accepted(
                "PreconditionChecks",
                target["version"],
                target["image"],
                failure=summary.error or "",
            )
        else:
            got = release_accepted(
                "PayloadLoaded", target["version"], target["image"], architecture="amd64"
            )
        assert {k: got[k] for k in ("status", "reason", "message")} == expect["release_accepted"]


@pytest.mark.parametrize("case", cases("upgradeable_condition"))
def test_upgradeable_condition(case: Any) -> None:
    case = need(case)
    i = case["input"]
    if "risks" in i:
        found = [(r["name"], r["message"]) for r in i["risks"]]
    else:
        found = upgradeable.reasons(
            operators=i.get("clusteroperators") or [],
            overrides=i.get("overrides", False),
            progressing=i.get("progressing", False),
            version=i.get("current_version", ""),
            admin_gates=i.get("admin_gates"),
            admin_acks=i.get("admin_acks"),
        )
    got = upgradeable.condition(found)
    want = case["expect"]["upgradeable"]
    if want is None:
        assert got is None
    else:
        assert got is not None
        assert {k: got[k] for k in ("status", "reason", "message")} == want


IMAGE = "quay.io/openshift-release-dev/ocp-release@sha256:4d30b359aa6600a89ed49ce6a9a5fdab54092bcb821a25480fdfbc47e66af9ec"
DIGEST = "sha256:4d30b359aa6600a89ed49ce6a9a5fdab54092bcb821a25480fdfbc47e66af9ec"
VERIFY_FAILED = f"The update cannot be verified: unable to verify {DIGEST} against keyrings: verifier-public-key-redhat"
LOAD_FAILED = (
    "Error loading manifests from /etc/cvo/updatepayloads/x: parse 0000_50_a.yaml: error parsing"
)


@pytest.mark.parametrize("case", cases("release_accepted"))
def test_release_accepted(case: Any) -> None:
    case = need(case)
    calls = {
        "release-accepted/retrieving": lambda: release_accepted(
            "RetrievePayload", "4.14.27", IMAGE
        ),
        "release-accepted/loaded": lambda: release_accepted(
            "PayloadLoaded", "4.14.27", IMAGE, architecture="amd64"
        ),
        "release-accepted/retrieve-failed": lambda: release_accepted(
            "RetrievePayload", "4.14.27", IMAGE, failure=VERIFY_FAILED
        ),
        "release-accepted/load-failed": lambda: release_accepted(
            "LoadPayload", "4.14.27", IMAGE, failure=LOAD_FAILED
        ),
    }
    if case["id"] not in calls:
        pytest.skip("covered by test_precondition_scenarios")
    assert calls[case["id"]]() == case["expect"]


@pytest.mark.parametrize("case", cases("get_clusterversion_columns"))
def test_get_clusterversion_columns(case: Any) -> None:
    case = need(case)
    assert clusterversion_columns(case["input"]) == case["expect"]
