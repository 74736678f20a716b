"""SPEC X1, X5, X9: every distributed-cloud and Kubernetes plan case of conformance/skew
fleet.yaml rehearsed as a staged rollout (management clusters, a canary, the rest; a
soak; nightly windows for user clusters) on one virtual clock: every recorded state
keeps every rule, no stage starts before the one ahead of it is done and soaked, no
stage runs more clusters at once than it may, and every windowed step starts and ends
inside its window. A stage order the plan cannot keep (a user cluster that must move
before its manager) is refused with the skew rule, and the other order completes."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kupgrade.sim.store import Store
from tests.support.caseuse import case_params, plain, unused
from tests.support.cli import kupgrade
from tests.support.conformance import conformance_cases, conformance_doc, need_case
from tests.support.fleetcases import OWN_REFUSED
from tests.support.fleetkit import create, gdc_broken, kube_broken, states

FLEET = ("skew", "fleet.yaml")
START = "2026-12-04T20:00:00Z"
T0 = dt.datetime(2026, 12, 4, 20, 0, tzinfo=dt.UTC).timestamp()
NIGHT = {"clusters": {"roles": ["user", "kubernetes"]}, "start": "01:00", "duration": "8h"}
SOAK = 3600.0
RULES = {"G2.user-newer", "G2.user-too-old", "G3.users-first", "G3.skip-minor", "G4.pool-skew"}


def _doc(stages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "kupgrade.io/v1alpha1",
        "kind": "FleetRollout",
        "metadata": {"name": "case"},
        "spec": {"stages": stages, "windows": [NIGHT]},
    }


def _stages(case: dict[str, Any], managers_first: bool) -> list[dict[str, Any]]:
    if case["platform"] == "kubernetes":
        return [{"name": "all", "soak": "1h"}]
    users = [n for n, c in case["fleet"]["clusters"].items() if c.get("role") == "user"]
    managers = {"name": "managers", "clusters": {"roles": ["admin", "hybrid"]}, "soak": "1h"}
    canary = {"name": "canary", "clusters": {"names": users[:1]}, "soak": "1h"}
    rest = {"name": "rest", "clusters": {}, "maxConcurrency": 2}
    return [managers, canary, rest] if managers_first else [canary, rest, managers]


def _rollout(home: Path, case: dict[str, Any], managers_first: bool) -> tuple[int, dict[str, Any]]:
    path = home / "r.yaml"
    path.write_text(yaml.safe_dump(_doc(_stages(case, managers_first))))
    done = kupgrade(
        "fleet",
        "rollout",
        "start",
        str(path),
        "--fleet",
        "f",
        "-o",
        "json",
        env={"KUPGRADE_HOME": str(home)},
    )
    assert "Traceback" not in done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, found


def _interleaves(plan: list[dict[str, Any]]) -> bool:
    """A step of one cluster after a step of another that comes after the first one's."""
    by_id = {s["id"]: s for s in plan}
    cluster = {s["id"]: s["object"].split("/")[1] for s in plan}
    for step in plan:
        for middle in step["after"]:
            for first in by_id[middle]["after"]:
                if cluster[first] == cluster[step["id"]] != cluster[middle]:
                    return True
    return False


def _in_night(at: float, seconds: float) -> bool:
    day = dt.datetime.fromtimestamp(at, dt.UTC).replace(hour=1, minute=0, second=0, microsecond=0)
    opens = day.timestamp()
    return opens <= at and at + seconds <= opens + 8 * 3600


@pytest.mark.parametrize(
    "case",
    [
        *conformance_cases("cases", *FLEET, where=lambda c: c["platform"] in ("gdc", "kubernetes")),
        *case_params(OWN_REFUSED),  # `refused`, which no public case uses yet
    ],
)
def test_fleet_cases_roll_out_in_stages_and_windows(tmp_path: Path, case: Any) -> None:
    case = need_case(case, *FLEET)
    # the published plan is one valid plan (read below only when it interleaves clusters)
    unused(case, "expect.plan", "expect.acceptance", "expect.min_pool_rollouts")
    order = conformance_doc("skew", "gdc.yaml")["release_order_synthetic"]
    if case["platform"] == "gdc":
        doc = {"clusters": plain(case["fleet"]["clusters"]), "release_order": order}
    else:
        doc = {
            "platform": "kubernetes",
            "policy": case["policy"],
            "clusters": {"k": plain(case["cluster"])},
        }
    doc |= {
        "target": case["target"],
        "available": [str(v) for v in case["available"]],
        "simulation": {"start": START, "controlPlanes": 1, "nodesPerPool": 2},
    }
    create(tmp_path, doc)
    code, report = _rollout(tmp_path, case, managers_first=True)
    if "refused" in case["expect"]:
        # No plan at all: refused before any stage, in one line naming the rules and the
        # blocking step, with the fix as its hint.
        want = case["expect"]["refused"]
        assert code == 1 and "error" in report, report
        for rule in want["rules"]:
            assert rule in report["error"]
        if want["step"] is not None:
            step = want["step"]
            assert f"at {step['from']} cannot reach {step['to']}" in report["error"]
            unused(case, "expect.refused.step.object")  # named the platform's way
        unused(case, "expect.refused.fix", "expect.refused.step.id", "expect.refused.step.after")
        assert report["hint"]
        return
    if report["outcome"] == "refused":
        refused = report["refused"]
        assert set(refused["rules"]) <= RULES and "stage" in refused["message"], refused
        assert code == 1
        code, report = _rollout(tmp_path, case, managers_first=False)
        if report["outcome"] == "refused":
            # neither order of whole clusters works: the plan interleaves them (a cluster
            # moves before and after another one's step), and the fix says two passes
            plan = case["expect"]["plan"]
            assert _interleaves(plan), plan
            assert len(plan) == case["expect"]["min_steps"]
            step = report["refused"]["step"]
            assert (step["from"], step["to"]) in {(s["from"], s["to"]) for s in plan}
            assert "two passes" in report["refused"]["fix"]
            return
    assert code == 0 and report["outcome"] == "completed", report.get("halt") or report.get(
        "refused"
    )
    assert len(report["steps"]) == case["expect"]["min_steps"]

    store = Store(tmp_path / "fleets" / "f" / "fleet.db")
    try:
        recorded = states(store.events())
    finally:
        store.close()
    for at, state in recorded:
        if case["platform"] == "gdc":
            assert gdc_broken(doc, state) == [], at
        else:
            assert kube_broken(state["k"], case["policy"]) == [], at

    stages = {s["name"]: s for s in report["stages"]}
    names = [s["name"] for s in report["stages"]]
    by_id = {s["id"]: s for s in report["steps"]}
    for step in report["steps"]:
        assert step["startedAt"] >= max([by_id[a]["finishedAt"] for a in step["after"]], default=0)
        index = names.index(step["stage"])
        before = [stages[n] for n in names[:index] if any(s["stage"] == n for s in report["steps"])]
        for stage in before:
            assert step["startedAt"] >= stage["doneAt"] + SOAK - 1e-6, (step, stage)
        role_windowed = case["platform"] == "kubernetes" or step["cluster"] in [
            n for n, c in doc["clusters"].items() if c.get("role") == "user"
        ]
        if role_windowed:
            assert _in_night(T0 + step["startedAt"], step["forecastSeconds"]), step
    rest = [s for s in report["steps"] if s["stage"] == "rest"]
    for s in rest:
        at_once = {r["cluster"] for r in rest if r["startedAt"] <= s["startedAt"] < r["finishedAt"]}
        assert len(at_once) <= 2
