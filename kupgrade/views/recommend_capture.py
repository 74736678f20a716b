"""What `oc adm upgrade recommend --mock-clusterversion FILE` reads (openshift/oc
pkg/cli/admin/upgrade/recommend/mockresources.go load, recommend.go Complete, alerts.go):
the ClusterVersion of FILE, and the alerts of the file named by putting -alerts.json for
the first -cv.yaml in FILE's name. No alerts file (or an empty one) is not an error: the
precheck says it had no test data, as oc's does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kupgrade import intake
from kupgrade.cluster.alerts import Alert, read_answer
from kupgrade.errors import InputError
from kupgrade.views.recommend_checks import Check, alert_checks, no_test_data

Obj = dict[str, Any]


def read_clusterversion(path: Path) -> Obj:
    """The ClusterVersion of a capture: the object, or the first item of a List or a
    ClusterVersionList (mockresources.go load)."""
    name = str(path)
    doc = intake.load_yaml(intake.read_file(path, "captured ClusterVersion"), name)
    if not isinstance(doc, dict) or not doc.get("kind"):
        raise InputError(
            "is not a Kubernetes object (no kind)",
            file=name,
            hint="capture it with `oc get clusterversion version -o yaml`",
        )
    kind = str(doc.get("kind"))
    if kind == "ClusterVersion":
        return doc
    if kind in ("List", "ClusterVersionList"):
        items = doc.get("items")
        if not isinstance(items, list) or not items:
            raise InputError(f"the {kind} holds no items", file=name)
        for i, item in enumerate(items):
            if not isinstance(item, dict) or item.get("kind", "ClusterVersion") != "ClusterVersion":
                got = item.get("kind") if isinstance(item, dict) else type(item).__name__
                raise InputError(
                    f"unexpected object type {got} in List content at index {i}", file=name
                )
        first = items[0]
        assert isinstance(first, dict)
        return first
    raise InputError(
        f"unexpected object type {kind} in --mock-clusterversion content",
        file=name,
        hint="give a ClusterVersion, as `oc get clusterversion version -o yaml` prints it",
    )


def alerts_path(cv_path: str) -> str:
    """oc's strings.Replace(path, "-cv.yaml", "-alerts.json", 1): the first occurrence,
    and the path itself when it has none."""
    return cv_path.replace("-cv.yaml", "-alerts.json", 1)


def mock_checks(cv_path: str) -> list[Check] | str:
    """The alert prechecks of a capture; why they failed as oc words it."""
    path = alerts_path(cv_path)
    if not Path(path).exists():
        return no_test_data(path)
    data = intake.read_file(path, "captured alerts")
    if not data:
        return no_test_data(path)
    try:
        alerts = read_answer(data, path)
    except InputError as exc:
        return f"parsing alerts: {exc}"
    return alert_checks(alerts)


def checks_of(alerts: list[Alert] | str) -> list[Check] | str:
    """The prechecks of alerts read elsewhere (a cluster, a Prometheus, a dump), or why
    they could not be read."""
    return alerts if isinstance(alerts, str) else alert_checks(alerts)
