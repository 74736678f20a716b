"""Fleet and cluster plans (SPEC X1, G2-G4, H3-H7): conformance/skew/fleet.yaml, an
independent acceptance check over every order a plan allows, and brute-force minimality."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kupgrade.plan.gdc_fleet import Goal, plan_fleet
from kupgrade.plan.kube import KubeCluster, control_plane_chain, plan_cluster, state
from kupgrade.plan.stages import StageCluster, stages, status_fields
from kupgrade.plan.steps import Plan
from kupgrade.skew.fleet import Fleet, History, parse_fleet, parse_history
from kupgrade.skew.gdc import WARNINGS, Request, apply_request, check_fleet, judge_request
from kupgrade.skew.k8s import check
from kupgrade.versions import SemVer, parse_kube
from tests.support.caseuse import case_params, unused
from tests.support.cli import kupgrade
from tests.support.conformance import conformance_cases, conformance_doc, need_case
from tests.support.fleetcases import OWN_REFUSED, check_refused
from tests.support.plankit import accept_gdc, accept_kube

FLEET = ("skew", "fleet.yaml")


def _history() -> History:
    return parse_history(conformance_doc("skew", "gdc.yaml"), "gdc.yaml")


def _kube(case: dict[str, Any]) -> KubeCluster:
    pools = {k: parse_kube(v) for k, v in case["cluster"]["pools"].items()}
    return KubeCluster(parse_kube(case["cluster"]["cp"]), pools)


@pytest.mark.parametrize(
    "case",
    [
        *conformance_cases("cases", *FLEET, where=lambda c: c["platform"] == "gdc"),
        *case_params(OWN_REFUSED, where=lambda c: c["platform"] == "gdc"),
    ],
)
def test_gdc_fleet_plans(case: Any) -> None:
    case = need_case(case, *FLEET)
    fleet = parse_fleet(case["fleet"], case["id"], _history())
    plan = plan_fleet(fleet, Goal.of(case["target"], case["available"], fleet.history))
    if refused_as_expected(plan, case):
        return
    steps = [s.to_json() for s in plan.steps]
    assert len(steps) == case["expect"]["min_steps"]
    accept_gdc(fleet, steps, case["target"], case["available"])
    # the case's own plan passes the same check: the checker is not stricter than the data
    accept_gdc(fleet, case["expect"]["plan"], case["target"], case["available"])


def refused_as_expected(plan: Plan, case: Any) -> bool:
    """README 6: `expect` is either a plan or `refused: {step, rules, fix}`; `acceptance`
    states in prose the rule `accept_gdc` / `accept_kube` check."""
    expect = case["expect"]
    unused(case, "expect.acceptance")
    if "refused" not in expect:
        assert plan.refused is None, plan.refused
        return False
    assert plan.refused is not None, "a plan where the case says none exists"
    check_refused(case, plan.refused.to_json())
    return True


@pytest.mark.parametrize(
    "case",
    [
        *conformance_cases("cases", *FLEET, where=lambda c: c["platform"] == "kubernetes"),
        *case_params(OWN_REFUSED, where=lambda c: c["platform"] == "kubernetes"),
    ],
)
def test_kubernetes_plans(case: Any) -> None:
    case = need_case(case, *FLEET)
    args = (case["cluster"]["cp"], case["cluster"]["pools"])
    plan = plan_cluster(
        _kube(case),
        parse_kube(case["target"]),
        [parse_kube(v) for v in case["available"]],
        case["policy"],
    )
    if refused_as_expected(plan, case):
        return
    steps = [s.to_json() for s in plan.steps]
    assert len(steps) == case["expect"]["min_steps"]
    assert plan.pool_rollouts == case["expect"]["min_pool_rollouts"]
    accept_kube(*args, steps, case["target"], case["available"], case["policy"])
    accept_kube(*args, case["expect"]["plan"], case["target"], case["available"], case["policy"])


@pytest.mark.parametrize(
    "case", conformance_cases("cases", *FLEET, where=lambda c: c["platform"] == "gdc-stages")
)
def test_gdc_stage_order(case: Any) -> None:
    case = need_case(case, *FLEET)
    unused(case, "expect.acceptance")  # prose of the partial-order rule checked below
    # Seed 003 gives one stage order for every release it covers (SPEC G8).
    unused(case, "target")
    cluster = StageCluster(**{k: v for k, v in case["cluster"].items()})
    got = {s.id: sorted(s.after) for s in stages(cluster)}
    assert got == {s["id"]: sorted(s["after"]) for s in case["expect"]["stages"]}
    assert status_fields(cluster) == case["expect"]["status_fields_in_order"]
    user = StageCluster(**{**case["cluster"], "role": "user"})
    assert (
        "status.anthosBareMetalLifecycleControllersManifestsVersion" not in status_fields(user)[1]
    )


# --- brute force: no shorter plan exists ------------------------------------------------

GDC_VERSIONS = [
    "1.15.12",
    "1.16.2",
    "1.16.9",
    "1.28.100-gke.146",
    "1.28.500-gke.120",
    "1.29.100-gke.251",
    "1.30.0-gke.1930",
]


def _fewest_gdc_steps(fleet: Fleet, goal: Goal) -> int | None:
    """Breadth-first over every cluster's version, one cluster step at a time, each step
    judged by the rules and landing on an available release (pools ride along)."""
    names = list(fleet.clusters)
    start = tuple(fleet.clusters[n].version for n in names)
    seen = {start: 0}
    todo = deque([(start, fleet)])
    while todo:
        versions, now = todo.popleft()
        if all(v == goal.target for v in versions):
            return seen[versions]
        for i, name in enumerate(names):
            for to in goal.available:
                if to <= versions[i]:
                    continue
                request = Request(name, to, bmctl=to)
                nxt = (*versions[:i], to, *versions[i + 1 :])
                if nxt in seen or judge_request(now, request).rules:
                    continue
                after = apply_request(now, request)
                if any(v.id not in WARNINGS for v in check_fleet(after)):
                    continue
                seen[nxt] = seen[versions] + 1
                todo.append((nxt, after))
    return None


@st.composite
def _fleets(draw: st.DrawFn) -> tuple[dict[str, Any], str, list[str]]:
    pick = st.sampled_from(GDC_VERSIONS)
    clusters: dict[str, Any] = {"m": {"version": draw(pick), "role": "admin"}}
    for i in range(draw(st.integers(0, 3))):
        clusters[f"u{i}"] = {"version": draw(pick), "role": "user", "managed_by": "m"}
    if draw(st.booleans()):
        clusters["solo"] = {"version": draw(pick), "role": "standalone"}
    target = draw(pick)
    available = draw(st.lists(pick, max_size=4))
    return {"clusters": clusters}, target, available


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_fleets())
def test_gdc_plans_are_legal_and_shortest(example: tuple[dict[str, Any], str, list[str]]) -> None:
    data, target, available = example
    fleet = parse_fleet(data, "generated", _history())
    goal = Goal.of(target, available, fleet.history)
    plan = plan_fleet(fleet, goal)
    legal_start = not any(v.id not in WARNINGS for v in check_fleet(fleet))
    fewest = _fewest_gdc_steps(fleet, goal) if legal_start else None
    if plan.refused is not None:
        assert fewest is None, plan.refused
        assert plan.refused.rules and plan.refused.fix
        return
    assert fewest == len(plan.steps)
    accept_gdc(fleet, [s.to_json() for s in plan.steps], target, available)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(GDC_VERSIONS[:5]),
    st.lists(st.sampled_from(GDC_VERSIONS), min_size=1, max_size=3),
    st.booleans(),
    st.sampled_from(GDC_VERSIONS[3:]),
)
def test_gdc_pools_stay_legal(cluster: str, pools: list[str], preview: bool, target: str) -> None:
    """Pools left behind by a cluster's steps keep every G4 rule in every order."""
    annotations = (
        {"preview.baremetal.cluster.gke.io/two-minor-version-node-pool": "enable"}
        if preview
        else {}
    )
    data = {
        "clusters": {
            "c": {
                "version": cluster,
                "role": "standalone",
                "annotations": annotations,
                "pools": {f"p{i}": v for i, v in enumerate(pools)},
            }
        }
    }
    fleet = parse_fleet(data, "generated", _history())
    available = GDC_VERSIONS
    plan = plan_fleet(fleet, Goal.of(target, available, fleet.history))
    if plan.refused is None:
        accept_gdc(fleet, [s.to_json() for s in plan.steps], target, available)


