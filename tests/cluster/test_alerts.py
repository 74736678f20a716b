"""Alerts read as oc reads an /api/v1/alerts answer (openshift/oc
pkg/cli/admin/upgrade/status/alerts.go AlertData: encoding/json into its structs), on oc's
own captured alerts (../shared/peer/oc/status-examples/*-alerts.json) and on every field
of its schema, and from the ALERTS series Prometheus keeps."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cluster.alerts import Alert, alert_key, alert_of_series, read_answer
from kupgrade.errors import InputError
from tests.support.conformance import SHARED

EXAMPLES = SHARED / "peer" / "oc" / "status-examples"


def _answer(*alerts: Any) -> bytes:
    return json.dumps({"status": "success", "data": {"alerts": list(alerts)}}).encode()


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="no peer data")
def test_oc_s_captured_alerts_are_read_whole() -> None:
    path = EXAMPLES / "4.15.0-ec2-unavailable-mco-20m-alerts.json"
    raw = json.loads(path.read_text())["data"]["alerts"]
    alerts = read_answer(path.read_bytes(), str(path))
    assert len(alerts) == len(raw)
    for alert, doc in zip(alerts, raw, strict=True):
        assert alert.name == doc["labels"].get("alertname", "")
        assert alert.state == doc.get("state", "")
        assert alert.annotation("summary") == doc.get("annotations", {}).get("summary", "")
        assert alert.annotation("runbook_url") == doc.get("annotations", {}).get("runbook_url", "")


def test_every_field_of_oc_s_structs_is_kept_and_nothing_else() -> None:
    labels = {
        "alertname": "PodDisruptionBudgetAtLimit",
        "name": "n",
        "namespace": "ns",
        "poddisruptionbudget": "pdb",
        "reason": "r",
        "severity": "warning",
        "openShiftUpdatePrecheck": "true",
        "pod": "dropped",
    }
    annotations = {"description": "d", "summary": "s", "runbook_url": "u", "message": "m", "x": 1}
    (alert,) = read_answer(
        _answer(
            {
                "labels": labels,
                "annotations": annotations,
                "state": "firing",
                "activeAt": "2023-11-24T15:43:23.156620559Z",
                "value": "1e+00",
                "partialResponseStrategy": "WARN",
            }
        ),
        "a.json",
    )
    assert alert.labels == {k: v for k, v in labels.items() if k != "pod"}
    assert alert.annotations == {
        "description": "d",
        "summary": "s",
        "runbook_url": "u",
        "message": "m",
    }
    assert alert.state == "firing"
    assert alert.active_at == pytest.approx(1700840603.156620, abs=1e-6)


def test_keys_match_as_encoding_json_matches_them() -> None:
    """Field names ignoring case; of two keys for one field, the last one written."""
    (alert,) = read_answer(
        b'{"Data": {"ALERTS": [{"Labels": {"AlertName": "A", "alertname": "B"},'
        b' "STATE": "firing", "activeat": "2024-01-01T00:00:00+01:00"}]}}',
        "a.json",
    )
    assert alert.name == "B"
    assert alert.state == "firing"
    assert alert.active_at == 1704063600.0


def test_missing_and_null_fields_are_zero_values() -> None:
    assert read_answer(b"{}", "a") == []
    assert read_answer(b'{"data": null}', "a") == []
    assert read_answer(b'{"data": {"alerts": null}}', "a") == []
    assert read_answer(_answer(None, {"labels": None, "state": None}), "a") == [Alert(), Alert()]
    (zero,) = read_answer(_answer({"activeAt": "0001-01-01T00:00:00Z"}), "a")
    assert zero.active_at is None  # Go's zero time: before any update


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"not json", "a.json"),
        (b"[]", "is not an alerts answer"),
        (b'{"data": []}', "data is not an object"),
        (b'{"data": {"alerts": {}}}', "data.alerts is not a list"),
        (_answer(1), "data.alerts[0]"),
        (_answer({"labels": {"severity": 2}}), "data.alerts[0].labels.severity"),
        (_answer({"labels": []}), "data.alerts[0].labels"),
        (_answer({"state": True}), "data.alerts[0].state"),
        (_answer({"activeAt": "yesterday"}), "is not an RFC 3339 time"),
        (_answer({"activeAt": "2024-01-01 00:00:00Z"}), "is not an RFC 3339 time"),
        (_answer({"activeAt": "2024-01-01T00:00:00"}), "is not an RFC 3339 time"),
        (b"\xff\xfe", "a.json"),
    ],
)
def test_a_bad_answer_is_refused_in_one_line_naming_where(body: bytes, says: str) -> None:
    with pytest.raises(InputError) as refused:
        read_answer(body, "a.json")
    assert says in str(refused.value)
    assert "\n" not in str(refused.value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(json_values)
def test_any_json_is_read_or_refused(value: Any) -> None:
    body = json.dumps({"data": {"alerts": [value]}}).encode()
    try:
        alerts = read_answer(body, "a.json")
    except InputError:
        return
    assert len(alerts) == 1


def test_an_alert_from_prometheus_s_own_series() -> None:
    series = {
        "__name__": "ALERTS",
        "alertname": "KubePodNotReady",
        "alertstate": "firing",
        "namespace": "ns",
        "severity": "warning",
        "pod": "p",
    }
    state = {k: v for k, v in series.items() if k != "alertstate"} | {
        "__name__": "ALERTS_FOR_STATE"
    }
    assert alert_key(series) == alert_key(state)
    alert = alert_of_series(series, 1700000000.0)
    assert alert == Alert(
        labels={"alertname": "KubePodNotReady", "namespace": "ns", "severity": "warning"},
        state="firing",
        active_at=1700000000.0,
    )
