"""The update's health as `oc adm upgrade status` shows it: the insights (what is wrong,
how bad, since when, where to read about it), Go's durations as oc prints them, and the
insights oc makes of the cluster's alerts (openshift/oc pkg/cli/admin/upgrade/status:
health.go, alerts.go)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kupgrade.cluster.alerts import Alert
from kupgrade.versions import go_duration, go_truncate
from kupgrade.versions.goduration import parse_go_duration

LEVELS = ("Info", "Warning", "Error", "Critical")
INFO, WARNING, ERROR, CRITICAL = 0, 1, 2, 3
# A capture's clock is the latest condition change in it, a little after (oc's mock mode:
# "add some nanoseconds to exercise rounding").
CAPTURE_SLACK = 368975e-9


# --- Go's durations ----------------------------------------------------------------------


def go_round(seconds: float, unit: float) -> float:
    """time.Duration.Round: halves away from zero."""
    q = abs(seconds) / unit
    r = math.floor(q + 0.5) * unit
    return math.copysign(r, seconds)


def short_duration(seconds: float) -> str:
    """health.go shortDuration: 14m4s, 3h31m, 5m, now. A fraction is cut off the text,
    not the value: whatever stands before the "." is read as seconds, so 368.975µs is
    shown as 6m8s, as oc shows it (openshift/oc pkg/cli/admin/upgrade/status/health.go)."""
    return _short(go_duration(seconds))


def elapsed(now: float, then: float) -> float:
    """now - then, keeping a capture clock's nanoseconds: oc's mock clock is a whole
    second plus 368975 ns (`mock_clock`), which a float near 1.7e9 holds only to about
    240 ns, and shortDuration shows the microseconds ("368.975µs" as 6m8s)."""
    whole = round(now - CAPTURE_SLACK)
    if abs(now - CAPTURE_SLACK - whole) < 1e-6:
        return (whole - then) + CAPTURE_SLACK
    return now - then


def _short(orig: str) -> str:
    if orig in ("0s", "0h0m0s"):
        return "now"
    if orig.endswith("h0m0s"):
        return orig[:-4]
    if orig.endswith(("m0s", "h0m")):
        return orig[:-2]
    if "." in orig:
        whole = orig[: orig.index(".")] + "s"
        value = parse_go_duration(whole.lstrip("-"))
        return _short(go_duration(-value if whole.startswith("-") else value))
    return orig


# --- insights ----------------------------------------------------------------------------


@dataclass
class Insight:
    level: int
    impact: str
    summary: str
    description: str = ""
    reference: str = ""
    started: float | None = None  # None: oc's zero time, shown as "-"
    scope: str = "ControlPlane"
    resources: list[tuple[str, str]] = field(default_factory=list)  # (kind.group, name)

    def complete(self) -> bool:
        return bool(self.summary and self.description and self.reference)

    def as_dict(self, now: float) -> dict[str, Any]:
        return {
            "since": self.since(now),
            "level": LEVELS[self.level],
            "impact": self.impact,
            "message": self.summary,
            "description": self.description,
            "reference": self.reference,
            "scope": self.scope,
            "resources": [{"kind": k, "name": n} for k, n in self.resources],
        }

    def since(self, now: float) -> str:
        if self.started is None:
            return "-"
        return short_duration(go_truncate(now - self.started, 1.0))


# --- alerts (alerts.go parseAlertDataToInsights) -------------------------------------------

# Alerts shown even when they fired before the update began (alerts.go allowedAlerts).
ALLOWED_ALERTS = frozenset({"PodDisruptionBudgetLimit", "PodDisruptionBudgetAtLimit"})
SEVERITY = {"warning": WARNING, "critical": CRITICAL, "info": INFO}
NO_RUNBOOK = "<alert does not have a runbook_url annotation>"


def alert_insights(alerts: list[Alert], started: float) -> list[Insight]:
    """An insight per firing alert of warning level or worse that began during the update
    (or is one of ALLOWED_ALERTS), in the alerts' order."""
    out = []
    for alert in alerts:
        description = _alert_opening(alert, started)
        if not alert.name or description is None or alert.state == "pending":
            continue
        level = SEVERITY.get(alert.label("severity"), INFO)
        if level < WARNING:
            continue
        out.append(
            Insight(
                level,
                "Unknown",
                "Alert is firing: " + (alert.annotation("summary") or alert.name),
                description + _alert_description(alert),
                alert.annotation("runbook_url") or NO_RUNBOOK,
                started=alert.active_at,
                scope="Cluster",
                resources=[("alerts.config.openshift.io", _namespaced(alert))],
            )
        )
    return out


def _alert_opening(alert: Alert, started: float) -> str | None:
    during = alert.active_at is not None and started < alert.active_at
    if alert.name in ALLOWED_ALERTS:
        if during:
            return "Alert known to affect updates started firing during the update."
        return "Alert known to affect updates has been firing since before the update started."
    return "Alert started firing during the update." if during else None


def _alert_description(alert: Alert) -> str:
    description, message = alert.annotation("description"), alert.annotation("message")
    if description and message:
        return f" The alert description is: {description} | {message}"
    if description or message:
        return " The alert description is: " + (description or message)
    return " The alert has no description."


def _namespaced(alert: Alert) -> str:
    namespace = alert.label("namespace")
    return f"{namespace}/{alert.name}" if namespace else alert.name