def _fewest_kube_steps(
    cluster: KubeCluster, target: SemVer, available: list[SemVer], policy: str
) -> tuple[int, int] | None:
    """(steps, pool rollouts) by breadth-first search: the control plane on its fixed path
    (SPEC H6/H7), any pool to the control plane's current version, every state legal."""
    chain = [cluster.control_plane, *control_plane_chain(cluster.control_plane, target, available)]
    names = list(cluster.pools)
    start = (0, tuple(cluster.pools[n] for n in names))
    seen = {start: (0, 0)}
    todo = deque([start])
    while todo:
        at, pools = todo.popleft()
        steps, rollouts = seen[(at, pools)]
        if at == len(chain) - 1 and all(p == target for p in pools):
            return steps, rollouts
        moves = [((at + 1, pools), 0)] if at + 1 < len(chain) else []
        moves += [
            ((at, (*pools[:i], chain[at], *pools[i + 1 :])), 1)
            for i in range(len(pools))
            if pools[i] < chain[at]
        ]
        for nxt, pool_move in moves:
            if nxt in seen or check(
                state(chain[nxt[0]], dict(zip(names, nxt[1], strict=True))), policy
            ):
                continue
            seen[nxt] = (steps + 1, rollouts + pool_move)
            todo.append(nxt)
    return None


