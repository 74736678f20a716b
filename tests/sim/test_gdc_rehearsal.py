"""Distributed-cloud upgrades rehearsed on simulated bare-metal clusters (SPEC G1,
G6-G11, X2): drains by the target's policy, preflight checks that block, health checks
repeated until they pass, self-managed clusters in place or through a bootstrap cluster,
pools left behind, and what the report says."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kupgrade.cluster.gdc import NODE_STATE, NODE_VERSION, pool_of
from kupgrade.controllers.gdc.request import request_upgrade
from kupgrade.controllers.gdc.rollout import max_parallel
from kupgrade.errors import InputError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.loop import Outcome
from kupgrade.sim.profile import Budget, Fault, Pool, Workload
from kupgrade.sim.store import Store
from tests.support.cli import run_cli
from tests.support.gdckit import events, gdc_spec, make, rehearse, spec_with, stage_times
from tests.support.sim import runner as sim_loop

OLD, MID, NEW = "1.16.9", "1.28.500-gke.120", "1.29.100-gke.251"
TIGHT = [Workload("db", "data", 2, pool="worker", pdb=Budget(min_available=2))]


def _report(store: Any, spec: Any, outcome: Outcome) -> dict[str, Any]:
    return sim_loop(store.path.parent, store, spec).report(
        outcome, float(store.events()[0]["at"]), 0.0
    )


def test_a_budget_that_never_allows_is_ignored_up_to_1_28(tmp_path: Path) -> None:
    spec = spec_with(
        gdc_spec(OLD, pools=[Pool("control-plane", 1), Pool("worker", 3)]), workloads=TIGHT
    )
    store, outcome = rehearse(tmp_path, "old", spec, MID)
    assert outcome.reason == "completed"
    assert not events(store, "EvictionBlocked", "DrainTimeout")
    assert {e["object"] for e in events(store, "Deleted")} >= {"pod/data/db-00000"}
    nodes = store.list("Node")
    assert {n["metadata"]["annotations"][NODE_VERSION] for n in nodes} == {MID}
    assert all(n["status"]["nodeInfo"]["kubeletVersion"] == "v1.28.0" for n in nodes)


def test_from_1_29_the_drain_waits_on_the_budget_and_names_it(tmp_path: Path) -> None:
    spec = spec_with(
        gdc_spec(MID, pools=[Pool("control-plane", 1), Pool("worker", 3)]), workloads=TIGHT
    )
    store, outcome = rehearse(tmp_path, "new", spec, NEW)
    assert outcome.reason == "completed"
    blocked = events(store, "EvictionBlocked")
    assert blocked and all("disruption budget db" in e["message"] for e in blocked)
    assert not events(store, "Deleted")
    # Each held node waits past the documented 20-minute timeout, then goes on.
    starts = {e["object"]: e["at"] for e in events(store, "Drain")}
    for e in events(store, "DrainTimeout"):
        assert e["at"] - starts[e["object"]] > 20 * 60
        assert "db" in e["message"]
    drains = _report(store, spec, outcome)["drains"]
    assert drains and all(d["minutes"] >= 20 for d in drains)
    assert all(any("disruption budget db" in w for w in d["why"]) for d in drains)


def test_a_blocking_preflight_finding_stops_before_the_spec_changes(tmp_path: Path) -> None:
    fault = Fault(preflight="network-health", message="node 10.0.0.5 cannot reach the VIP")
    spec = spec_with(gdc_spec(MID), faults=[fault])
    store, outcome = rehearse(tmp_path, "c", spec, NEW)
    assert outcome.reason == "idle"
    assert list(stage_times(store)) == ["preflight-check-operator", "preflight"]
    cluster = store.list("Cluster")[0]
    assert cluster["spec"]["anthosBareMetalVersion"] == MID  # G1: never set
    check = store.list("PreflightCheck")[0]
    assert check["status"]["pass"] is False
    assert check["status"]["checks"]["network-health"] == {
        "passed": False,
        "message": "node 10.0.0.5 cannot reach the VIP",
    }
    assert "cannot reach the VIP" in sim_loop(store.path.parent, store, spec).failing()  # type: ignore[operator]
    reason = next(c for c in cluster["status"]["conditions"] if c["type"] == "Reconciling")
    assert reason["reason"] == "PreflightCheckFailed" and "VIP" in reason["message"]


def test_health_checks_run_again_until_all_pass(tmp_path: Path) -> None:
    fault = Fault(node="worker-1", health_failures=3, message="kubelet certificate expired")
    spec = spec_with(gdc_spec(MID, health_check_seconds=120), faults=[fault])
    store, outcome = rehearse(tmp_path, "c", spec, NEW)
    assert outcome.reason == "completed"
    failed = [e for e in events(store, "CheckFailed") if e["object"].startswith("healthcheck/")]
    assert len(failed) == 3 and all("kubelet certificate" in e["message"] for e in failed)
    passed = [e for e in events(store, "CheckPassed") if e["object"].startswith("healthcheck/")]
    assert len(passed) == 1
    rounds = [e["at"] for e in failed] + [passed[0]["at"]]
    assert all(b - a >= 120 for a, b in itertools.pairwise(rounds))
    health = store.list("HealthCheck")[0]
    assert health["spec"]["round"] == 4 and health["status"]["pass"] is True


def test_a_bootstrap_cluster_owns_the_resources_during_the_upgrade(tmp_path: Path) -> None:
    spec = gdc_spec(MID, role="admin")
    store = make(tmp_path, "admin", spec)
    run = run_cli(["upgrade", "--cluster", "admin", "--to", NEW, "--use-bootstrap"], tmp_path)
    assert run.exit_code == 0, run.stderr
    store.close()
    store = make_store(tmp_path, "admin")
    seen: list[tuple[str, str, str]] = []

    def look(r: Any) -> None:
        own = next(
            c for c in r.transport.store.list("Cluster") if ":" not in c["metadata"]["namespace"]
        )
        copies = [c for c in r.transport.store.list("Cluster") if ":" in c["metadata"]["namespace"]]
        if copies:
            seen.append(
                (
                    own["spec"]["anthosBareMetalVersion"],
                    copies[0]["spec"]["anthosBareMetalVersion"],
                    copies[0]["status"]["anthosBareMetalVersion"],
                )
            )

    outcome = sim_loop(store.path.parent, store, spec).run(on_step=look)
    assert outcome.reason == "completed"
    # While pivoted the cluster's own Cluster stays as it was; the copy shows progress.
    assert seen and all(own == MID for own, _, _ in seen)
    assert seen[-1][1] == NEW
    assert [c["metadata"]["namespace"] for c in store.list("Cluster")] == ["cluster-admin"]
    assert store.list("Cluster")[0]["status"]["anthosBareMetalVersion"] == NEW
    times = stage_times(store)
    assert times["bootstrap-pivot"][0] >= times["preflight"][1]  # type: ignore[operator]
    assert times["bootstrap-pivot-back"][0] >= times["health-checks"][1]  # type: ignore[operator]
    assert "preflight-check-operator" not in times
    assert [e["reason"] for e in events(store, "Pivot", "PivotBack")] == ["Pivot", "PivotBack"]


def make_store(home: Path, name: str) -> Store:
    return Store(home / "clusters" / name / "cluster.db")


def test_in_place_self_managed_steps_come_first(tmp_path: Path) -> None:
    store, outcome = rehearse(tmp_path, "h", gdc_spec(MID, role="hybrid"), NEW)
    assert outcome.reason == "completed"
    times = stage_times(store)
    order = sorted(times, key=lambda s: (times[s][0], s))
    assert order[:2] == ["preflight-check-operator", "preflight"]
    assert times["lifecycle-controllers"][0] >= times["set-spec-version"][1]  # type: ignore[operator]
    assert times["control-plane-load-balancer"][0] >= times["cluster-operator"][1]  # type: ignore[operator]


def test_left_pools_keep_their_version_and_a_pool_upgrades_alone(tmp_path: Path) -> None:
    pools = [Pool("control-plane", 1), Pool("w1", 2), Pool("w2", 2)]
    store, outcome = rehearse(tmp_path, "c", gdc_spec(MID, pools=pools), NEW, leave_pools=["w2"])
    assert outcome.reason == "completed"
    versions = {
        n["metadata"]["name"]: n["metadata"]["annotations"][NODE_VERSION]
        for n in store.list("Node")
    }
    assert versions == {"control-plane-0": NEW, "w1-0": NEW, "w1-1": NEW, "w2-0": MID, "w2-1": MID}
    assert "worker-node-pool/w2" not in stage_times(store)
    cluster = store.list("Cluster")[0]
    assert cluster["status"]["anthosBareMetalVersions"] == {MID: 2, NEW: 3}
    pool = store.get("NodePool", "w2", "cluster-c")
    assert pool is not None and pool["spec"]["anthosBareMetalVersion"] == MID
    # Later the pool follows on its own: only its stage runs, the cluster is not touched.
    request_upgrade(SimCluster(store), NEW, bmctl=NEW, pool="w2")
    store.commit()
    spec = gdc_spec(MID, pools=pools)
    assert sim_loop(store.path.parent, store, spec).run().reason == "completed"
    assert {n["metadata"]["annotations"][NODE_VERSION] for n in store.list("Node")} == {NEW}
    assert [s for s in stage_times(store) if s.startswith("worker")] == [
        "worker-node-pool/w1",
        "worker-node-pool/w2",
    ]


def test_the_report_measures_downtime_against_the_seeds_table(tmp_path: Path) -> None:
    spec = spec_with(
        gdc_spec(MID, role="user", managed_by="admin"),
        faults=[Fault(component="stackdriver", slow=4)],
    )
    store, outcome = rehearse(tmp_path, "u", spec, NEW)
    report = _report(store, spec, outcome)
    rows = {r["component"]: r for r in report["downtime"]}
    assert {"metallb", "coredns", "stackdriver", "keepalived"} <= set(rows)  # user cluster
    assert rows["stackdriver"]["within"] is False and rows["stackdriver"]["boundMinutes"] == 5
    assert rows["keepalived"]["within"] is True
    assert rows["coredns"]["measuredMinutes"] == 0
    fields = [f["field"] for f in report["statusFields"]]
    assert fields[0] == "status.controlPlaneNodepoolStatus"
    assert fields[-1] == "status.anthosBareMetalVersion"
    assert "status.anthosBareMetalLifecycleControllersManifestsVersion" not in fields
    assert report["cluster"]["ABM VERSION"] == NEW


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    concurrent=st.integers(1, 4),
    minimum=st.integers(0, 4),
    nodes=st.integers(1, 5),
    replicas=st.integers(1, 6),
    target=st.sampled_from([MID, NEW]),
)
def test_rollouts_keep_their_limits(
    tmp_path_factory: Any, concurrent: int, minimum: int, nodes: int, replicas: int, target: str
) -> None:
    """Whatever the pool's parallelUpgradeConfig and budgets: control-plane nodes one at
    a time, worker nodes at most min(concurrentNodes, nodes - minimumAvailable) at once,
    every node at the target in the end (or the pool stalls and says why)."""
    home = tmp_path_factory.mktemp("gdc")
    source = OLD if target == MID else MID
    pools = [
        Pool("control-plane", 3),
        Pool("worker", nodes, concurrent_nodes=concurrent, minimum_available=minimum),
    ]
    work = [Workload("web", "shop", replicas, pool="worker", pdb=Budget(max_unavailable=1))]
    spec = spec_with(gdc_spec(source, pools=pools), workloads=work)
    store, outcome = rehearse(home, "p", spec, target)
    pool = store.get("NodePool", "worker", "cluster-p")
    assert pool is not None
    limit = max_parallel(pool, nodes)
    busy: dict[str, set[str]] = {}
    for e in events(store, "Drain", "Done"):
        node = store.get("Node", e["object"].removeprefix("node/"))
        assert node is not None
        group = busy.setdefault(pool_of(node), set())
        (group.add if e["reason"] == "Drain" else group.discard)(node["metadata"]["name"])
        assert len(group) <= (limit if pool_of(node) == "worker" else 1)
    if limit == 0:
        assert outcome.reason == "idle" and events(store, "PoolStalled")
        return
    assert outcome.reason == "completed"
    assert all(n["metadata"]["annotations"][NODE_VERSION] == target for n in store.list("Node"))
    assert not any(NODE_STATE in n["metadata"]["annotations"] for n in store.list("Node"))


# --- through the CLI ---------------------------------------------------------------------


def test_create_get_upgrade_and_run_through_the_cli(tmp_path: Path) -> None:
    def cli(*args: str) -> Any:
        return run_cli(list(args), tmp_path)

    assert (
        cli(
            "cluster", "create", "admin", "--platform", "gdc", "--role", "admin", "--version", MID
        ).exit_code
        == 0
    )
    made = cli(
        "cluster",
        "create",
        "u1",
        "--platform",
        "gdc",
        "--role",
        "user",
        "--managed-by",
        "admin",
        "--version",
        MID,
        "--workers",
        "3",
        "-o",
        "json",
    )
    assert made.exit_code == 0 and json.loads(made.stdout)["nodes"] == 6
    clusters = cli("get", "clusters", "--cluster", "u1").stdout.splitlines()
    assert clusters[0].split() == [
        "NAMESPACE",
        "NAME",
        "ABM",
        "VERSION",
        "DESIRED",
        "ABM",
        "VERSION",
        "CLUSTER",
        "STATE",
        "AGE",
    ]
    assert clusters[1].split()[:5] == ["cluster-u1", "u1", MID, MID, "Running"]
    pools = cli("get", "np", "--cluster", "u1")
    assert pools.exit_code == 1  # not a name kubectl knows for node pools
    pools = cli("get", "nodepools.baremetal.cluster.gke.io", "--cluster", "u1").stdout.splitlines()
    assert pools[0].split()[2:7] == [
        "READY",
        "RECONCILING",
        "STALLED",
        "UNDERMAINTENANCE",
        "UNKNOWN",
    ]
    assert [line.split()[1] for line in pools[1:]] == ["u1", "worker"]
    nodes = cli("get", "nodes", "--cluster", "u1").stdout.splitlines()
    assert nodes[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert nodes[1].split()[4] == "v1.28.0"
    # The user cluster may not pass its admin cluster (SPEC G2): refused, nothing changes.
    refused = cli("upgrade", "--cluster", "u1", "--to", NEW)
    assert refused.exit_code == 1 and "G2.user-newer" in refused.stderr
    assert "fix: upgrade cluster/admin" in refused.stderr
    assert cli("upgrade", "--cluster", "admin", "--to", NEW).exit_code == 0
    ran = cli("controller", "run", "--cluster", "admin", "-o", "json")
    assert ran.exit_code == 0, ran.stderr
    assert json.loads(ran.stdout)["outcome"] == "completed"
    again = cli("controller", "run", "--cluster", "admin", "-o", "json")
    assert json.loads(again.stdout)["outcome"] == "completed"  # nothing left to do
    bootstrap = cli("upgrade", "--cluster", "u1", "--to", NEW, "--use-bootstrap")
    assert (
        bootstrap.exit_code == 1 and "applies to admin, hybrid and standalone" in bootstrap.stderr
    )
    assert cli("upgrade", "--cluster", "u1", "--to", NEW).exit_code == 0
    report = cli("controller", "run", "--cluster", "u1")
    assert report.exit_code == 0
    for heading in ("STATUS FIELD", "COMPONENT", "EXPECTED", "stage/worker-node-pool/worker"):
        assert heading in report.stdout
    checks = json.loads(cli("get", "preflightchecks", "--cluster", "u1", "-o", "json").stdout)
    assert checks["items"][0]["status"]["pass"] is True
    listed = cli("cluster", "list", "-o", "json").stdout
    assert {r["name"]: r["VERSION"] for r in json.loads(listed)} == {"admin": NEW, "u1": NEW}


def test_cli_refuses_what_does_not_fit(tmp_path: Path) -> None:
    def fails(*args: str) -> str:
        run = run_cli(list(args), tmp_path)
        assert run.exit_code != 0
        return str(run.stderr)

    assert "needs its version" in fails("cluster", "create", "a", "--platform", "gdc")
    assert "no cluster named 'nope'" in fails(
        "cluster",
        "create",
        "u",
        "--platform",
        "gdc",
        "--role",
        "user",
        "--managed-by",
        "nope",
        "--version",
        MID,
    )
    assert "role 'boss'" in fails(
        "cluster", "create", "b", "--platform", "gdc", "--role", "boss", "--version", MID
    )
    assert "--role: applies to --platform gdc" in fails("cluster", "create", "o", "--role", "admin")
    assert (
        run_cli(
            ["cluster", "create", "s", "--platform", "gdc", "--version", MID], tmp_path
        ).exit_code
        == 0
    )
    assert "G3.downgrade" in fails("upgrade", "--cluster", "s", "--to", "1.28.0-gke.425")
    assert "not on the release line" in fails("upgrade", "--cluster", "s", "--to", "4.14.2")
    assert "not a distributed-cloud version" in fails("upgrade", "--cluster", "s", "--to", "x")
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"\xff\xfe")
    assert "not UTF-8" in fails("upgrade", "--cluster", "s", "--to", NEW, "--releases", str(bad))
    assert "--to-image" in fails("upgrade", "--cluster", "s", "--to-image", "x@sha256:" + "a" * 64)
    assert "apply to cluster upgrades" in fails(
        "upgrade", "--cluster", "s", "--to", NEW, "--nodepool", "worker", "--bmctl", NEW
    )
    assert "has no node pool 'nope'" in fails(
        "upgrade", "--cluster", "s", "--to", NEW, "--nodepool", "nope"
    )


def test_a_request_an_older_kupgrade_recorded_is_carried_out(tmp_path: Path) -> None:
    """A request with fewer fields than today's record (and one it no longer has): the
    missing ones take their defaults and the run ends cleanly."""
    store = make(tmp_path, "c", gdc_spec(MID))
    made = request_upgrade(SimCluster(store), NEW, bmctl=NEW, leave_pools=["worker"])
    state = msgspec.to_builtins(made)
    for key in ("stages", "fields", "from", "method", "wakeAt", "pivoted", "failed"):
        del state[key]
    state["retired"] = "a field this kupgrade no longer keeps"
    store.set_meta("state:gdc", state)
    store.commit()
    outcome = sim_loop(store.path.parent, store, gdc_spec(MID)).run()
    assert outcome.reason == "completed"
    assert "worker-node-pool/worker" not in stage_times(store)


def test_a_request_of_the_wrong_shape_is_named(tmp_path: Path) -> None:
    """An edited request whose fields have the wrong types: the error names the state and
    what to do, rather than a controller failing deep inside."""
    store = make(tmp_path, "c", gdc_spec(MID))
    made = msgspec.to_builtins(request_upgrade(SimCluster(store), NEW, bmctl=NEW))
    store.set_meta("state:gdc", {**made, "serial": "first", "stages": []})
    store.commit()
    with pytest.raises(InputError, match=r"upgrade state 'gdc' .* not readable: .*serial"):
        sim_loop(store.path.parent, store, gdc_spec(MID)).run()


def test_profiles_that_mix_platforms_or_break_the_shape_are_refused(tmp_path: Path) -> None:
    openshift, gdc = "version: 4.13.40", f"platform: gdc\n  version: {MID}"
    cases = [
        (openshift, "gdc: {role: admin}", "spec.gdc: applies to platform: gdc"),
        (openshift, "faults: [{component: anetd, slow: 2}]", "apply to platform: gdc"),
        (openshift, "pools: [{name: w, nodes: 1, concurrentNodes: 3}]", "apply to platform: gdc"),
        (gdc, "gdc: {role: user}", "a user cluster names its management cluster"),
        (gdc, "pools: [{name: worker, nodes: 2}]", "one control-plane pool"),
        (gdc, "pools: [{name: control-plane, nodes: 1, version: 1.28.0}]", "only worker pools"),
        (gdc, "gdc: {components: [{name: a, stage: bogus}]}", "stage 'bogus'"),
        (gdc, "faults: [{preflight: nope}]", "preflight check 'nope'"),
        (gdc, "gdc: {healthCheckSeconds: .nan}", "between 1 and 86400"),
        (gdc, "gdc: 7", "spec.gdc"),
    ]
    for head, body, message in cases:
        path = tmp_path / "p.yaml"
        path.write_text(f"spec:\n  {head}\n  {body}\n")
        run = run_cli(["cluster", "create", "x", "--profile", str(path)], tmp_path)
        assert run.exit_code == 1 and message in run.stderr, (body, run.stderr)
    assert not (tmp_path / "clusters" / "x").exists()


def test_worker_pools_upgrade_together_or_one_at_a_time(tmp_path: Path) -> None:
    pools = [Pool("control-plane", 1), Pool("w1", 2), Pool("w2", 2), Pool("w3", 1)]
    together, _ = rehearse(tmp_path, "a", gdc_spec(MID, pools=pools), NEW)
    starts = {s: t[0] for s, t in stage_times(together).items() if s.startswith("worker")}
    assert len(set(starts.values())) == 1  # all three start when the control plane is done
    serial, outcome = rehearse(
        tmp_path, "b", gdc_spec(MID, pools=pools, concurrent_node_pools=0), NEW
    )
    assert outcome.reason == "completed"
    times = stage_times(serial)
    order = ["worker-node-pool/w1", "worker-node-pool/w2", "worker-node-pool/w3"]
    for before, after in itertools.pairwise(order):
        assert times[after][0] == times[before][1]
