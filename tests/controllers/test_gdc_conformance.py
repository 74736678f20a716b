"""The distributed-cloud conformance data replayed on simulated clusters, not only on the
planner: the stage order and status fields of fleet.yaml's gdc-stages case (SPEC G8,
G9), the drain policy of drain.yaml's gdc_drain cases (SPEC G11), and every upgrade
request of gdc.yaml refused or allowed by `kupgrade upgrade` (SPEC G2-G4, X4)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kupgrade.cluster.gdc import NODE_STATE
from kupgrade.controllers.gdc.rollout import DRAINING, honours_budgets
from kupgrade.sim.profile import Budget, Change, Fault, Pool, Workload
from tests.support.caseuse import plain, unused
from tests.support.cli import run_cli
from tests.support.conformance import conformance_cases, conformance_doc, need_case
from tests.support.gdckit import events, gdc_spec, make, rehearse, spec_with, stage_times
from tests.support.sim import runner as sim_loop

FLEET = ("skew", "fleet.yaml")
DRAIN = ("skew", "drain.yaml")
GDC = ("skew", "gdc.yaml")


# --- SPEC G8, G9: stages and status fields on a rehearsal --------------------------------


def _shape_spec(cluster: dict[str, Any], role: str) -> Any:
    pools = [Pool("control-plane", 2)]
    if cluster["loadBalancerNodePool"]:
        pools.append(Pool("load-balancer", 2))
    pools += [Pool(name, 2) for name in cluster["workerNodePools"]]
    return gdc_spec(
        cluster["version"],
        role=role,
        pools=pools,
        load_balancer="bundled" if cluster["controlPlaneLoadBalancer"] else "manual",
        managed_by="admin" if role == "user" else None,
    )


@pytest.mark.parametrize(
    "case", conformance_cases("cases", *FLEET, where=lambda c: c["platform"] == "gdc-stages")
)
def test_stage_order_and_status_fields_hold_on_a_rehearsal(case: Any, tmp_path: Path) -> None:
    case = need_case(case, *FLEET)
    unused(case, "expect.acceptance")  # prose of the partial order checked below
    cluster = plain(case["cluster"])
    expected = {s["id"]: s["after"] for s in plain(case["expect"]["stages"])}
    groups = plain(case["expect"]["status_fields_in_order"])
    # A user cluster has exactly G8's stages; a self-managed one adds G10's own and writes
    # the lifecycle controllers' field (the case lists every field: its role is not said).
    for role in ("user", "standalone"):
        store, outcome = rehearse(tmp_path, role, _shape_spec(cluster, role), case["target"])
        assert outcome.reason == "completed"
        times = stage_times(store)
        g10 = {"preflight-check-operator", "lifecycle-controllers", "cluster-operator"}
        assert set(times) == set(expected) | (g10 if role != "user" else set())
        for stage, after in expected.items():
            start, done = times[stage]
            assert done is not None
            ready = max((times[a][1] for a in after), default=times[stage][0])
            assert ready is not None and start >= ready, stage
            if role == "user" and after:
                # Each stage starts the moment its last predecessor is done: stages with
                # the same predecessors run in parallel, nothing waits for more than G8 says.
                assert start == ready, stage
        filled = [e["message"].split(":")[0] for e in events(store, "StatusField")]
        wanted = [
            [f for f in g if role != "user" or "LifecycleControllers" not in f] for g in groups
        ]
        assert sorted(filled) == sorted(f for g in wanted for f in g)
        position = {f: i for i, f in enumerate(filled)}
        for earlier, later in itertools.pairwise(wanted):
            assert max(position[f] for f in earlier) < min(position[f] for f in later)
        own = store.list("Cluster")[0]
        assert own["status"]["anthosBareMetalVersion"] == own["spec"]["anthosBareMetalVersion"]
        assert own["spec"]["anthosBareMetalVersion"] == case["target"]


# --- SPEC G11: drains on a rehearsal -------------------------------------------------------

TARGETS = {
    "gdc-1.28": ("1.16.9", "1.28.500-gke.120"),
    "gdc-1.29": ("1.28.500-gke.120", "1.29.100-gke.251"),
}


def _drain_spec(case: dict[str, Any]) -> tuple[Any, str]:
    """One worker node holding the budget's pods. Whatever holds its last pod lets go at
    `pdb_blocks_until_minute`: from 1.29 the budget relaxes then; up to 1.28, where budgets
    are ignored, the pod stops then. Never: it does not; null: no time is given, so the
    pods never stop on their own."""
    source, target = TARGETS[case["input"]["platform"]]
    until = case["input"]["pdb_blocks_until_minute"]
    budget = plain(case["input"]["pdb"])
    replicas = case["input"]["replicas"]
    honoured = honours_budgets(target)
    stuck = until is None or (until == "never" and not honoured)
    seconds = 0.0 if honoured or not isinstance(until, int) else until * 60.0
    workload = Workload(
        "db",
        "data",
        replicas,
        pool="worker",
        pdb=Budget(budget.get("minAvailable"), budget.get("maxUnavailable")),
        termination_seconds=seconds,
        start_seconds=0,
    )
    changes = []
    if honoured and isinstance(until, int):
        relax = {"minAvailable": None, "maxUnavailable": "100%"}
        changes.append(Change(until, "PodDisruptionBudget", "db", relax, "data"))
    spec = gdc_spec(
        source, pools=[Pool("control-plane", 1), Pool("worker", 1)], preflight_minutes=(0, 0)
    )
    faults = [Fault(pod="data/db")] if stuck else []
    return spec_with(spec, workloads=[workload], changes=changes, faults=faults), target


@pytest.mark.parametrize(
    "case", conformance_cases("cases", *DRAIN, where=lambda c: c["section"] == "gdc_drain")
)
def test_gdc_drain_policy_holds_on_a_rehearsal(case: Any, tmp_path: Path) -> None:
    case = need_case(case, *DRAIN)
    spec, target = _drain_spec(case)
    # Upgrade only the worker pool: its one node starts draining when the run starts.
    store, _ = rehearse(
        tmp_path, "c", spec, target, max_seconds=case["input"]["minute"] * 60.0, pool="worker"
    )
    node = store.get("Node", "worker-0")
    assert node is not None
    draining = node["metadata"]["annotations"].get(NODE_STATE) == DRAINING
    got: dict[str, Any] = {
        "node_state": "draining" if draining else "maintenance",
        "upgrade_continues": not draining,
        "pdb_honoured": honours_budgets(target),
        "pods_evicted_via": "Eviction API" if honours_budgets(target) else "taint (best effort)",
    }
    removed = {e["reason"] for e in events(store, "Evicted", "Deleted")}
    if got["pdb_honoured"]:
        assert "Deleted" not in removed
        blocked = [e for e in events(store, "EvictionBlocked") if "budget" in e["message"]]
        got["eviction_status"] = 429 if (blocked and draining) or (blocked and not removed) else 200
    else:
        assert "Evicted" not in removed and not events(store, "EvictionBlocked")
    expect = case["expect"]
    assert {k: got[k] for k in expect} == dict(expect)


def test_from_1_29_the_eviction_api_decides_pod_by_pod(tmp_path: Path) -> None:
    """A budget with room lets pods go through the Eviction API one by one until it has
    none (minAvailable 1 of 3 on one node: two go, the third is refused naming the
    budget); up to 1.28 the same budget holds nothing and no eviction is asked."""
    case = {
        "input": {
            "platform": "gdc-1.29",
            "pdb": {"minAvailable": 1},
            "replicas": 3,
            "pdb_blocks_until_minute": "never",
            "minute": 10,
        }
    }
    spec, target = _drain_spec(case)
    store, _ = rehearse(tmp_path, "new", spec, target, max_seconds=600.0, pool="worker")
    assert len(events(store, "Evicted")) == 2 and not events(store, "Deleted")
    (blocked,) = events(store, "EvictionBlocked")
    assert "The disruption budget db needs 1 healthy pods and has 1 currently" in blocked["message"]
    case["input"]["platform"] = "gdc-1.28"
    spec, target = _drain_spec(case)
    store, _ = rehearse(tmp_path, "old", spec, target, max_seconds=600.0, pool="worker")
    assert len(events(store, "Deleted")) == 3
    assert not events(store, "Evicted") and not events(store, "EvictionBlocked")


# --- SPEC G2-G4: upgrade requests refused before anything changes --------------------------


def _fleet_home(tmp_path: Path, case: dict[str, Any]) -> Path:
    """Every cluster of the case's fleet as a simulated cluster, managers first."""
    clusters = plain(case["fleet"]["clusters"])
    order = sorted(clusters, key=lambda n: clusters[n].get("managed_by") is not None)
    for name in order:
        c = clusters[name]
        pools = [Pool("control-plane", 1)] + [
            Pool(p, 1, version=v) for p, v in (c.get("pools") or {}).items()
        ]
        spec = gdc_spec(
            c["version"],
            role=c["role"],
            pools=pools,
            managed_by=c.get("managed_by"),
            annotations=c.get("annotations") or {},
        )
        make(tmp_path, name, spec).close()
    doc = conformance_doc(*GDC)
    releases = tmp_path / "releases.yaml"
    releases.write_text(
        yaml.safe_dump(
            {"release_line": doc["release_line"], "release_order": doc["release_order_synthetic"]}
        )
    )
    return releases


