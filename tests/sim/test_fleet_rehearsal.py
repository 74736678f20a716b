"""Fleet rehearsals (SPEC X5): every Kubernetes and distributed-cloud plan case of
conformance/skew rehearsed on simulated clusters, each recorded state checked again; a
scripted out-of-band change that breaks a rule stops the rehearsal naming the state, the
rule and the objects; a plan the platform refuses stops at that step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kupgrade.sim.fleet.home import locked, opened_fleet
from kupgrade.sim.fleet.rehearsal import PlanRefusedError, Rehearsal, Settings
from kupgrade.versions import parse_kube
from tests.support.caseuse import case_params, plain, unused
from tests.support.cli import kupgrade
from tests.support.conformance import conformance_cases, conformance_doc, need_case
from tests.support.fleetcases import OWN_REFUSED, check_refused
from tests.support.fleetkit import (
    control_planes,
    create,
    gdc_broken,
    kube_broken,
    kupgrade_home,
    rehearse,
    states,
)

FLEET = ("skew", "fleet.yaml")
SMALL = {"controlPlanes": 1, "nodesPerPool": 2}


def run(home: Path, *args: str) -> Any:
    return kupgrade(*args, env={"KUPGRADE_HOME": str(home)})


def _release_order() -> list[str]:
    return list(conformance_doc("skew", "gdc.yaml")["release_order_synthetic"])


@pytest.mark.parametrize(
    "case",
    [
        *conformance_cases("cases", *FLEET, where=lambda c: c["platform"] in ("gdc", "kubernetes")),
        *case_params(OWN_REFUSED),  # `refused`, which no public case uses yet
    ],
)
def test_fleet_plan_cases_rehearse_with_every_state_legal(tmp_path: Path, case: Any) -> None:
    case = need_case(case, *FLEET)
    unused(case, "expect.plan", "expect.acceptance")  # one valid plan; min_steps decides
    target, available = case["target"], [str(v) for v in case["available"]]
    expect = case["expect"]
    if case["platform"] == "gdc":
        doc = {"clusters": plain(case["fleet"]["clusters"]), "release_order": _release_order()}
        settings = Settings(target, available, "gdc", 0)
    else:
        doc = {"platform": "kubernetes", "clusters": {"k": plain(case["cluster"])}}
        settings = Settings(target, available, case["policy"], 0)
    create(tmp_path, {**doc, "simulation": SMALL})
    if "refused" in expect:
        with pytest.raises(PlanRefusedError) as refused:
            rehearse(tmp_path, settings)
        got = refused.value.plan.refused
        assert got is not None
        check_refused(case, got.to_json(), "k" if case["platform"] == "kubernetes" else None)
        assert refused.value.hint == got.fix  # the user is told the fix
        return
    report, events = rehearse(tmp_path, settings)
    assert report["outcome"] == "completed", report.get("stop")
    assert len(report["steps"]) == expect["min_steps"]
    if "min_pool_rollouts" in expect:
        pools = [s for s in report["steps"] if s["object"].startswith("nodepool/")]
        assert len(pools) == expect["min_pool_rollouts"]
    recorded = states(events)
    assert len(recorded) > len(report["steps"])  # the first state and every change after
    for at, state in recorded:
        if case["platform"] == "gdc":
            assert gdc_broken(doc, state) == [], at
        else:
            assert kube_broken(state["k"], case["policy"]) == [], at
    final = recorded[-1][1]
    versions = {v.split("=")[-1] for s in final.values() for v in s.values()}
    assert versions == {target.lstrip("v")} or case["platform"] == "gdc"
    if case["platform"] == "gdc":
        assert control_planes(final) == {target}
    # every step waited only for what it had to, and the critical path ends last
    by_id = {s["id"]: s for s in report["steps"]}
    for s in report["steps"]:
        assert s["startedAt"] >= max([by_id[a]["finishedAt"] for a in s["after"]], default=0.0)
    last = report["criticalPath"][-1]
    assert last["finishedAt"] == max(s["finishedAt"] for s in report["steps"])


UPGRADES = ("skew", "upgrades.yaml")


@pytest.mark.parametrize("case", conformance_cases("cases", *UPGRADES))
def test_upgrade_step_inventories_rehearse_to_their_target(tmp_path: Path, case: Any) -> None:
    """Each inventory made a cluster (its components at their own versions) and brought
    to the request's target along the planner's plan: either no plan exists, or every
    recorded state keeps the rules."""
    case = need_case(case, *UPGRADES)
    # The case judges one proposed step; the rehearsal plans its own steps to the same
    # target, so the step's instances, drained flag and verdict are not what it runs.
    unused(case, "request.component", "request.instances", "request.drained", "expect")
    inventory = plain(case["inventory"])
    policy, request = case["policy"], case["request"]
    available = [str(v) for v in request.get("available") or []]
    create(tmp_path, {"platform": "kubernetes", "clusters": {"k": inventory}})
    settings = Settings(str(request["to"]), available, policy, 0)
    try:
        report, events = rehearse(tmp_path, settings)
    except PlanRefusedError as refused:
        assert refused.plan.refused is not None and refused.plan.refused.rules
        return
    assert report["outcome"] == "completed", report.get("stop")
    for at, state in states(events):
        assert kube_broken(state["k"], policy) == [], at


def test_out_of_band_change_stops_the_rehearsal_naming_state_rule_objects(tmp_path: Path) -> None:
    """A node re-imaged with an old kubelet while the control plane moves on: the monitor
    sees the state it makes and stops there (exit 1), naming rule and objects."""
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        yaml.safe_dump(
            {
                "spec": {
                    "changes": [
                        {
                            "atMinutes": 2,
                            "kind": "Node",
                            "name": "md0-1",
                            "patch": {"status": {"nodeInfo": {"kubeletVersion": "v1.26.0"}}},
                        }
                    ]
                }
            }
        )
    )
    doc = {
        "platform": "kubernetes",
        "policy": "k8s-n3",
        "target": "1.31.0",
        "available": ["1.30.0", "1.31.0"],
        "clusters": {"edge": {"cp": "1.29.0", "pools": {"md0": "1.29.0"}}},
        "simulation": {"nodesPerPool": 2, "profile": "profile.yaml"},
    }
    (tmp_path / "edge.yaml").write_text(yaml.safe_dump(doc))
    assert run(tmp_path, "fleet", "create", str(tmp_path / "edge.yaml")).returncode == 0
    done = run(tmp_path, "fleet", "rehearse", "-o", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    stop = report["stop"]
    assert stop["kind"] == "violation"
    assert stop["findings"][0]["rule"] == "H3.older"
    assert "edge/node/md0-1" in stop["objects"]
    assert "edge/kubelet/md0-1 1.29.0 -> 1.26.0" in stop["state"]
    text = run(tmp_path, "fleet", "status").stdout
    assert "stopped (violation)" in text and "H3.older" in text
    again = run(tmp_path, "fleet", "rehearse")
    assert again.returncode == 1 and "stopped (violation)" in again.stderr


def test_a_plan_the_platform_refuses_stops_at_that_step(tmp_path: Path) -> None:
    """A hand-written plan that upgrades a user cluster before its admin: bmctl's checks
    refuse that step when it would start; nothing of it runs."""
    doc = {
        "clusters": {
            "admin": {"version": "1.28.500-gke.120", "role": "admin"},
            "u1": {"version": "1.28.500-gke.120", "role": "user", "managed_by": "admin"},
        },
        "simulation": SMALL,
    }
    create(tmp_path, doc)
    steps = [
        {
            "id": "s1",
            "object": "cluster/u1",
            "from": "1.28.500-gke.120",
            "to": "1.29.100-gke.251",
            "after": [],
        },
        {
            "id": "s2",
            "object": "cluster/admin",
            "from": "1.28.500-gke.120",
            "to": "1.29.100-gke.251",
            "after": ["s1"],
        },
    ]
    report, events = rehearse(tmp_path, Settings("1.29.100-gke.251", [], "gdc", 0), steps=steps)
    assert report["outcome"] == "stopped"
    assert report["stop"]["kind"] == "refused" and report["stop"]["step"] == "s1"
    assert "G2.user-newer" in report["stop"]["why"]
    assert "cluster/admin" in report["stop"]["objects"]
    assert not any(e["reason"] == "StepStarted" for e in events)


def test_max_parallel_holds_steps_and_says_for_what(tmp_path: Path) -> None:
    users = {
        f"u{i}": {"version": "1.28.500-gke.120", "role": "user", "managed_by": "admin"}
        for i in range(3)
    }
    doc = {
        "clusters": {"admin": {"version": "1.28.500-gke.120", "role": "admin"}, **users},
        "simulation": {"controlPlanes": 1, "nodesPerPool": 1},
    }
    create(tmp_path, doc)
    report, events = rehearse(tmp_path, Settings("1.29.100-gke.251", [], "gdc", 2))
    assert report["outcome"] == "completed"
    spans = [(s["startedAt"], s["finishedAt"]) for s in report["steps"]]
    for at, _ in spans:
        assert sum(1 for a, b in spans if a <= at < b) <= 2
    held = [s for s in report["steps"] if s["heldBy"]]
    assert held and all("--max-parallel 2" in s["heldBy"] for s in held)
    assert all(s["freedBy"] for s in held)
    assert any(e["reason"] == "StepWaiting" for e in events)
    downtime = {c["name"]: c["downtime"] for c in report["clusters"]}
    assert set(downtime["u0"]) == {"apps/app-np1"}


KUBEADM = ("skew", "kubeadm.yaml")


@pytest.mark.parametrize(
    "case", conformance_cases("cases", *KUBEADM, where=lambda c: not c.get("lookup_errors"))
)
def test_kubeadm_policy_cases_rehearse(tmp_path: Path, case: Any) -> None:
    """Each case as a cluster at its version with its kubelets, upgraded to `new` with
    the case's kubeadm binary and flags: kupgrade refuses to plan what it never does (a
    downgrade, a skipped minor, an illegal start); otherwise the control-plane step is
    held exactly at the first finding kubeadm would stop at (P10 aside: kupgrade holds
    kubelets to the skew rules itself), or the rehearsal completes with every state legal."""
    case = need_case(case, *KUBEADM)
    expect = case["expect"]
    mandatory = [(f["id"], f.get("message") or f["message_prefix"]) for f in expect["mandatory"]]
    skippable = [(f["id"], f.get("message") or f["message_prefix"]) for f in expect["skippable"]]
    tool: dict[str, Any] = {
        "version": case["kubeadm"],
        "allowExperimental": case.get("allowExperimental", False),
        "allowRCs": case.get("allowRCs", False),
    }
    if case.get("min_control_plane"):
        tool["minControlPlane"] = case["min_control_plane"]
    policy = "k8s-n3" if case["kubelet_skew"] == 3 else "k8s-n2"
    pools = {f"n{i}": k for i, k in enumerate(case["kubelets"])}
    doc = {
        "platform": "kubernetes",
        "simulation": {"nodesPerPool": 1},
        "clusters": {"k": {"cp": case["cluster"], "pools": pools, "kubeadm": tool}},
    }
    create(tmp_path, doc)
    new, cluster = parse_kube(case["new"]), parse_kube(case["cluster"])
    try:
        report, events = rehearse(tmp_path, Settings(case["new"], [case["new"]], policy, 0))
    except PlanRefusedError as refused:
        assert refused.plan.refused is not None
        skips = (new.major, new.minor) > (cluster.major, cluster.minor + 1)
        illegal = "already breaks a rule" in refused.plan.refused.message
        assert new < cluster or skips or illegal, refused.plan.refused.message
        return
    if report["outcome"] == "completed":
        assert not mandatory
        assert [i for i, _ in skippable if i != "P10"] == []
        for at, state in states(events):
            assert kube_broken(state["k"], policy) == [], at
        return
    stop = report["stop"]
    assert stop["kind"] == "stuck", stop
    first_id, first_message = (mandatory or [s for s in skippable if s[0] != "P10"])[0]
    assert stop["why"].startswith(f"kubeadm {first_id}: {first_message}"), stop["why"]


def test_a_drain_a_budget_holds_forever_stops_as_stuck(tmp_path: Path) -> None:
    """Two replicas on a one-node pool with one allowed unavailable: the drain before the
    minor kubelet upgrade can never finish; the rehearsal says so instead of retrying."""
    profile = tmp_path / "db.yaml"
    profile.write_text(
        yaml.safe_dump(
            {
                "spec": {
                    "workloads": [
                        {
                            "name": "db",
                            "namespace": "data",
                            "replicas": 2,
                            "pool": "md0",
                            "pdb": {"maxUnavailable": 1},
                        }
                    ]
                }
            }
        )
    )
    doc = {
        "platform": "kubernetes",
        "clusters": {"k": {"cp": "1.30.0", "pools": {"md0": "1.30.0"}}},
        "simulation": {"nodesPerPool": 1, "profile": "db.yaml"},
    }
    create(tmp_path, doc)
    report, _ = rehearse(tmp_path, Settings("1.31.0", [], "k8s-n3", 0))
    stop = report["stop"]
    assert stop["kind"] == "stuck" and stop["step"] == "s2"
    assert "no progress for 6 simulated hours" in stop["why"]
    assert "drain held: pod/data/db-" in stop["why"] and "disruption budget" in stop["why"]
    assert report["steps"][1]["state"] == "blocked"


def test_members_under_way_are_the_rehearsals_alone(tmp_path: Path) -> None:
    """While a rehearsal is under way (here: started, then left), `upgrade` on one of its
    clusters is refused, `fleet status` shows the running steps, and `fleet rehearse`
    with other options is refused while the same options go on."""
    doc = {
        "clusters": {
            "admin": {"version": "1.28.500-gke.120", "role": "admin"},
            "u1": {"version": "1.28.500-gke.120", "role": "user", "managed_by": "admin"},
        },
        "simulation": {"nodesPerPool": 1},
    }
    create(tmp_path, doc)
    with (
        kupgrade_home(tmp_path),
        opened_fleet("f") as (root, store, info, members),
        locked(root, list(members)),
    ):
        Rehearsal(store, members, info).begin(Settings("1.29.100-gke.251", [], "gdc", 1))
    refused = run(tmp_path, "upgrade", "--cluster", "u1", "--to", "1.29.100-gke.251")
    assert refused.returncode != 0 and "rehearsal of fleet f" in refused.stderr
    status = json.loads(run(tmp_path, "fleet", "status", "-o", "json").stdout)
    assert status["outcome"] == "running"
    assert [s["state"] for s in status["steps"]] == ["running", "pending"]
    other = run(tmp_path, "fleet", "rehearse", "--max-parallel", "3")
    assert other.returncode != 0 and "--max-parallel 1" in other.stderr
    done = run(tmp_path, "fleet", "rehearse", "--max-parallel", "1", "-o", "json")
    assert done.returncode == 0 and json.loads(done.stdout)["outcome"] == "completed"


def test_a_kubernetes_clusters_pools_roll_out_side_by_side(tmp_path: Path) -> None:
    """Two pool steps of one cluster the plan does not order run at once (each pool
    node by node), each change checked against the live state the other shapes too."""
    doc = {
        "platform": "kubernetes",
        "policy": "k8s-n3",
        "simulation": {"nodesPerPool": 2},
        "clusters": {"k": {"cp": "1.30.0", "pools": {"md0": "1.30.0", "md1": "1.28.0"}}},
    }
    create(tmp_path, doc)
    report, events = rehearse(tmp_path, Settings("1.32.0", ["1.31.0", "1.32.0"], "k8s-n3", 0))
    assert report["outcome"] == "completed"
    pools = [
        s for s in report["steps"] if s["object"].startswith("nodepool/") and s["to"] == "1.32.0"
    ]
    assert len(pools) == 2
    (a, b) = pools
    assert a["startedAt"] == b["startedAt"] < min(a["finishedAt"], b["finishedAt"])
    assert not a["heldBy"] and not b["heldBy"]
    for at, state in states(events):
        assert kube_broken(state["k"], "k8s-n3") == [], at
