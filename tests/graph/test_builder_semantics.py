"""Each graph-builder step and quirk of README §3/§7 on small graphs (SPEC A3, C2)."""

from __future__ import annotations

import pytest

from kupgrade.errors import BuildError
from kupgrade.graph.graphdata import load_graph_data, yaml_extension
from tests.support.graphkit import (
    P,
    build_doc,
    conditional_of,
    edges_of,
    metadata_of,
    node,
    raw_graph,
    risk,
    tree,
)

A, B, C = "4.1.0+amd64", "4.1.1+amd64", "4.2.0+amd64"
SA, SB, SC = "4.1.0+s390x", "4.1.1+s390x", "4.2.0+s390x"


def chain() -> dict[str, object]:
    nodes = [node(v) for v in (A, B, C, SA, SB, SC)]
    return raw_graph(nodes, [(A, B), (B, C), (A, C), (SA, SB), (SB, SC), (SA, SC)])


def test_raw_metadata_appends_to_every_arch() -> None:
    raw = chain()
    raw["nodes"][1]["metadata"]["url"] = "u1"  # type: ignore[index]
    doc = build_doc(raw, tree(raw_metadata={"4.1.1": {"url": "u2", "extra": "x"}}))
    assert metadata_of(doc, B)["url"] == "u1,u2"
    assert metadata_of(doc, SB)["url"] == "u2" and metadata_of(doc, SB)["extra"] == "x"


def test_unconditional_block_applies_to_every_arch() -> None:
    doc = build_doc(chain(), tree(blocked={"4.2.0.yaml": {"to": "4.2.0", "from": "4\\.1\\.0"}}))
    assert (A, C) not in edges_of(doc) and (SA, SC) not in edges_of(doc)
    assert (B, C) in edges_of(doc)
    assert metadata_of(doc, C)[P + "previous.remove_regex"] == "4\\.1\\.0"  # processed keys stay


def test_block_with_build_applies_to_that_arch_only() -> None:
    doc = build_doc(chain(), tree(blocked={"4.2.0.yaml": {"to": "4.2.0+s390x", "from": ".*"}}))
    assert (A, C) in edges_of(doc) and (B, C) in edges_of(doc)
    assert (SA, SC) not in edges_of(doc) and (SB, SC) not in edges_of(doc)


def test_legacy_s390x_prerelease() -> None:
    legacy = "4.2.11-s390x+s390x"
    raw = raw_graph(
        [node("4.2.10+s390x"), node(legacy), node("4.2.11+amd64"), node("4.2.10+amd64")],
        [("4.2.10+s390x", legacy), ("4.2.10+amd64", "4.2.11+amd64")],
    )
    doc = build_doc(raw, tree(blocked={"4.2.11-s390x.yaml": {"to": "4.2.11-s390x", "from": ".*"}}))
    assert edges_of(doc) == {("4.2.10+amd64", "4.2.11+amd64")}


def test_later_unconditional_block_overwrites() -> None:
    blocked = {
        "4.2.0-a.yaml": {"to": "4.2.0", "from": "4\\.1\\.0"},
        "4.2.0-b.yaml": {"to": "4.2.0", "from": "4\\.1\\.1"},
    }
    doc = build_doc(chain(), tree(blocked=blocked))
    assert (A, C) in edges_of(doc) and (B, C) not in edges_of(doc)


def test_regex_is_an_unanchored_search_over_version_and_arch() -> None:
    doc = build_doc(chain(), tree(blocked={"4.2.0.yaml": {"to": "4.2.0", "from": "1[+]s390x$"}}))
    assert (SA, SC) in edges_of(doc) and (SB, SC) not in edges_of(doc)
    assert (A, C) in edges_of(doc) and (B, C) in edges_of(doc)


def test_conditional_block_moves_the_edge_and_accumulates_risks_in_file_order() -> None:
    blocked = {
        "4.2.0-a.yaml": risk("4.2.0", "4\\.1\\..*", "Zeta"),
        "4.2.0-b.yaml": risk("4.2.0", "4\\.1\\.1", "Alpha"),
    }
    doc = build_doc(chain(), tree(blocked=blocked))
    conditional = conditional_of(doc)
    assert conditional[(A, C)] == ["Zeta"]
    assert conditional[(B, C)] == ["Zeta", "Alpha"]  # file order, not name order
    assert conditional[(SB, SC)] == ["Zeta", "Alpha"]
    assert not edges_of(doc) & set(conditional)
    assert metadata_of(doc, C)[P + "previous.remove_regex"] == "4\\.1\\..*|4\\.1\\.1"


def test_conditional_edges_use_parents_before_removal_including_abstract() -> None:
    raw = raw_graph([node(A), node(C), {"version": "4.0.9+amd64"}], [(A, C), ("4.0.9+amd64", C)])
    raw["nodes"][1]["metadata"][P + "previous.remove"] = "4.1.0"  # type: ignore[index]
    doc = build_doc(raw, tree(blocked={"4.2.0-r.yaml": risk("4.2.0", ".*", "Risky")}))
    assert set(conditional_of(doc)) == {(A, C), ("4.0.9+amd64", C)}
    assert edges_of(doc) == set()


