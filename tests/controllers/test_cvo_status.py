"""ClusterVersion status, history, preconditions and operator waits against
../shared/conformance/cvo/status.yaml (SPEC A1, C6, C7, C10, D4)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from kupgrade.cluster.clusterversion import request_update
from kupgrade.cluster.conditions import find, set_condition
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
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.store import Store
from tests.support.caseuse import plain, unused
from tests.support.conformance import conformance_cases, need_case
from tests.support.sim import runner

FILE = ("cvo", "status.yaml")


def cases(section: str) -> list[Any]:
    return conformance_cases(section, *FILE)


def need(case: Any) -> dict[str, Any]:
    return need_case(case, *FILE)


def failure_of(spec: dict[str, Any] | None) -> SyncError | None:
    if spec is None:
        return None
    if spec.get("type") == "plain":
        # A plain Go error (not a payload.UpdateError) has only its text: no reason,
        # effect or names for the controller to read (README 3.5 `failure`).
        unused(spec, "reason", "effect", "name", "names", "nested")
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
        waiting_minutes=plain(i.get("co_update_started_minutes_ago") or {}),
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
    co = plain(i["clusteroperator"])  # an object, read as the controller reads it
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
        plain(i["history"]),
        plain(i["desired"]),
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
    entry = plain(case["input"]["history_0"])
    assert same_entry(entry, plain(case["input"]["desired"])) == case["expect"]["same_entry"]


@pytest.mark.parametrize("case", cases("history_prune"))
def test_history_prune(case: Any) -> None:
    case = need(case)
    pruned, removed = prune_history(plain(case["input"]["history"]), case["input"]["max_history"])
    assert removed == case["expect"]["removed_index"]
    assert pruned == case["expect"]["history"]


def test_history_prune_keeps_short_history() -> None:
    history = [{"state": "Completed", "version": f"4.{i}.0"} for i in range(5)]
    assert prune_history(history, 10) == (history, None)


@pytest.mark.parametrize("case", cases("mode_selection"))
def test_mode_selection(case: Any) -> None:
    case = need(case)
    assert (
        mode(plain(case["input"]["history"]), case["input"]["desired_image"])
        == case["expect"]["mode"]
    )


SHORTHAND = {
    "desired_version",
    "desired_image",
    "desired",
    "history",
    "overrides",
    "progressing",
    "upgradeable",
    "channel",
    "conditions",
    "available_updates",
    "conditional_updates",
    "force",
}


def clusterversion(c: dict[str, Any]) -> dict[str, Any]:
    """A ClusterVersion object from the shorthand of the precondition cases; a key the
    shorthand does not know fails the test rather than being left out."""
    assert set(c.keys()) <= SHORTHAND, f"unknown ClusterVersion shorthand: {set(c) - SHORTHAND}"
    conditions = list(plain(c.get("conditions") or []))
    if c.get("upgradeable"):
        conditions.append({"type": "Upgradeable", **plain(c["upgradeable"])})
    if "progressing" in c:
        conditions.append(
            {"type": "Progressing", "status": "True" if c["progressing"] else "False"}
        )
    desired = plain(c.get("desired")) or {
        "version": c.get("desired_version", ""),
        "image": c.get("desired_image", ""),
    }
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"channel": c.get("channel", ""), "overrides": plain(c.get("overrides") or [])},
        "status": {
            "desired": desired,
            "history": plain(c.get("history") or []),
            "conditions": conditions,
            "availableUpdates": [{"version": v} for v in c.get("available_updates") or []],
            "conditionalUpdates": [
                {"release": {"version": u["version"]}, "conditions": plain(u["conditions"])}
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
    # The checks see only the target's version (the CVO's ReleaseContext.DesiredVersion);
    # a case may also name the target's image, which no check reads.
    unused(case, "input.target_image", "input.target.image")
    target = case["input"].get("target") or {}
    version = case["input"].get("target_version", target.get("version", ""))
    got = CHECKS[section](clusterversion(case["input"]["clusterversion"]), str(version))
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
    # README 3.5: a message quoting a semver parse error is Go's blang/semver text; ours
    # reproduces it, so it is compared too.
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
def test_precondition_scenarios(case: Any, tmp_path: Path) -> None:
    case = need(case)
    c = case["input"]["clusterversion"]
    target = case["input"]["target"]
    # The checks and the summary read the target's version; its image is compared only
    # where the scenario records the release (below), so it may go unread here.
    unused(case, "input.target.image", "input.target_image")
    summary = pre.summarize(pre.run_checks(clusterversion(c), target["version"]), c["force"])
    expect = case["expect"]
    assert (summary.blocking, summary.error) == (expect["blocking"], expect["preconditions_error"])
    if "history_accepted_risks" in expect:
        history = merge_history(
            plain(c["history"]),
            plain(target),
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
    outcome = {"status_desired_version", "history_changed", "progressing", "failing_status"}
    if outcome & set(expect.keys()):
        refused_on_the_simulator(case, tmp_path)


def refused_on_the_simulator(case: Any, tmp_path: Path) -> None:
    """The controller itself on a simulated cluster: what a refused release leaves behind
    (status.desired, history, Progressing, Failing) is read from the ClusterVersion."""
    c, target, expect = case["input"]["clusterversion"], case["input"]["target"], case["expect"]
    spec = Spec(version=str(c["desired"]["version"]), channel=str(c["channel"]), pools=[])
    root = create_cluster(tmp_path, "c", Profile(spec=spec))
    store = Store(root / "cluster.db")
    runner(root, store, spec).run(until="idle", max_seconds=60.0)
    cv = store.get("ClusterVersion", "version")
    assert cv is not None
    given = clusterversion(c)["status"]
    for condition in given["conditions"]:
        if condition["type"] not in ("Progressing",):  # the controller's own
            set_condition(cv["status"]["conditions"], condition, "2024-05-04T10:00:00Z")
    for key in ("availableUpdates", "conditionalUpdates"):
        cv["status"][key] = given[key]
    store.put(cv)
    history_before = copy.deepcopy(cv["status"]["history"])
    image = model_image(spec, str(target["version"]), root)
    request_update(SimCluster(store), {"version": target["version"], "image": image}, c["force"])
    store.commit()
    runner(root, store, spec).run(until="idle", max_seconds=60.0)
    cv = store.get("ClusterVersion", "version")
    assert cv is not None
    status = cv["status"]
    if "status_desired_version" in expect:
        assert status["desired"]["version"] == expect["status_desired_version"]
    if "history_changed" in expect:
        assert (status["history"] != history_before) == expect["history_changed"]
    if "progressing" in expect:
        progressing = find(status["conditions"], "Progressing") or {}
        assert {k: progressing.get(k) for k in expect["progressing"]} == expect["progressing"]
    if "failing_status" in expect:
        assert (find(status["conditions"], "Failing") or {}).get("status") == expect[
            "failing_status"
        ]
    accepted = find(status["conditions"], "ReleaseAccepted") or {}
    want = expect["release_accepted"]
    assert (accepted.get("status"), accepted.get("reason")) == (want["status"], want["reason"])
    assert accepted.get("message") == want["message"].replace(target["image"], image)


@pytest.mark.parametrize("case", cases("upgradeable_condition"))
def test_upgradeable_condition(case: Any) -> None:
    case = need(case)
    i = case["input"]
    known = {
        "risks",
        "clusteroperators",
        "overrides",
        "progressing",
        "current_version",
        "admin_gates",
        "admin_acks",
        "deletes_in_progress",
    }
    assert set(i.keys()) <= known, f"unknown input: {set(i) - known}"
    if "risks" in i:  # today's risk-based form
        got = upgradeable.risk_condition([(r["name"], r["message"]) for r in i["risks"]])
    else:  # the long-standing checks
        got = upgradeable.condition(
            upgradeable.reasons(
                operators=plain(i.get("clusteroperators") or []),
                overrides=i.get("overrides", False),
                progressing=i.get("progressing", False),
                version=i.get("current_version", ""),
                admin_gates=plain(i.get("admin_gates")),
                admin_acks=plain(i.get("admin_acks")),
                deletes=[
                    (d["kind"], d.get("namespace", ""), d["name"])
                    for d in i.get("deletes_in_progress") or []
                ],
            )
        )
    want = case["expect"]["upgradeable"]
    if want is None:
        assert got is None
    else:
        assert got is not None
        assert {k: got[k] for k in ("status", "reason", "message")} == want


# sync_worker.go syncPayload's messages, read back into the step's inputs: the cases give
# only the condition, so each is rebuilt from what it says and must come out the same.
ACCEPTED = re.compile(
    r'^(?P<what>.*?) version="(?P<version>[^"]*)" image="(?P<image>[^"]*)"'
    r'(?: architecture="(?P<arch>[^"]*)"| failure=(?P<failure>.*)|: (?P<pre>.*))?$',
    re.S,
)


@pytest.mark.parametrize("case", cases("release_accepted"))
def test_release_accepted(case: Any) -> None:
    case = need(case)
    expect = case["expect"]
    said = ACCEPTED.match(expect["message"])
    assert said is not None, expect["message"]
    got = release_accepted(
        expect["reason"],
        said["version"],
        said["image"],
        architecture=said["arch"] or "",
        failure=said["failure"] or said["pre"] or "",
    )
    assert got == {
        "type": expect.get("type", "ReleaseAccepted"),
        **{k: expect[k] for k in ("status", "reason", "message")},
    }


@pytest.mark.parametrize("case", cases("get_clusterversion_columns"))
def test_get_clusterversion_columns(case: Any) -> None:
    case = need(case)
    assert clusterversion_columns(plain(case["input"])) == case["expect"]
