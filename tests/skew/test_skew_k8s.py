"""Kubernetes version skew (SPEC H1-H6): every case of conformance/skew/k8s.yaml."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.skew.inventory import parse_inventory
from kupgrade.skew.k8s import NodeMemo, NodeRules, check, resolve_policy
from kupgrade.skew.step_rules import Step, apply_step, judge, parse_step
from tests.support.caseuse import case_params
from tests.support.cli import kupgrade
from tests.support.conformance import conformance_cases, need_case

# README 2: `talks_to` on every control-plane component, a node with a kube-proxy and no
# kubelet, and the `auto` policy with an apiserver past 1.27 (k8s-n3), which no public
# case combines; a case of our own.
OWN_K8S: dict[str, Any] = {
    "id": "own/k8s/talks-to-every-component",
    "policy": "auto",
    "inventory": {
        "apiservers": [{"name": "a1", "version": "1.30.3"}, {"name": "a2", "version": "1.29.8"}],
        "kube-scheduler": [{"name": "s1", "version": "1.30.0", "talks_to": ["a1"]}],
        "cloud-controller-manager": [{"name": "c1", "version": "1.30.1", "talks_to": ["a2"]}],
        "kube-controller-manager": [{"name": "k1", "version": "1.29.0", "talks_to": ["a2"]}],
        "nodes": [{"name": "n1", "kube_proxy": "1.30.0"}, {"name": "n2", "kubelet": "1.26.0"}],
    },
    "expect": {
        "violations": [
            {"id": "H3.older", "object": "node/n2"},  # four minors below a1 (n3 allows 3)
            {"id": "H4.newer", "object": "cloud-controller-manager/c1"},  # above a2
            {"id": "H6.proxy-newer", "object": "kube-proxy/n1"},  # above a2, no kubelet
        ]
    },
}


@pytest.mark.parametrize(
    "case", conformance_cases("cases", "skew", "k8s.yaml") + case_params([OWN_K8S])
)
def test_k8s_inventory(case: Any) -> None:
    case = need_case(case, "skew", "k8s.yaml")
    inventory = parse_inventory(case["inventory"], case["id"])
    got = {(v.id, v.object) for v in check(inventory, case["policy"])}
    assert got == {(v["id"], v["object"]) for v in case["expect"]["violations"]}


_version = st.builds(lambda mi, p: f"1.{mi}.{p}", st.integers(20, 33), st.integers(0, 9))
_inventories = st.fixed_dictionaries(
    {
        "apiservers": st.lists(
            st.builds(lambda i, v: {"name": f"a{i}", "version": v}, st.integers(0, 3), _version),
            min_size=1,
            max_size=3,
            unique_by=lambda a: a["name"],
        ),
        "kube-scheduler": st.lists(
            st.builds(lambda v: {"name": "s1", "version": v}, _version), max_size=1
        ),
        "nodes": st.lists(
            st.builds(
                lambda i, k, p: {"name": f"n{i}", "kubelet": k, "kube_proxy": p},
                st.integers(0, 5),
                _version,
                _version,
            ),
            max_size=4,
            unique_by=lambda n: n["name"],
        ),
        "kubectl": st.lists(
            st.builds(lambda v: {"name": "c1", "version": v}, _version), max_size=1
        ),
    }
)


def _found(data: dict[str, Any], policy: str) -> set[tuple[str, str]]:
    return {(v.id, v.object) for v in check(parse_inventory(data, "generated"), policy)}


@given(_inventories)
def test_n3_only_relaxes_n2(data: dict[str, Any]) -> None:
    """Upstream's n3 text allows everything the n2 text allows (SPEC H3, H6)."""
    assert _found(data, "k8s-n3") <= _found(data, "k8s-n2")


@given(_inventories, _version, st.sampled_from(["k8s-n2", "k8s-n3"]))
def test_another_apiserver_only_narrows(data: dict[str, Any], extra: str, policy: str) -> None:
    """High availability narrows every range: one more apiserver never hides a violation."""
    wider = {**data, "apiservers": [*data["apiservers"], {"name": "extra", "version": extra}]}
    assert _found(data, policy) <= _found(wider, policy)


