"""The graph builder and policy engine against Cincinnati's data (SPEC A3, C2; README §6.5)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from kupgrade.errors import BuildError
from kupgrade.graph.builder import add_edges, build_graph, remove_edges
from kupgrade.graph.codec import decode_graph, encode_graph, graph_to_json
from kupgrade.graph.compare import compare_cincinnati, compare_strict
from kupgrade.graph.graphdata import load_graph_data
from kupgrade.graph.policy import PolicyView
from kupgrade.graph.releases import load_releases
from kupgrade.graph.tree import open_tree
from tests.support.conformance import conformance_path

FIXTURES = ["20200220.104838", "20200319.204124", "20211124.083150"]


def build(raw: Path, graph_data: Path):  # type: ignore[no-untyped-def]
    return build_graph(load_releases(raw), load_graph_data(open_tree(graph_data)))


@pytest.mark.parametrize("fixture", FIXTURES)
def test_parser_fixture_matches_oracle(fixture: str) -> None:
    root = conformance_path("cincinnati", "parser-fixtures", fixture)
    oracle = conformance_path("cincinnati", "parser-fixtures", "oracle-output", f"{fixture}.json")
    graph = build(root / "graph-gb-raw.json", root / "cincinnati-graph-data")
    assert compare_strict(json.loads(oracle.read_bytes()), graph_to_json(graph)) == []
    # Our canonical output is byte-identical to the reference model's.
    assert encode_graph(graph) + b"\n" == oracle.read_bytes()


@pytest.mark.parametrize("fixture", FIXTURES)
def test_parser_fixture_matches_cincinnati_test(fixture: str) -> None:
    """Cincinnati's own test: expected = step 8 over graph-gb-with-quay-metadata.json (§6.2)."""
    root = conformance_path("cincinnati", "parser-fixtures", fixture)
    expected = decode_graph((root / "graph-gb-with-quay-metadata.json").read_bytes(), "quay")
    add_edges(expected)
    remove_edges(expected)
    graph = build(root / "graph-gb-raw.json", root / "cincinnati-graph-data")
    assert compare_cincinnati(graph_to_json(expected), graph_to_json(graph)) == []


def test_fixture_facts() -> None:
    root = conformance_path("cincinnati", "parser-fixtures", "20211124.083150")
    graph = build(root / "graph-gb-raw.json", root / "cincinnati-graph-data")
    assert len(graph.nodes) == 1085 and sum(1 for n in graph.nodes if not n.concrete) == 92
    assert graph.edge_count == 17395
    doc = graph_to_json(graph)
    assert len(doc["conditionalEdges"]) == 2
    assert sum(len(e["edges"]) for e in doc["conditionalEdges"]) == 63


def test_invalid_graph_data_fails_like_cincinnati() -> None:
    raw = conformance_path("cincinnati", "parser-fixtures", "20200220.104838", "graph-gb-raw.json")
    bad = conformance_path("cincinnati", "parser-fixtures", "invalid0", "cincinnati-graph-data")
    with pytest.raises(BuildError, match="channels/"):
        build(raw, bad)


def test_invalid_graph_data_files_are_only_skipped() -> None:
    bad = conformance_path("cincinnati", "parser-fixtures", "invalid0", "cincinnati-graph-data")
    tree = open_tree(bad)
    tree.dirs["channels"] = {}
    data = load_graph_data(tree)
    assert sorted(s.path for s in data.skipped) == [
        "blocked-edges/invalid.extension",
        "blocked-edges/invalid_format.yaml",
        "blocked-edges/missing_extension",
    ]


def test_e2e_synthetic_full() -> None:
    e2e = conformance_path("cincinnati", "e2e")
    graph = build(e2e / "synthetic-raw.json", e2e / "graph-data-134475077")
    full = e2e / "synthetic-full.json"
    assert compare_strict(json.loads(full.read_bytes()), graph_to_json(graph)) == []
    assert encode_graph(graph) + b"\n" == full.read_bytes()


def test_e2e_snapshots() -> None:
    e2e = conformance_path("cincinnati", "e2e")
    view = PolicyView(build(e2e / "synthetic-raw.json", e2e / "graph-data-134475077"))
    snapshots = sorted(e2e.glob("*_v1.json"))
    assert len(snapshots) == 7
    for snapshot in snapshots:
        _, channel, arch, _ = snapshot.stem.split("_")
        expected = json.loads(snapshot.read_bytes())
        assert compare_strict(expected, view.filter(channel, arch)) == [], snapshot.name


def test_graph_data_head_invariants() -> None:
    head = conformance_path("cincinnati", "graph-data-head")
    data = load_graph_data(open_tree(head))
    assert data.skipped == []
    assert len(data.channels) == 76
    assert (len(data.blocked), len(data.conditional)) == (116, 1601)
    definitions: dict[str, set[object]] = defaultdict(set)
    for block in data.conditional:
        definitions[block.risk.name].add(
            (block.risk.url, block.risk.message, block.risk.matching_rules)
        )
    assert all(len(found) == 1 for found in definitions.values())


def test_build_against_head_is_deterministic() -> None:
    raw = conformance_path("cincinnati", "parser-fixtures", "20211124.083150", "graph-gb-raw.json")
    head = conformance_path("cincinnati", "graph-data-head")
    first, second = encode_graph(build(raw, head)), encode_graph(build(raw, head))
    assert first == second
    doc = json.loads(first)
    assert doc["conditionalEdges"], "head graph-data has conditional edges for 4.7.4"
    plain = {(doc["nodes"][a]["version"], doc["nodes"][b]["version"]) for a, b in doc["edges"]}
    conditional = {
        (e["from"], e["to"]) for entry in doc["conditionalEdges"] for e in entry["edges"]
    }
    assert not plain & conditional, "a conditional edge is never also a plain edge"