KUBE_VERSIONS = ["1.24.3", "1.25.0", "1.26.4", "1.27.0", "1.27.5", "1.28.1", "1.29.0", "1.30.2"]


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(KUBE_VERSIONS[:5]),
    st.lists(st.sampled_from(KUBE_VERSIONS[:5]), min_size=1, max_size=3),
    st.sampled_from(KUBE_VERSIONS[3:]),
    st.lists(st.sampled_from(KUBE_VERSIONS), max_size=6),
    st.sampled_from(["k8s-n2", "k8s-n3", "auto"]),
)
def test_kube_plans_are_legal_and_shortest(
    cp: str, pools: list[str], target: str, available: list[str], policy: str
) -> None:
    pool_map = {f"p{i}": v for i, v in enumerate(pools)}
    cluster = KubeCluster(parse_kube(cp), {k: parse_kube(v) for k, v in pool_map.items()})
    to, versions = parse_kube(target), sorted({parse_kube(v) for v in [*available, target]})
    plan = plan_cluster(cluster, to, versions, policy)
    if plan.refused is not None:
        assert plan.refused.rules and plan.refused.fix
        legal = not check(state(cluster.control_plane, cluster.pools), policy)
        if legal and cluster.control_plane <= to and all(p <= to for p in cluster.pools.values()):
            # only a missing minor may block a legal start: then the control plane cannot move
            assert plan.refused.rules == ["H6.no-minor-skip"]
        return
    fewest = _fewest_kube_steps(cluster, to, versions, policy)
    assert fewest == (len(plan.steps), plan.pool_rollouts)
    accept_kube(
        cp, pool_map, [s.to_json() for s in plan.steps], target, [str(v) for v in versions], policy
    )


# --- refusals and the command ----------------------------------------------------------


def test_refusals_name_the_blocking_step() -> None:
    history = _history()
    fleet = parse_fleet({"clusters": {"c": {"version": "1.15.12"}}}, "f", history)
    plan = plan_fleet(fleet, Goal.of("1.28.500-gke.120", [], history))
    assert plan.refused is not None and plan.refused.rules == ["G3.skip-minor"]
    assert "1.16" in plan.refused.fix and plan.refused.object == "cluster/c"
    # a user that cannot catch up blocks its manager's minor upgrade (SPEC G3)
    fleet = parse_fleet(
        {
            "clusters": {
                "m": {"version": "1.16.2", "role": "admin"},
                "u": {"version": "1.15.12", "role": "user", "managed_by": "m"},
            }
        },
        "f",
        history,
    )
    plan = plan_fleet(fleet, Goal.of("1.28.500-gke.120", ["1.16.9"], history))
    assert plan.refused is None  # the manager first takes 1.16.9 so the user can land there
    assert [s.object for s in plan.steps][:2] == ["cluster/m", "cluster/u"]
    plan = plan_fleet(fleet, Goal.of("1.28.500-gke.120", [], history))
    assert plan.refused is not None
    assert plan.refused.object == "cluster/m" and "G3.users-first" in plan.refused.rules
    kube = KubeCluster(parse_kube("1.30.0"), {"a": parse_kube("1.30.0")})
    plan = plan_cluster(kube, parse_kube("1.32.0"), [], "k8s-n3")
    assert plan.refused is not None and plan.refused.rules == ["H6.no-minor-skip"]
    assert "1.31" in plan.refused.fix


def _case_file(tmp_path: Path, case_id: str) -> Path:
    case = next(c for c in conformance_doc(*FLEET)["cases"] if c["id"] == case_id)
    path = tmp_path / "input.yaml"
    path.write_text(yaml.safe_dump(case))
    return path


