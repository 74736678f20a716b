"""The policy engine's channel and arch filters, quirks included (README §4)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.graph.codec import graph_from_doc
from kupgrade.graph.policy import PolicyError, PolicyView, strip_arch
from tests.support.graphkit import P, node, raw_graph

CH = P + "release.channels"


def view() -> PolicyView:
    nodes = [
        node("4.12.0-rc.0+multi", **{CH.replace(".", "__"): "candidate-4.12"}),
        node("4.12.0-rc.1+multi", **{CH.replace(".", "__"): "candidate-4.12, candidate-4.13"}),
        node("4.12.0-rc.1+amd64", **{CH.replace(".", "__"): "candidate-4.12"}),
        node("4.11.9+amd64"),  # in no channel
        {"version": "4.11.8+amd64"},  # abstract
    ]
    doc = raw_graph(
        nodes,
        [
            ("4.12.0-rc.0+multi", "4.12.0-rc.1+multi"),
            ("4.11.9+amd64", "4.12.0-rc.1+amd64"),
            ("4.11.8+amd64", "4.12.0-rc.1+amd64"),
        ],
    )
    doc["conditionalEdges"] = [
        {
            "edges": [
                {"from": "4.11.9+amd64", "to": "4.12.0-rc.1+amd64"},
                {"from": "4.12.0-rc.0+multi", "to": "4.12.0-rc.1+multi"},
            ],
            "risks": [
                {
                    "url": "https://x",
                    "name": "R",
                    "message": "m",
                    "matchingRules": [{"type": "Always"}],
                }
            ],
        }
    ]
    return PolicyView(graph_from_doc(doc, "test"))


def test_channel_then_arch_filter_strips_the_arch() -> None:
    doc = view().filter("candidate-4.12", "multi")
    assert [n["version"] for n in doc["nodes"]] == ["4.12.0-rc.0", "4.12.0-rc.1"]
    assert doc["edges"] == [[0, 1]]
    assert all(P + "release.arch" not in n["metadata"] for n in doc["nodes"])
    assert doc["conditionalEdges"][0]["edges"] == [{"from": "4.12.0-rc.0", "to": "4.12.0-rc.1"}]
    assert doc["version"] == 1


def test_channel_filter_drops_conditional_edges_of_removed_versions() -> None:
    doc = view().filter("candidate-4.12", "amd64")
    assert [n["version"] for n in doc["nodes"]] == ["4.12.0-rc.1"]
    assert doc["conditionalEdges"] == []  # 4.11.9 is in no channel


def test_items_trimmed_and_unknown_values_give_empty_graph() -> None:
    assert [n["version"] for n in view().filter("candidate-4.13", "multi")["nodes"]] == [
        "4.12.0-rc.1"
    ]
    empty = {"version": 1, "nodes": [], "edges": [], "conditionalEdges": []}
    assert view().filter("nothing-here", "amd64") == empty
    assert view().filter("candidate-4.12", "arrgh64") == empty


def test_arch_substring_quirk_keeps_conditional_edges() -> None:
    doc = view().filter("candidate-4.12", "ulti")
    assert doc["nodes"] == [] and len(doc["conditionalEdges"]) == 1


@pytest.mark.parametrize(
    ("channel", "arch", "param"),
    [
        ("Bad", "amd64", "channel"),
        ("", "amd64", "channel"),
        ("ok-1", "AMD", "arch"),
        ("bad:1", "X", "channel"),
    ],
)
def test_invalid_parameters(channel: str, arch: str, param: str) -> None:
    with pytest.raises(PolicyError) as info:
        view().filter(channel, arch)
    assert (
        info.value.status == 400
        and info.value.kind == "invalid_params"
        and info.value.param == param
    )


def test_non_semver_node_is_an_arch_version_error() -> None:
    doc = raw_graph([node("not-semver+amd64", **{CH.replace(".", "__"): "a-1"})], [])
    with pytest.raises(PolicyError) as info:
        PolicyView(graph_from_doc(doc, "t")).filter("a-1", "amd64")
    assert (info.value.status, info.value.kind) == (500, "arch_version_error")


@given(
    st.lists(st.sampled_from(["amd64", "multi", "s390x", "x"]), max_size=3),
    st.sampled_from(["amd64", "multi"]),
)
def test_strip_arch_removes_only_that_identifier(build: list[str], arch: str) -> None:
    version = "4.12.0-rc.1" + ("+" + ".".join(build) if build else "")
    stripped = strip_arch(version, arch)
    kept = [b for b in build if b != arch]
    assert stripped == "4.12.0-rc.1" + ("+" + ".".join(kept) if kept else "")


def test_blocked_edges_are_listed_per_channel_and_arch_with_what_removed_them() -> None:
    """Graph.blocked as the console lists it: only pairs whose two versions the channel
    and arch serve, arch stripped, each with the key that removed it and its value."""
    nodes = [
        node("4.12.0+amd64", **{CH.replace(".", "__"): "stable-4.12"}),
        node(
            "4.12.1+amd64",
            **{
                CH.replace(".", "__"): "stable-4.12",
                (P + "previous.remove_regex").replace(".", "__"): "4[.]12[.]0.*",
            },
        ),
        node("4.12.2+amd64", **{CH.replace(".", "__"): "fast-4.12"}),
        node(
            "4.12.0+arm64",
            **{
                CH.replace(".", "__"): "stable-4.12",
                (P + "next.remove").replace(".", "__"): "4.12.1",
            },
        ),
        node("4.12.1+arm64", **{CH.replace(".", "__"): "stable-4.12"}),
    ]
    graph = graph_from_doc(raw_graph(nodes, []), "test")
    graph.blocked = {
        ("4.12.0+amd64", "4.12.1+amd64"): P + "previous.remove_regex",
        ("4.12.0+amd64", "4.12.2+amd64"): P + "previous.remove",  # 4.12.2 is not in stable
        ("4.12.0+arm64", "4.12.1+arm64"): P + "next.remove",
    }
    policy = PolicyView(graph)
    assert policy.blocked("stable-4.12", "amd64") == [
        {
            "from": "4.12.0",
            "to": "4.12.1",
            "removedBy": P + "previous.remove_regex",
            "rule": "4[.]12[.]0.*",
        },
    ]
    assert policy.blocked("stable-4.12", "arm64") == [
        {"from": "4.12.0", "to": "4.12.1", "removedBy": P + "next.remove", "rule": "4.12.1"},
    ]
    assert policy.blocked("fast-4.12", "amd64") == []
    with pytest.raises(PolicyError):
        policy.blocked("stable 4.12", "amd64")