def test_channels_sort_and_builds() -> None:
    raw = chain()
    channels = {
        "stable-4.9.yaml": {"name": "stable-4.9", "versions": ["4.1.0"]},
        "stable-4.10.yaml": {"name": "stable-4.10", "versions": ["4.1.0", "4.1.0+amd64"]},
        "fast-4.10.yaml": {
            "name": "fast-4.10",
            "versions": ["4.1.0+s390x"],
            "feeder": {"name": "candidate"},
        },
    }
    doc = build_doc(raw, tree(channels=channels))
    assert metadata_of(doc, A)[P + "release.channels"] == "stable-4.10,stable-4.9"
    assert metadata_of(doc, SA)[P + "release.channels"] == "fast-4.10,stable-4.10,stable-4.9"
    assert P + "release.channels" not in metadata_of(doc, B)


def test_edge_add_takes_the_carriers_arch_and_remove_beats_add() -> None:
    raw = raw_graph([node(v) for v in (A, B, C, SA, SC)], [])
    raw["nodes"][2]["metadata"][P + "previous.add"] = "4.1.0, 4.1.1, 9.9.9"  # type: ignore[index]
    raw["nodes"][0]["metadata"][P + "next.add"] = "4.1.1"  # type: ignore[index]
    raw["nodes"][2]["metadata"][P + "previous.remove"] = "4.1.1"  # type: ignore[index]
    doc = build_doc(raw, tree())
    assert edges_of(doc) == {(A, C), (A, B)}


def test_remove_all_and_next_remove() -> None:
    raw = chain()
    raw["nodes"][2]["metadata"][P + "previous.remove"] = " * "  # type: ignore[index]
    raw["nodes"][3]["metadata"][P + "next.remove"] = "4.1.1"  # type: ignore[index]
    doc = build_doc(raw, tree())
    assert edges_of(doc) == {(A, B), (SA, SC), (SB, SC)}


def test_add_that_closes_a_cycle_fails_the_build() -> None:
    raw = chain()
    raw["nodes"][0]["metadata"][P + "previous.add"] = "4.2.0"  # type: ignore[index]
    with pytest.raises(BuildError, match="cycle"):
        build_doc(raw, tree())


def test_add_item_that_is_not_semver_fails_the_build() -> None:
    raw = chain()
    raw["nodes"][2]["metadata"][P + "previous.add"] = "4.1.0,not-a-version"  # type: ignore[index]
    with pytest.raises(BuildError, match="not-a-version"):
        build_doc(raw, tree())


@pytest.mark.parametrize(
    ("name", "read"),
    [
        ("a.yaml", True),
        ("a.yaaml", True),
        ("a.myyamlfile", True),
        ("a.yml", False),
        (".yaml", False),
        ("OWNERS", False),
        ("a.", False),
        ("a.b.yaml", True),
    ],
)
def test_extension_rule(name: str, read: bool) -> None:
    assert yaml_extension(name) is read


def test_bad_files_are_skipped_not_fatal() -> None:
    blocked = {
        "bad.yaml": "to: [unclosed\n",
        "regex.yaml": {"to": "4.2.0", "from": "(?=lookahead)"},
        "partial.yaml": {"to": "4.2.0", "from": ".*", "url": "https://x"},
        "typo.yaml": {"_to": "4.2.0", "from": ".*"},
        "number.yaml": {"to": 4.2, "from": ".*"},
        "list.yaml": "- a\n- b\n",
    }
    data = load_graph_data(
        tree(blocked=blocked, channels={"nodash.yaml": {"name": "stable", "versions": []}})
    )
    reasons = {s.path: s.reason for s in data.skipped}
    assert set(reasons) == {f"blocked-edges/{n}" for n in blocked} | {"channels/nodash.yaml"}
    assert "RE2" in reasons["blocked-edges/regex.yaml"]
    assert "invalid YAML" in reasons["blocked-edges/bad.yaml"]


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("1.0.0", True),
        (" 1.2.0 \n", True),
        ("1.1.0-rc.1", True),
        ("2.0.0", False),
        ("abc", False),
        ("", False),
    ],
)
def test_version_file(text: str, ok: bool) -> None:
    if ok:
        load_graph_data(tree(version=text))
    else:
        with pytest.raises(BuildError, match="version"):
            load_graph_data(tree(version=text))


def test_raw_metadata_required_and_valid() -> None:
    broken = tree()
    broken.dirs["raw"] = {}
    with pytest.raises(BuildError, match=r"raw/metadata\.json"):
        load_graph_data(broken)
    bad = tree()
    bad.dirs["raw"]["metadata.json"] = type(bad.dirs["raw"]["metadata.json"])(
        "metadata.json", data=b'{"4.1.0": {"k": 1}}'
    )
    with pytest.raises(BuildError, match="string values"):
        load_graph_data(bad)