def test_plan_command(tmp_path: Path) -> None:
    path = _case_file(tmp_path, "fleet/FL02-gdc-1.29-users-lag")
    done = kupgrade("plan", str(path), "-o", "json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert len(out["steps"]) == 4 and out["states_checked"] > 0
    assert set(out["steps"][0]) >= {"id", "object", "from", "to", "after"}
    done = kupgrade("plan", str(path), "-o", "mermaid")
    assert done.stdout.startswith("flowchart LR") and "-->" in done.stdout
    assert "digraph plan" in kupgrade("plan", str(path), "-o", "dot").stdout
    text = kupgrade("plan", str(path)).stdout
    assert "cluster/u1" in text and "states checked" in text
    # --to and --available win over the file; a missing minor is refused with its fix
    wide = "1.28.500-gke.120,1.29.100-gke.251"
    done = kupgrade("plan", str(path), "--to", "1.30.0-gke.1930", "--available", wide, "-o", "json")
    assert done.returncode == 0, done.stdout
    done = kupgrade("plan", str(path), "--to", "1.30.0-gke.1930", "--available", "1.29.100-gke.251")
    assert done.returncode == 1 and "G3.users-first" in done.stdout
    assert "add a 1.28 release" in done.stdout  # u1 (1.16) needs a 1.28 stop on its way
    done = kupgrade("plan", str(path), "--to", "1.30.0-gke.1930", "--available", "", "-o", "json")
    assert done.returncode == 0  # the file's available list still applies
    k8s = _case_file(tmp_path, "fleet/k8s-lagging-pool")
    done = kupgrade("plan", str(k8s), "--available", "1.32.0", "-o", "json")
    assert done.returncode == 1
    refused = json.loads(done.stdout)["refused"]
    assert refused["rules"] == ["H6.no-minor-skip"] and refused["step"]["object"] == "control-plane"
    stages_file = _case_file(tmp_path, "fleet/FL06-gdc-stage-order")
    done = kupgrade("plan", str(stages_file), "-o", "json")
    assert [s["id"] for s in json.loads(done.stdout)["stages"]][:2] == [
        "preflight",
        "set-spec-version",
    ]


def test_plan_from_a_skew_inventory(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiservers": [{"name": "a1", "version": "1.29.4"}],
                "nodes": [{"name": "w1", "kubelet": "1.27.2", "kube_proxy": "1.27.2"}],
            }
        )
    )
    done = kupgrade(
        "plan",
        str(path),
        "--to",
        "1.31.0",
        "--available",
        "1.30.1",
        "--policy",
        "k8s-n3",
        "-o",
        "json",
    )
    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout)["steps"]
    assert [(s["object"], s["to"]) for s in steps] == [
        ("control-plane", "1.30.1"),
        ("nodepool/w1", "1.30.1"),  # 1.27 is 4 behind 1.31 (n3: 3)
        ("control-plane", "1.31.0"),
        ("nodepool/w1", "1.31.0"),
    ]


@pytest.mark.parametrize(
    ("doc", "args", "needle"),
    [
        (
            {"clusters": {"u": {"version": "1.28.0", "role": "user", "managed_by": "x"}}},
            ["--to", "1.29.0"],
            "names management cluster 'x', which the fleet does not list",
        ),
        (
            {"clusters": {"a": {"version": "1.28.0", "role": "admin", "managed_by": "a"}}},
            ["--to", "1.29.0"],
            "management links form a cycle: a -> a",
        ),
        ({"cp": "1.30.0", "pools": {"p": "1.30.0"}}, [], "no target version"),
        ({"cp": "1.30", "pools": {}}, ["--to", "1.31.0"], "is not a Kubernetes version"),
        (
            {"cp": "1.30.0", "pools": {}},
            ["--to", "1.31.0", "--policy", "k8s-n9"],
            "unknown skew policy",
        ),
        (
            {"clusters": {"c": {"version": "1.28.0"}}},
            ["--to", "1.29.0", "--policy", "k8s-n3"],
            "use --policy gdc",
        ),
        ({"kube": 1}, ["--to", "1.31.0"], "a Kubernetes cluster is {cp: VERSION"),
    ],
)
def test_plan_bad_input(tmp_path: Path, doc: dict[str, Any], args: list[str], needle: str) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump(doc))
    done = kupgrade("plan", str(path), *args)
    assert done.returncode == 1 and needle in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_every_order_of_a_parallel_plan_is_checked() -> None:
    """states_checked counts the grid of every leader/follower pair, which equals the
    number of order ideals for a one-follower plan."""
    fleet = parse_fleet(
        {
            "clusters": {
                "m": {"version": "1.16.9", "role": "admin"},
                "u": {"version": "1.16.9", "role": "user", "managed_by": "m"},
            }
        },
        "f",
        _history(),
    )
    plan = plan_fleet(fleet, Goal.of("1.29.100-gke.251", ["1.28.500-gke.120"], fleet.history))
    steps = [s.to_json() for s in plan.steps]
    assert plan.states_checked == accept_gdc(fleet, steps, "1.29.100-gke.251", ["1.28.500-gke.120"])
    assert len(list(itertools.islice(iter(steps), 10))) == 4


def test_fleet_bench_runs() -> None:
    """The bench's fleet generator gives a plannable fleet (the bench itself is `make bench`)."""

    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "bench.fleet", "--sizes", "100"],
        cwd=repo,
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)["sizes"][0]
    assert row["clusters"] == 105 and row["steps"] > row["clusters"] and row["states_checked"] > 0
