"""Update availability as a controller of the rehearsal (issue 18, SPEC A4): its risk
evaluation goes through the version controller's throttled cache, so a cluster whose
risks are evaluated more often than the throttle allows shows the controller's
"client-side throttling" message in conditionalUpdates, until each rule's turn comes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kupgrade.controllers.availability import REFRESH_STATE, AvailabilityController
from kupgrade.risks.promql import load_snapshot
from kupgrade.risks.promql.engine import evaluate_text
from kupgrade.risks.rules import PromQLCondition
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.profile import Pool, Profile, Spec
from kupgrade.sim.store import Store
from tests.support.service import serving

THROTTLED = (
    "client-side throttling: only 0s has elapsed since the last match call completed for "
    "this cluster condition backend"
)


def _recommended(store: Store) -> list[dict[str, Any]]:
    cv = store.get("ClusterVersion", "version")
    assert cv is not None
    return [
        next(c for c in u["conditions"] if c["type"] == "Recommended")
        for u in cv["status"].get("conditionalUpdates") or []
    ]


RULES = ["vector(0)", "vector(1) - 1", "count(up) - 1"]  # distinct queries, none matches


def _graph() -> bytes:
    nodes = [
        {
            "version": v,
            "payload": f"quay.io/openshift-release-dev/ocp-release@sha256:{c * 64}",
            "metadata": {"io.openshift.upgrades.graph.release.channels": "stable-4.14"},
        }
        for v, c in (("4.13.40", "a"), ("4.14.2", "b"))
    ]
    risks = [
        {
            "url": f"https://example.com/{i}",
            "name": f"Risk{i}",
            "message": f"risk {i}",
            "matchingRules": [{"type": "PromQL", "promql": {"promql": expr}}],
        }
        for i, expr in enumerate(RULES)
    ]
    doc = {
        "nodes": nodes,
        "edges": [],
        "conditionalEdges": [{"edges": [{"from": "4.13.40", "to": "4.14.2"}], "risks": risks}],
    }
    return json.dumps(doc).encode()


@pytest.mark.parametrize("throttled", [True, False])
def test_risks_are_throttled_in_a_rehearsal(tmp_path: Path, throttled: bool) -> None:
    metrics = tmp_path / "m.om"
    metrics.write_text('# TYPE up gauge\nup{job="a"} 1 1700000000\n# EOF\n')
    with serving(_graph()) as upstream:
        spec = Spec(
            version="4.13.40",
            channel="stable-4.14",
            upstream=upstream + "/graph",
            pools=[Pool("master", 1), Pool("worker", 1)],
        )
        store = Store(create_cluster(tmp_path, "c", Profile(spec=spec)) / "cluster.db")
        snapshot = load_snapshot(metrics)
        at = snapshot.latest_ms or 0
        promql = PromQLCondition(lambda expr: evaluate_text(expr, snapshot, at))
        controller = AvailabilityController(SimCluster(store), promql, throttled=throttled)
        controller.refresh(explicit=False)
        (first,) = _recommended(store)
        if not throttled:
            # The one-shot evaluation: every rule evaluated at once, none matches.
            assert (first["status"], first["reason"]) == ("True", "NotExposedToRisks")
            return
        # One match call at a time: the rules after the first wait, their exposure unknown
        # with the controller's text (SPEC A4).
        assert first["status"] == "Unknown"
        assert first["message"].count("is unknown due to an evaluation failure: " + THROTTLED) == 2
        # Each later check (three virtual minutes apart) spends its one call on the
        # stalest rule somebody asked for, until none waits.
        checks = 0
        now = first
        while THROTTLED in now["message"]:
            checks += 1
            assert checks < 10, "throttled rules never got their turn"
            store.set_meta("now", float(store.meta("now", 0)) + 180)
            controller.refresh(explicit=False)
            (now,) = _recommended(store)
        assert checks == 2 and now["status"] == "True"


def test_the_periodic_check_runs_when_due(tmp_path: Path) -> None:
    """As a Controller, availability keeps when it next wants to run in the cluster (so a
    restarted controller keeps the period) and does nothing before then (the run loop
    calls it at every step)."""
    with serving(_graph()) as upstream:
        spec = Spec(upstream=upstream + "/graph", pools=[Pool("master", 1), Pool("worker", 1)])
        store = Store(create_cluster(tmp_path, "c", Profile(spec=spec)) / "cluster.db")
        api = SimCluster(store)
        controller = AvailabilityController(api, None, throttled=True, interval=180.0)
        now = api.now()
        controller.sync()
        assert api.state(REFRESH_STATE) == now + 180.0
        cv = store.get("ClusterVersion", "version")
        assert cv is not None
        stamp = next(c for c in cv["status"]["conditions"] if c["type"] == "RetrievedUpdates")[
            "lastTransitionTime"
        ]
        store.set_meta("now", now + 60)
        controller.sync()
        assert api.state(REFRESH_STATE) == now + 180.0  # not due: no second fetch
        store.set_meta("now", now + 200)
        controller.sync()
        assert api.state(REFRESH_STATE) == now + 380.0
        assert stamp