def _snapshot(home: Path) -> dict[str, Any]:
    out = {}
    for db in sorted(home.glob("clusters/*/cluster.db")):
        run = run_cli(["get", "clusters", "--cluster", db.parent.name, "-o", "json"], home)
        out[db.parent.name] = run.stdout
    return out


@pytest.mark.parametrize(
    "case", conformance_cases("cases", *GDC, where=lambda c: c["kind"] == "request")
)
def test_upgrade_requests_are_judged_on_the_simulated_fleet(case: Any, tmp_path: Path) -> None:
    case = need_case(case, *GDC)
    releases = _fleet_home(tmp_path, case)
    request = plain(case["request"])
    if "pool" in request:
        args = ["--cluster", request["nodepool_of"], "--nodepool", request["pool"]]
    else:
        args = ["--cluster", request["cluster"], "--bmctl", request["bmctl"]]
        if request.get("leave_pools"):
            args += ["--leave-pools", ",".join(request["leave_pools"])]
    before = _snapshot(tmp_path)
    run = run_cli(
        ["upgrade", *args, "--to", request["to"], "--releases", str(releases), "-o", "json"],
        tmp_path,
    )
    doc = json.loads(run.stdout)
    verdict = doc["verdict"]
    expect = case["expect"]
    assert (verdict["verdict"], verdict["rules"], verdict["warnings"]) == (
        expect["verdict"],
        sorted(expect["rules"]),
        sorted(expect["warnings"]),
    )
    if expect["verdict"] == "refused":
        assert run.exit_code == 1 and doc["changed"] is False
        assert _snapshot(tmp_path) == before  # nothing changed, in any cluster
        for finding in verdict["findings"]:
            assert finding["objects"] and finding["fix"]
    else:
        assert run.exit_code == 0, run.stderr
        assert doc["request"]["target"] == request["to"]
        name = request.get("cluster") or request["nodepool_of"]
        state = json.loads(run_cli(["upgrade", "--cluster", name, "-o", "json"], tmp_path).stdout)
        assert state["upgrade"]["target"] == request["to"]
        # A second request while one is recorded is refused.
        again = run_cli(
            ["upgrade", *args, "--to", request["to"], "--releases", str(releases)], tmp_path
        )
        assert again.exit_code == 1 and "in progress" in again.stderr


def test_the_runner_reports_no_upgrade_as_idle(tmp_path: Path) -> None:
    store = make(tmp_path, "quiet", gdc_spec("1.29.100-gke.251"))
    outcome = sim_loop(store.path.parent, store, gdc_spec("1.29.100-gke.251")).run()
    assert outcome.reason == "idle" and not events(store, "StageStarted")
