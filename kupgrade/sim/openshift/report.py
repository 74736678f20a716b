"""What an OpenShift rehearsal reports: how it ended, how long it took (simulated and
real), the ClusterVersion's columns as `oc get clusterversion` shows them, and the
timeline."""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.controllers.version.status import clusterversion_columns
from kupgrade.sim.report import timeline


def openshift_report(
    api: Backend, events: list[dict[str, Any]], run: dict[str, Any], started: float
) -> dict[str, Any]:
    cv = api.get("ClusterVersion", "version") or {"status": {}}
    return {
        **run,
        "clusterversion": clusterversion_columns(cv["status"]),
        "timeline": timeline(events, started),
    }