@given(
    st.lists(_inventories, min_size=1, max_size=6),
    st.lists(st.sampled_from(["k8s-n2", "k8s-n3", "auto"]), min_size=6, max_size=6),
)
def test_node_rules_through_a_kept_memo_find_what_check_finds(
    sequence: list[dict[str, Any]], policies: list[str]
) -> None:
    """One memo kept across inventories and policies (as the Kubernetes controller keeps
    it, one node's change after another): each node's findings are exactly what `check`
    lists for that node, in its order, whatever changed in between (nodes, apiservers or
    the policy)."""
    memo = NodeMemo()  # SPEC H1, H3, H6: the node rules, memoised
    for data, policy in zip(sequence, policies, strict=False):
        moved = [{**n, "kubelet": data["apiservers"][0]["version"]} for n in data["nodes"][:1]]
        for nodes in (data["nodes"], moved + data["nodes"][1:]):  # a node moved on
            inventory = parse_inventory({**data, "nodes": nodes}, "generated")
            rules = resolve_policy(policy, inventory)
            judge = NodeRules(inventory, rules, memo)
            listed = check(inventory, policy)
            for node in inventory.nodes:
                mine = {f"node/{node.name}", f"kube-proxy/{node.name}"}
                assert judge.findings(node.name, node.kubelet, node.kube_proxy) == [
                    v for v in listed if v.object in mine
                ]


def test_skew_check_cli(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(
        'apiservers: [{name: a1, version: "1.30.2"}]\nnodes: [{name: n1, kubelet: "1.27.0"}]\n'
    )
    assert kupgrade("skew", "check", str(good), "--policy", "k8s-n3").returncode == 0
    done = kupgrade("skew", "check", str(good), "--policy", "k8s-n2", "-o", "json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["violations"] == [
        {
            "id": "H3.older",
            "objects": ["node/n1"],
            "message": "node/n1 at 1.27 is 3 minors behind kube-apiserver/a1 at 1.30; at most 2 allowed",
            "fix": "upgrade the kubelet to 1.28 or newer",
        }
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("apiservers: [{name: a1, version: 1.30}]", "quote versions"),
        ('apiservers: [{name: a1, version: "1.x"}]', "apiservers[a1].version"),
        ('apiservers: [{name: a1, version: "1.30.0"}]\nkube-sched: []', "kube-sched"),
        (
            'apiservers: [{name: a1, version: "1.30.0"}]\n'
            'kube-scheduler: [{name: s, version: "1.30.0", talks_to: [zz]}]',
            "'zz'",
        ),
    ],
)
def test_bad_inventories_are_named(tmp_path: Path, text: str, expected: str) -> None:
    bad = tmp_path / "inv.yaml"
    bad.write_text(text + "\n")
    done = kupgrade("skew", "check", str(bad))
    assert done.returncode == 1 and "inv.yaml" in done.stderr and expected in done.stderr, (
        done.stderr
    )
    done = kupgrade("skew", "check", str(bad), "--policy", "k8s-n9")
    assert done.returncode == 1


# README 3: a cloud-controller-manager step, which no public case makes; with `talks_to`
# it may follow the apiserver it talks to (allowed), without it every apiserver counts
# (H6.order, and the state after it has H4.newer).
_CCM = {
    "apiservers": [{"name": "a1", "version": "1.30.3"}, {"name": "a2", "version": "1.29.8"}],
    "cloud-controller-manager": [
        {"name": "c1", "version": "1.29.1", "talks_to": ["a1"]},
        {"name": "c2", "version": "1.29.1"},
    ],
    "nodes": [{"name": "n1", "kubelet": "1.29.0", "kube_proxy": "1.29.0"}],
}
OWN_STEPS: list[dict[str, Any]] = [
    {
        "id": f"own/step/ccm-{name}",
        "policy": "k8s-n3",
        "inventory": _CCM,
        "request": {"component": "cloud-controller-manager", "instances": [name], "to": "1.30.0"},
        "expect": expect,
    }
    for name, expect in (
        ("c1", {"verdict": "allowed", "rules": [], "warnings": []}),
        ("c2", {"verdict": "refused", "rules": ["H6.order", "H4.newer"], "warnings": []}),
    )
]


