"""`upgrade recommend`'s assessment on ClusterVersions built here, for the branches oc's
examples do not reach (openshift/oc pkg/cli/admin/upgrade/recommend recommend.go,
alerts.go): alerts of every group, accepted conditions, Upgradeable=False injected as a
risk, risks without conditions, tab stops after a long version, --quiet, and the errors
of --version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cluster.alerts import Alert
from kupgrade.errors import InputError
from kupgrade.views.recommend_capture import alerts_path, mock_checks, read_clusterversion
from kupgrade.views.recommend_checks import alert_checks
from kupgrade.views.upgrade_recommend import Asked, accepted_names, recommend

IMAGE = "quay.io/example/release@sha256:"
WORDS = ["ClusterVersion", "List", "True", "False", "Failing", "Upgradeable", "4.15.1", "4.1"]
KEYS = [
    "kind",
    "items",
    "status",
    "spec",
    "conditions",
    "conditionalUpdates",
    "availableUpdates",
    "release",
    "risks",
    "desired",
    "channels",
    "version",
    "type",
]


def _release(version: str) -> dict[str, str]:
    return {"version": version, "image": IMAGE + version, "url": f"https://errata/{version}"}


def _cv(
    version: str = "4.14.1",
    available: list[str] = (),  # type: ignore[assignment]
    conditional: list[dict[str, Any]] = (),  # type: ignore[assignment]
    conditions: list[dict[str, str]] | None = None,
    channel: str = "stable-4.15",
) -> dict[str, Any]:
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"channel": channel},
        "status": {
            "desired": {"version": version, "channels": ["stable-4.14", "stable-4.15"]},
            "conditions": conditions
            if conditions is not None
            else [{"type": "Failing", "status": "False"}],
            "availableUpdates": [_release(v) for v in available],
            "conditionalUpdates": list(conditional),
        },
    }


def _risky(version: str, *risks: str, status: str | None = "False") -> dict[str, Any]:
    update: dict[str, Any] = {
        "release": _release(version),
        "risks": [{"name": r, "message": f"{r} bites.", "url": "https://x"} for r in risks],
    }
    if status is not None:
        update["conditions"] = [
            {"type": "Recommended", "status": status, "reason": risks[0], "message": "bites"}
        ]
    return update


def _alert(name: str, severity: str = "warning", state: str = "firing", **labels: str) -> Alert:
    return Alert(
        labels={"alertname": name, "severity": severity, **labels},
        annotations={"summary": f"{name} happened"},
        state=state,
    )


def test_every_alert_group_and_the_happy_ones_left() -> None:
    checks = alert_checks(
        [
            _alert("Pending", "critical", state="pending"),
            _alert("PodDisruptionBudgetLimit", "critical", namespace="ns", poddisruptionbudget="b"),
            _alert("KubeContainerWaiting"),
            _alert("KubeNodeNotReady"),
            _alert("Custom", openShiftUpdatePrecheck="true"),
            _alert("VMCannotBeEvicted"),
            _alert("Ignored"),
            Alert(labels={"severity": "critical"}, state="firing"),  # no name: skipped
        ]
    )
    assert [c.type for c in checks] == [
        "recommended/CriticalAlerts/PodDisruptionBudgetLimit/0",
        "recommended/PodImagePullAlerts/KubeContainerWaiting/1",
        "recommended/NodeAlerts/KubeNodeNotReady/2",
        "recommended/UpdatePrecheckAlerts/Custom/3",
        "recommended/VirtAlerts/VMCannotBeEvicted/4",
    ]  # a critical budget alert counts for both groups: neither is happy
    assert checks[0].message == (
        "critical alert PodDisruptionBudgetLimit firing, suggesting significant cluster "
        "issues worth investigating. Namespace=ns, PodDisruptionBudget=b. "
        "PodDisruptionBudgetLimit happened. The alert has no description. "
        "<alert does not have a runbook_url annotation>"
    )
    assert [c.acceptance for c in checks] == [
        "PodDisruptionBudgetLimit",
        "KubeContainerWaiting",
        "KubeNodeNotReady",
        "Custom",
        "VMCannotBeEvicted",
    ]


def test_no_alerts_is_five_happy_conditions_and_descriptions_join() -> None:
    assert [(c.type, c.status) for c in alert_checks([])] == [
        ("recommended/CriticalAlerts", "True"),
        ("recommended/PodDisruptionBudgetAlerts", "True"),
        ("recommended/PodImagePullAlerts", "True"),
        ("recommended/NodeAlerts", "True"),
        ("recommended/UpdatePrecheckAlerts", "True"),
    ]
    both = Alert(
        labels={"alertname": "X", "severity": "critical"},
        annotations={"description": "d", "message": "m", "runbook_url": "r"},
        state="firing",
    )
    assert alert_checks([both])[0].message.endswith("X. The alert description is: d | m r")


def test_accepted_conditions_are_named_apart_and_failing_is_marked() -> None:
    cv = _cv(
        available=["4.14.2"],
        conditions=[{"type": "Failing", "status": "True", "reason": "R", "message": "a\nb"}],
    )
    checks = alert_checks([_alert("KubeNodeNotReady"), _alert("KubeContainerWaiting")])
    shown = recommend(cv, checks, Asked(accept=("KubeNodeNotReady", "Failing")))
    assert shown.out.startswith("accepted Failing=True:\n\n  Reason: R\n  Message: a\n  b\n\n")
    assert (
        "but were explicitly accepted via --accept: recommended/NodeAlerts/KubeNodeNotReady/0\n"
        in shown.out
    )
    assert "cause for concern in updating this cluster to later releases: " in shown.out
    assert shown.data["unaccepted"] == ["KubeContainerWaiting"]
    assert shown.error is None  # without --version issues never fail the run


def test_no_failing_condition_is_an_issue_said_on_standard_error() -> None:
    shown = recommend(_cv(available=["4.14.2"], conditions=[]), [], Asked(version="4.14.2"))
    assert shown.err.startswith("warning: No current Failing info")
    assert shown.error == (
        "issues that apply to this cluster but which were not included in --accept: Failing"
    )
    quiet = recommend(_cv(available=["4.14.2"], conditions=[]), [], Asked("4.14.2", quiet=True))
    assert (quiet.out, quiet.err, quiet.error) == ("", "", shown.error)


def test_upgradeable_false_is_a_risk_of_later_minors_only() -> None:
    upgradeable = {"type": "Upgradeable", "status": "False", "reason": "AdminAck", "message": "ack"}
    cv = _cv(
        available=["4.14.2", "4.15.0"],
        conditional=[_risky("4.15.1", "Old", status="True"), _risky("4.15.2", "Bad")],
        conditions=[{"type": "Failing", "status": "False"}, upgradeable],
    )
    shown = recommend(cv, [], Asked(show_outdated=True))
    assert "  4.15.2      MultipleReasons\n  4.15.1      AdminAck\n  4.15.0      AdminAck\n" in (
        shown.out
    )
    assert "  4.14.2      no known issues relevant to this cluster\n" in shown.out
    one = recommend(cv, [], Asked(version="4.15.2", accept=("ConditionalUpdateRisk",)))
    assert (
        "Reason: accepted MultipleReasons via ConditionalUpdateRisk\nMessage: ack\n  \n  bites\n"
        in (one.out)
    )
    assert one.data["version"]["risks"] == ["Bad", "UpgradeableFalse"]
    broken = _cv("not-a-version", available=["4.15.0"], conditions=[upgradeable])
    assert "warning: Cannot inject Upgradeable=False" in recommend(broken, [], Asked()).err


def test_risks_without_conditions_say_so_with_ocs_empty_names() -> None:
    cv = _cv(conditional=[_risky("4.15.1", "B", "A", status=None)])
    shown = recommend(cv, [], Asked(version="4.15.1"))
    assert "Reason: NoConditions\n" in shown.out
    assert "Conditional update to 4.15.1 has risks (, , A, B), but no conditions." in shown.out


def test_the_table_after_long_entries_and_a_wide_version() -> None:
    cv = _cv(
        available=["4.15.3", "4.15.0-rc.10-very-long"],
        conditional=[_risky("4.15.9", "Bad"), _risky("4.15.8", "Worse")],
    )
    shown = recommend(cv, [], Asked())
    table = shown.out.split("Updates to 4.15:\n", 1)[1]
    assert table.startswith("\n  Version: 4.15.9\n")
    assert (
        "  Message: Bad bites.\n\n  Version: 4.15.8\n" not in table
    )  # messages are the conditions'
    assert table.endswith(
        "\nAnd 2 older 4.15 updates you can see with '--show-outdated-releases' or "
        "'--version VERSION'.\n"
    )
    wide = recommend(_cv(available=["4.15.3", "4.15.0-rc.10-very-long"]), [], Asked())
    # Each row is flushed alone: the wide one does not widen the first.
    assert "  VERSION     ISSUES\n  4.15.3      no known" in wide.out
    assert "\n  4.15.0-rc.10-very-long no known" in wide.out
    outdated = recommend(
        _cv(available=["4.15.3", "4.15.0-rc.10-very-long"]), [], Asked(show_outdated=True)
    )
    assert "  4.15.3                 no known" in outdated.out


def test_unparsed_updates_are_warned_about_and_left_out() -> None:
    shown = recommend(_cv(available=["4.15.x", "4.15.1"]), [], Asked())
    assert (
        shown.err
        == 'warning: Cannot parse SemVer available update "4.15.x": Invalid character(s) found in patch number "x"'
    )
    assert [u["version"] for u in shown.data["updates"]] == ["4.15.1"]


@pytest.mark.parametrize(
    ("asked", "error"),
    [
        (Asked(quiet=True), "--quiet can only be set when --version is set"),
        (Asked("4.15.1", show_outdated=True), "--show-outdated-releases is unnecessary"),
        (Asked("v4.15"), 'cannot parse SemVer target "v4.15"'),
    ],
)
def test_flags_oc_refuses(asked: Asked, error: str) -> None:
    with pytest.raises(InputError, match=error):
        recommend(_cv(), [], asked)


@pytest.mark.parametrize(
    ("available", "version", "error"),
    [
        (
            [],
            "4.15.1",
            "no updates available, so cannot display context for the requested release 4.15.1",
        ),
        (["4.15.1"], "5.0.0", "no updates to 5 available, so"),
        (["4.15.1"], "4.16.0", "no updates to 4.16 available, so"),
        (["4.15.1"], "4.15.2", "no update to 4.15.2 available, so"),
    ],
)
def test_a_version_not_offered_ends_in_ocs_error(
    available: list[str], version: str, error: str
) -> None:
    shown = recommend(_cv(available=available), [], Asked(version=version))
    assert shown.error is not None and shown.error.startswith(error)


def test_a_failed_precheck_is_an_issue() -> None:
    shown = recommend(_cv(available=["4.14.2"]), "no route", Asked("4.14.2"))
    assert shown.out.startswith("Failed to check for at least some preconditions: no route\n")
    assert shown.error is not None and shown.error.endswith(": FailedToCompletePrecheck")


def test_accept_is_comma_delimited_and_repeatable() -> None:
    assert accepted_names(["a,b", "c"]) == ("a", "b", "c")


def test_the_alerts_file_oc_looks_for(tmp_path: Path) -> None:
    assert alerts_path("dir-cv.yaml/x-cv.yaml") == "dir-alerts.json/x-cv.yaml"
    cv = tmp_path / "c-cv.yaml"
    (tmp_path / "c-alerts.json").write_text("")
    assert mock_checks(str(cv))[0].reason == "NoTestData"  # type: ignore[union-attr]
    (tmp_path / "c-alerts.json").write_text("[1]")
    assert str(mock_checks(str(cv))).startswith("parsing alerts: ")


def test_lists_give_their_first_clusterversion(tmp_path: Path) -> None:
    path = tmp_path / "x-cv.yaml"
    path.write_text(yaml.safe_dump({"kind": "List", "items": [_cv("4.1.0"), _cv("4.2.0")]}))
    assert read_clusterversion(path)["status"]["desired"]["version"] == "4.1.0"
    path.write_text(yaml.safe_dump({"kind": "ConfigMap", "metadata": {"name": "x"}}))
    with pytest.raises(InputError, match="unexpected object type ConfigMap"):
        read_clusterversion(path)


@given(
    st.recursive(
        st.none() | st.text(max_size=5) | st.integers() | st.sampled_from(WORDS),
        lambda c: st.lists(c) | st.dictionaries(st.sampled_from(KEYS), c),
        max_leaves=20,
    )
)
def test_any_document_reads_or_is_refused_in_one_line(doc: Any) -> None:
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as where:
        path = Path(where) / "p-cv.yaml"
        path.write_text(yaml.safe_dump(doc))
        try:
            cv = read_clusterversion(path)
        except InputError as exc:
            assert "\n" not in str(exc)
            return
        shown = recommend(cv, [], Asked())
        assert shown.error is None
