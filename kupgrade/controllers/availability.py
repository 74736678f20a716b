"""The version controller's periodic check of the update service (SPEC A3-A5): ask the
upstream service (graph/client.py), evaluate what this cluster may take
(risks/updates.py), and record it on the ClusterVersion.
"""

from __future__ import annotations

import copy

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import remove, set_condition
from kupgrade.controllers.protocol import Progress
from kupgrade.graph.client import ClusterView, fetch
from kupgrade.risks.cache import Cache
from kupgrade.risks.rules import Condition, Registry
from kupgrade.risks.updates import evaluate
from kupgrade.versions.times import rfc3339

REFRESH_INTERVAL = 180.0  # simulated seconds between checks of the update service (SPEC A3)
REFRESH_STATE = "availability:next"


class AvailabilityController:
    """The version controller's periodic check of the update service (SPEC A3, A4).

    It fetches the graph for the cluster's channel and version and records
    availableUpdates, conditionalUpdates and RetrievedUpdates on the ClusterVersion. With
    `throttled`, risk evaluation goes through the version controller's cache
    (`risks/cache.py`): one match call a second across all rules, each rule at most once
    an hour, and a rule not yet evaluated answers with the controller's "client-side
    throttling" failure (Recommended=Unknown) until its turn. The cache lives as long as
    the controller does, as the real one lives in the operator's memory.
    """

    def __init__(
        self,
        api: Backend,
        promql: Condition | None,
        *,
        throttled: bool,
        interval: float = REFRESH_INTERVAL,
    ) -> None:
        self.api = api
        condition = Cache(promql, api.now) if promql is not None and throttled else promql
        self.registry = Registry.standard(condition)
        self.interval = interval

    def sync(self) -> None:
        """The periodic check: refresh when due (the next one's time is kept in the
        cluster, so a restarted controller keeps the period)."""
        now = self.api.now()
        due = float(self.api.state(REFRESH_STATE) or 0)
        if now < due:
            return
        self.refresh(explicit=False)
        self.api.set_state(REFRESH_STATE, now + self.interval)

    def progress(self) -> list[Progress]:
        """A periodic check has no progress to show."""
        return []

    def refresh(self, explicit: bool) -> list[str]:
        """Ask the upstream now and record the answer; the notes a CLI shows.

        An explicit check (`upgrade`) starts RetrievedUpdates afresh with its own
        transition time; the periodic one keeps the condition's time unless its status
        changes.
        """
        found = self.api.get("ClusterVersion", "version")
        if found is None:
            return []
        cv = copy.deepcopy(found)
        status = cv["status"]
        view = ClusterView(
            cv["spec"].get("upstream", ""),
            cv["spec"].get("channel", ""),
            (status.get("desired") or {}).get("version", ""),
            cluster_id=cv["spec"]["clusterID"],
        )
        result = evaluate(view, fetch(view, self.api.now), self.registry, self.api.now)
        status["availableUpdates"] = result.available or None
        status["conditionalUpdates"] = result.conditional or None
        conditions = status.setdefault("conditions", [])
        if explicit:
            remove(conditions, "RetrievedUpdates")
        set_condition(conditions, result.retrieved, rfc3339(self.api.now()))
        if cv != found:  # an unchanged answer is no write (and no motion of the run)
            self.api.write(cv)
        return result.notes
