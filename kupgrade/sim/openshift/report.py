"""What an OpenShift rehearsal reports: how it ended, how long it took (simulated and
real), the ClusterVersion's columns as `oc get clusterversion` shows them, and the
timeline."""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import conditions_row, operator_row
from kupgrade.controllers.version.record import version_state
from kupgrade.controllers.version.status import clusterversion_columns
from kupgrade.sim.report import timeline
from kupgrade.versions.times import parse_time


def openshift_report(
    api: Backend, events: list[dict[str, Any]], run: dict[str, Any], started: float
) -> dict[str, Any]:
    cv = api.get("ClusterVersion", "version") or {"status": {}}
    return {
        **run,
        "clusterversion": clusterversion_columns(cv["status"]),
        "timeline": timeline(events, started),
    }


def live_status(api: Backend) -> dict[str, Any]:
    """The ClusterVersion's name, columns, conditions and history, the release the update
    goes to, every ClusterOperator, and when the update began (history's newest entry,
    which outlives the version controller's state of it)."""
    cv = api.get("ClusterVersion", "version") or {"status": {}}
    status = cv.get("status") or {}
    state = version_state(api)
    history = status.get("history") or []
    operators = {o["metadata"]["name"]: o for o in api.list("ClusterOperator")}
    return {
        "name": "version",
        "headline": clusterversion_columns(status),
        "target": state.version or (status.get("desired") or {}).get("version", ""),
        "conditions": [conditions_row(c) for c in status.get("conditions") or []],
        "history": [
            {k: h.get(k) for k in ("state", "version", "startedTime", "completionTime")}
            for h in history
        ],
        "operators": [operator_row(o) for _, o in sorted(operators.items())],
        "since": parse_time(history[0].get("startedTime")) if history else 0.0,
    }
