"""Budget arithmetic, the Eviction API and kubectl drain's filters
(conformance/skew/drain.yaml; its distributed-cloud drains are rehearsed in
tests/controllers/test_gdc_conformance.py) and other engines' rollout arithmetic
(rollout.yaml)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kupgrade.cluster.disruption import budget_status, eviction
from kupgrade.cluster.drain import DAEMONSET_FATAL, DrainPod, Flags
from kupgrade.plan.engines import rollout
from tests.support.caseuse import case_params, unused
from tests.support.cli import kupgrade
from tests.support.conformance import conformance_cases, conformance_doc, need_case
from tests.support.drainpods import judged


def _cases(section: str) -> list[Any]:
    return conformance_cases(
        "cases", "skew", "drain.yaml", where=lambda c: c.get("section") == section
    )


@pytest.mark.parametrize("case", _cases("pdb_status"))
def test_pdb_status(case: Any) -> None:
    case = need_case(case, "skew", "drain.yaml")
    inp = case["input"]
    assert budget_status(inp["pdb"], inp["expectedPods"], inp["currentHealthy"]) == case["expect"]


@pytest.mark.parametrize("case", _cases("eviction"))
def test_eviction_answer(case: Any) -> None:
    case = need_case(case, "skew", "drain.yaml")
    inp = case["input"]
    pods = inp["pods"]
    spec = inp.get("pdb")
    budgets = []
    if inp.get("pdbs_selecting_pod", 1 if spec else 0) > 1:
        budgets = [("a", {"maxUnavailable": 1}, budget_status({"maxUnavailable": 1}, 1, 1))] * 2
    elif spec is not None:
        healthy = sum(1 for p in pods if p == "ready")
        budgets = [("pdb", spec, budget_status(spec, len(pods), healthy))]
    ready = pods[inp["evict"]] == "ready"
    if ready:  # the policy is only about pods that are not ready
        unused(case, "input.pdb.unhealthyPodEvictionPolicy")
    answer = eviction(ready, budgets)
    assert answer.code == case["expect"]["status"]


# README 7 lists kubectl's filters in order: deleted, DaemonSet, mirror, local storage,
# unreplicated. No public case has a mirror pod or one deleted long ago; this one does
# (`mirror`, `deleted_seconds_ago`: how long ago its deletionTimestamp was set).
OWN_KUBECTL_DRAIN: dict[str, Any] = {
    "id": "own/drain/kubectl-mirror-and-deleted",
    "section": "kubectl_drain",
    "input": {
        "flags": ["--ignore-daemonsets", "--skip-wait-for-delete-timeout=60"],
        "namespace": "default",
        "pods": [
            {"name": "static", "mirror": True},
            {"name": "gone", "owner": "ReplicaSet", "deleted_seconds_ago": 600},
            {"name": "going", "owner": "ReplicaSet", "deleted_seconds_ago": 30},
            {"name": "web", "owner": "ReplicaSet"},
            {"name": "ds", "owner": "DaemonSet"},
        ],
    },
    # the mirror pod and the pod deleted past the timeout are skipped without a word
    "expect": {
        "errors": [],
        "warnings": [{"message": "ignoring DaemonSet-managed Pods", "pods": ["default/ds"]}],
        "evicted": ["default/going", "default/web"],
    },
}


@pytest.mark.parametrize(
    "case",
    _cases("kubectl_drain")
    + case_params([OWN_KUBECTL_DRAIN], where=lambda c: c["section"] == "kubectl_drain"),
)
def test_kubectl_drain(case: Any) -> None:
    case = need_case(case, "skew", "drain.yaml")
    inp = case["input"]
    pods = [
        DrainPod(
            p["name"],
            inp["namespace"],
            p.get("owner", "none"),
            p.get("emptyDir", False),
            p.get("phase", "Running"),
            p.get("mirror", False),
            p.get("deleted_seconds_ago"),
        )
        for p in inp["pods"]
    ]
    assert judged(pods, Flags.of(inp["flags"])).to_json() == case["expect"]


def test_kubectl_drain_aggregates_and_skips() -> None:
    """Errors group pods by message; mirror and long-deleted pods are skipped silently."""
    pods = [
        DrainPod("a", owner="DaemonSet"),
        DrainPod("b", owner="DaemonSet"),
        DrainPod("static", mirror=True),
        DrainPod("old", deleted_seconds_ago=600),
        DrainPod("web", owner="ReplicaSet"),
    ]
    result = judged(pods, Flags.of(["--skip-wait-for-delete-timeout=60"])).to_json()
    assert result["errors"] == [
        {"message": "cannot delete " + DAEMONSET_FATAL, "pods": ["default/a", "default/b"]}
    ]
    assert result["evicted"] == []  # any error aborts before evicting
    ignoring = Flags.of(["--ignore-daemonsets", "--skip-wait-for-delete-timeout=60"])
    assert judged(pods, ignoring).evicted == ["default/web"]


@pytest.mark.parametrize("case", conformance_cases("cases", "skew", "rollout.yaml"))
def test_rollout_engines(case: Any) -> None:
    case = need_case(case, "skew", "rollout.yaml")
    got = rollout(case["engine"], case["input"])
    assert {k: got.get(k) for k in case["expect"]} == case["expect"]


def test_rollout_command(tmp_path: Path) -> None:
    """`kupgrade rollout` answers every rollout.yaml case as the function does, and turns a
    missing setting into one line naming the file."""

    cases = conformance_doc("skew", "rollout.yaml")["cases"]
    for case in cases:
        settings = tmp_path / f"{case['id'].replace('/', '_')}.yaml"
        settings.write_text(json.dumps(case["input"]))
        done = kupgrade("rollout", case["engine"], str(settings), "-o", "json")
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
        assert {k: got.get(k) for k in case["expect"]} == case["expect"], case["id"]
    empty = tmp_path / "empty.yaml"
    empty.write_text("{}\n")
    done = kupgrade("rollout", "capi-machinedeployment", str(empty))
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: {empty}: capi-machinedeployment needs replicas"


def test_a_refused_eviction_names_the_budget_as_the_api_does() -> None:
    answer = eviction(True, [("db", {"minAvailable": 2}, budget_status({"minAvailable": 2}, 2, 2))])
    assert (answer.code, answer.message) == (
        429,
        "Cannot evict pod as it would violate the pod's disruption budget.",
    )
    assert answer.cause == "The disruption budget db needs 2 healthy pods and has 2 currently"