@pytest.mark.parametrize(
    "case", conformance_cases("cases", "skew", "upgrades.yaml") + case_params(OWN_STEPS)
)
def test_upgrade_step(case: Any) -> None:
    case = need_case(case, "skew", "upgrades.yaml")
    inventory = parse_inventory(case["inventory"], case["id"])
    request = case["request"]
    step = Step(
        request["component"],
        list(request["instances"]),
        request["to"],
        drained=bool(request.get("drained", False)),
        available=list(request.get("available") or []),
    )
    verdict = judge(inventory, step, case["policy"])
    expect = case["expect"]
    assert (verdict.verdict, verdict.rules, verdict.warnings) == (
        expect["verdict"],
        sorted(expect["rules"]),
        sorted(expect["warnings"]),
    )


def test_check_step_cli(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        'apiservers: [{name: a1, version: "1.29.8"}]\n'
        'nodes: [{name: n1, kubelet: "1.29.8"}, {name: n2, kubelet: "1.27.3"}]\n'
    )
    done = kupgrade(
        "skew",
        "check-step",
        str(inv),
        "--step",
        "kube-apiserver/a1 -> 1.30.4",
        "--policy",
        "k8s-n3",
        "-o",
        "json",
    )
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    assert (answer["verdict"], answer["rules"], answer["warnings"]) == (
        "warning",
        [],
        ["H6.kubelet-prereq"],
    )
    done = kupgrade("skew", "check-step", str(inv), "--step", "node/n1 -> 1.30.4", "-o", "json")
    assert done.returncode == 1
    answer = json.loads(done.stdout)
    assert answer["verdict"] == "refused"
    assert answer["rules"] == ["H3.newer", "H6.drain-before-minor", "H6.order"]
    assert answer["message"] and answer["fix"]
    drained = kupgrade("skew", "check-step", str(inv), "--step", "node/n1 -> 1.29.9", "-o", "json")
    assert json.loads(drained.stdout)["verdict"] == "allowed"
    for bad, expected in (
        ("kube-apiserver/zz -> 1.30.4", "no instance 'zz'"),
        ("kube-apiserver 1.30.4", "is not a step"),
        ("etcd/e1 -> 3.5.0", "unknown component"),
        ("kube-apiserver/a1 -> 1.x", "not a Kubernetes version"),
        # The inventory lists none: the step would move nothing, not be "allowed".
        ("kube-scheduler -> 1.29.8", "lists no kube-scheduler, so the step moves nothing"),
        ("kubectl -> 1.29.0", "lists no kubectl, so the step moves nothing"),
    ):
        done = kupgrade("skew", "check-step", str(inv), "--step", bad)
        assert done.returncode == 1 and expected in done.stderr, done.stderr


@given(
    _inventories,
    st.sampled_from(["kube-apiserver", "kube-scheduler", "kubelet", "kube-proxy", "kubectl"]),
    _version,
    st.sampled_from(["k8s-n2", "k8s-n3"]),
)
def test_a_step_that_is_not_refused_adds_no_violation(
    data: dict[str, Any], component: str, to: str, policy: str
) -> None:
    """SPEC X1 on one step: whatever check-step lets through keeps the state as legal as it was."""

    inventory = parse_inventory(data, "generated")
    step = parse_step(f"{component} -> {to}", inventory, drained=True)
    if not step.instances:
        return
    verdict = judge(inventory, step, policy)
    after = {(v.id, v.object) for v in check(apply_step(inventory, step), policy)}
    before = {(v.id, v.object) for v in check(inventory, policy)}
    assert (verdict.verdict == "refused") == bool(verdict.rules)
    if verdict.verdict != "refused":
        assert after <= before
