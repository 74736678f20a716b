"""Label selectors as apimachinery reads them (LabelSelectorAsSelector), and pool
membership as the machine-config operator computes it (GetPoolsForNode): matchLabels and
matchExpressions ANDed, an empty selector selecting everything and a null one nothing
(but a pool with either selects no node), invalid requirements selecting nothing and said
in apimachinery's words."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cluster.mco import pool_of, pools_for
from kupgrade.cluster.selectors import matches, problem

LABELS = {"node-role.kubernetes.io/worker": "", "zone": "a", "tier": "gold"}


@pytest.mark.parametrize(
    ("selector", "selected"),
    [
        (None, False),  # null: nothing
        ({}, True),  # empty: everything
        ({"matchLabels": {}, "matchExpressions": []}, True),
        ({"matchLabels": {"zone": "a"}}, True),
        ({"matchLabels": {"zone": "b"}}, False),
        ({"matchLabels": {"missing": ""}}, False),
        ({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}, True),
        ({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}, False),
        ({"matchExpressions": [{"key": "nope", "operator": "In", "values": ["a"]}]}, False),
        ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["b"]}]}, True),
        ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}, False),
        ({"matchExpressions": [{"key": "nope", "operator": "NotIn", "values": ["a"]}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, True),
        ({"matchExpressions": [{"key": "nope", "operator": "Exists"}]}, False),
        ({"matchExpressions": [{"key": "nope", "operator": "DoesNotExist"}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, False),
        # ANDed: labels and expressions, every expression.
        (
            {
                "matchLabels": {"zone": "a"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["silver"]}],
            },
            False,
        ),
    ],
)
def test_a_selector_selects_as_the_api_server_does(selector: Any, selected: bool) -> None:
    assert matches(selector, LABELS) is selected


@pytest.mark.parametrize(
    ("expr", "said"),
    [
        (
            {"key": "k", "operator": "Equals", "values": ["a"]},
            "'Equals' is not a valid label selector operator",
        ),
        (
            {"key": "k", "operator": "In", "values": []},
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"key": "k", "operator": "NotIn"},
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"key": "k", "operator": "Exists", "values": ["a"]},
            "values set must be empty for exists and does not exist",
        ),
    ],
)
def test_a_selector_the_api_server_refuses_selects_nothing(expr: Any, said: str) -> None:
    selector = {"matchExpressions": [expr]}
    assert problem(selector) == said
    assert not matches(selector, LABELS) and not matches(selector, {"k": "a"})


keys = st.sampled_from(["a", "b", "c"])
label_sets = st.dictionaries(keys, st.sampled_from(["x", "y"]))


@given(label_sets, st.dictionaries(keys, st.sampled_from(["x", "y"])))
def test_match_labels_are_in_expressions_of_one_value(labels: Any, wanted: Any) -> None:
    """A matchLabels pair is the In requirement with that one value (the API's own
    definition), whatever the labels."""
    expressions = [{"key": k, "operator": "In", "values": [v]} for k, v in wanted.items()]
    assert matches({"matchLabels": wanted}, labels) == matches(
        {"matchExpressions": expressions}, labels
    )


@given(label_sets, keys)
def test_exists_and_does_not_exist_are_opposites(labels: Any, key: str) -> None:
    exists = {"matchExpressions": [{"key": key, "operator": "Exists"}]}
    absent = {"matchExpressions": [{"key": key, "operator": "DoesNotExist"}]}
    assert matches(exists, labels) != matches(absent, labels)


def _pool(name: str, selector: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"nodeSelector": selector}}


def _node(**labels: str) -> dict[str, Any]:
    return {"metadata": {"name": "n", "labels": labels}}


def test_a_node_belongs_to_master_then_a_custom_pool_then_worker() -> None:
    """machine-config-operator pkg/controller/common/helpers.go GetPoolsForNode."""
    role = "node-role.kubernetes.io/"
    pools = [
        _pool("worker", {"matchLabels": {role + "worker": ""}}),
        _pool("master", {"matchLabels": {role + "master": ""}}),
        _pool("infra", {"matchExpressions": [{"key": role + "infra", "operator": "Exists"}]}),
        _pool("gpu", {"matchLabels": {role + "gpu": ""}}),
        _pool("nil", None),
    ]
    both = {role + "worker": "", role + "infra": "", role + "gpu": ""}
    assert pool_of(_node(**both), pools) == ""  # two custom pools: the operator stops
    assert pools_for(_node(**both), pools) == (
        [],
        "node n belongs to 2 custom roles, cannot proceed with this Node",
    )
    assert pools_for(_node(**{role + "worker": "", role + "infra": ""}), pools) == (
        ["infra", "worker"],
        "",
    )
    assert pool_of(_node(**{role + "infra": ""}), pools) == "infra"  # a custom pool alone
    assert pools_for(_node(**{role + "master": "", role + "worker": ""}), pools) == (["master"], "")
    # The master pool wins over a custom one (and the worker pool comes second).
    master_infra = {role + "master": "", role + "infra": "", role + "worker": ""}
    assert pools_for(_node(**master_infra), pools) == (["master", "worker"], "")
    assert pool_of(_node(**{role + "worker": ""}), pools) == "worker"
    assert pool_of(_node(other="x"), pools) == ""  # the nil selector selects nothing


@pytest.mark.parametrize(
    "selector",
    [
        None,
        {},
        {"matchLabels": {}},
        {"matchLabels": {}, "matchExpressions": []},
        {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},  # invalid
        {"matchExpressions": [{"key": "a", "operator": "Near"}]},  # invalid
        "not a selector",
    ],
)
def test_a_pool_with_a_nil_empty_or_invalid_selector_selects_no_node(selector: Any) -> None:
    """ "A pool with a nil or empty selector matches nothing" (GetPoolsForNode skips
    selector.Empty() and an invalid selector), although matches({}) is everything."""
    node = _node(**{"node-role.kubernetes.io/worker": "", "a": "b"})
    assert pool_of(node, [_pool("all", selector)]) == ""
    worker = _pool("worker", {"matchLabels": {"node-role.kubernetes.io/worker": ""}})
    assert pool_of(node, [_pool("all", selector), worker]) == "worker"


@given(st.sets(st.sampled_from(["master", "worker", "infra", "gpu", "edge"])))
def test_the_operator_s_pool_rules_hold_for_any_set_of_matching_pools(names: set[str]) -> None:
    node = _node(**{f"in-{n}": "" for n in names})
    every = ["master", "worker", "infra", "gpu", "edge"]
    pools = [_pool(n, {"matchLabels": {f"in-{n}": ""}}) for n in every]
    mine, why = pools_for(node, pools)
    custom = names - {"master", "worker"}
    assert bool(why) == (len(custom) > 1)
    if len(custom) > 1:
        assert mine == []
    elif "master" in names:
        assert mine[0] == "master"
    elif custom:
        assert mine == [*custom, *(["worker"] if "worker" in names else [])]
    else:
        assert mine == (["worker"] if "worker" in names else [])
