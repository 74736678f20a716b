"""A cluster's alerts as Prometheus and Thanos answer GET /api/v1/alerts, read the way oc
reads them for `oc adm upgrade status` and `recommend` (openshift/oc
pkg/cli/admin/upgrade/status/alerts.go: AlertData, Alert, AlertLabels, AlertAnnotations).

oc decodes the answer with encoding/json into those structs: unknown fields are ignored,
a missing field is its zero value, and a field of the wrong type fails the whole answer
("Ignoring alerts in 'Update Health'"). The same answer comes from a live Prometheus, from
a capture's NAME-alerts.json, or from the ALERTS and ALERTS_FOR_STATE series of a metrics
snapshot (`alert_of_series`), where an alert carries no annotations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kupgrade import intake
from kupgrade.errors import InputError

LABELS = ("alertname", "name", "namespace", "poddisruptionbudget", "reason", "severity")
ANNOTATIONS = ("description", "summary", "runbook_url", "message")
PRECHECK_LABEL = "openShiftUpdatePrecheck"
RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)")


@dataclass(frozen=True)
class Alert:
    """One alert: its labels and annotations as oc keeps them, its state and since when
    it is active (None: Go's zero time, before any update)."""

    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    state: str = ""
    active_at: float | None = None

    @property
    def name(self) -> str:
        return self.labels.get("alertname", "")

    def label(self, key: str) -> str:
        return self.labels.get(key, "")

    def annotation(self, key: str) -> str:
        return self.annotations.get(key, "")


def read_answer(data: bytes, source: str) -> list[Alert]:
    """The alerts of an /api/v1/alerts answer: {"status", "data": {"alerts": [...]}}."""
    return answer_alerts(intake.decode_json(data, source, "alerts JSON"), source)


def is_answer(doc: Any) -> bool:
    """Whether a decoded document is an alerts answer rather than a Kubernetes object."""
    body = doc.get("data") if isinstance(doc, dict) and "kind" not in doc else None
    return isinstance(body, dict) and "alerts" in body


def answer_alerts(doc: Any, source: str) -> list[Alert]:
    """The alerts of a decoded /api/v1/alerts answer."""
    if not isinstance(doc, dict):
        raise InputError('is not an alerts answer ({"data": {"alerts": [...]}})', file=source)
    body = _get(doc, "data")
    if body is None:
        return []
    if not isinstance(body, dict):
        raise InputError("data is not an object", file=source)
    alerts = _get(body, "alerts")
    if alerts is None:
        return []
    if not isinstance(alerts, list):
        raise InputError("data.alerts is not a list", file=source)
    return [_alert(a, f"{source}: data.alerts[{i}]") for i, a in enumerate(alerts)]


def _alert(raw: Any, where: str) -> Alert:
    if raw is None:
        return Alert()
    if not isinstance(raw, dict):
        raise InputError("is not an alert object", file=where)
    return Alert(
        labels=_strings(_get(raw, "labels"), (*LABELS, PRECHECK_LABEL), f"{where}.labels"),
        annotations=_strings(_get(raw, "annotations"), ANNOTATIONS, f"{where}.annotations"),
        state=_string(_get(raw, "state"), f"{where}.state"),
        active_at=_time(_get(raw, "activeAt"), f"{where}.activeAt"),
    )


def _get(raw: dict[str, Any], key: str) -> Any:
    """The value encoding/json puts in the field named `key`: keys match it ignoring
    case, and of several the last one written wins."""
    found = None
    for name, value in raw.items():
        if name.casefold() == key.casefold():
            found = value
    return found


def _strings(raw: Any, keys: tuple[str, ...], where: str) -> dict[str, str]:
    """The fields oc's structs hold (the rest it drops), each a string or absent."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InputError("is not an object of strings", file=where)
    found = {k: _get(raw, k) for k in keys}
    return {k: _string(v, f"{where}.{k}") for k, v in found.items() if v is not None}


def _string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError("is not a string", file=where)
    return value


def _time(value: Any, where: str) -> float | None:
    """RFC 3339 with up to nanoseconds, as time.Time's UnmarshalJSON reads it."""
    if value is None:
        return None
    if not isinstance(value, str) or not RFC3339.fullmatch(value):
        raise InputError(f"{value!r} is not an RFC 3339 time", file=where)
    try:
        stamp = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{value!r} is not an RFC 3339 time", file=where) from None
    return None if stamp.year == 1 else stamp.timestamp()


def alert_of_series(labels: dict[str, str], active_at: float | None) -> Alert:
    """An alert from its ALERTS sample's labels (alertstate is its state) and the value of
    its ALERTS_FOR_STATE sample (the Unix time it became active), when there is one."""
    kept = {k: str(v) for k, v in labels.items() if k in (*LABELS, PRECHECK_LABEL)}
    return Alert(labels=kept, state=str(labels.get("alertstate", "")), active_at=active_at)


def alert_key(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """What an ALERTS sample and its ALERTS_FOR_STATE sample share: every label but the
    metric's name and alertstate."""
    return tuple(sorted((k, v) for k, v in labels.items() if k not in ("__name__", "alertstate")))
