"""`graph lint` finds every problem with file, field and reason."""

from __future__ import annotations

from typing import Any

import pytest

from kupgrade.graph.lint import lint_tree
from kupgrade.graph.tree import Entry, open_tree
from tests.support.conformance import conformance_path
from tests.support.graphkit import risk, tree

GOOD_RISK = risk(
    "4.14.1", "4[.]13[.].*", "GoodRisk", [{"type": "PromQL", "promql": {"promql": "max(up)"}}]
)
CHANNEL = {"name": "stable-4.14", "versions": ["4.13.1", "4.14.1"]}


def problems(
    blocked: dict[str, Any] | None = None, channels: dict[str, Any] | None = None
) -> list[str]:
    return [
        str(p)
        for p in lint_tree(
            tree(blocked=blocked, channels=channels or {"stable-4.14.yaml": CHANNEL})
        )
    ]


def test_clean_tree() -> None:
    assert (
        problems({"4.14.1-GoodRisk.yaml": GOOD_RISK, "4.14.2.yaml": {"to": "4.14.2", "from": ".*"}})
        == []
    )


@pytest.mark.parametrize(
    ("name", "doc", "expected"),
    [
        ("4.14.1.yaml", "to: [x\n", "4.14.1.yaml: invalid YAML"),
        ("4.14.1.yaml", {"_to": "4.14.1", "from": ".*"}, "_to: unknown key"),
        ("4.14.1.yaml", {"to": "4.14", "from": ".*"}, "to: '4.14' is not a SemVer version"),
        ("4.14.1.yaml", {"to": 4.14, "from": ".*"}, "to: 4.14 is a YAML number"),
        (
            "4.14.1.yaml",
            {"to": "4.14.1", "from": "(unclosed"},
            "from: regex '(unclosed' does not compile",
        ),
        ("4.14.1.yaml", {"to": "4.14.1", "from": "(?!x)y"}, "outside RE2"),
        ("4.14.1.yaml", {"to": "4.14.1", "from": "(a)\\1"}, "outside RE2"),
        (
            "x-4.14.1.yaml",
            {"to": "4.14.1", "from": ".*"},
            "to: file name should start with the 'to' version 4.14.1",
        ),
        (
            "4.14.1.yml",
            {"to": "4.14.1", "from": ".*"},
            "4.14.1.yml: is not read by the graph builder",
        ),
        ("4.14.1-r.yaml", {**GOOD_RISK, "name": "lowerCase"}, "name: 'lowerCase' must match"),
        (
            "4.14.1-r.yaml",
            {**GOOD_RISK, "url": "http://insecure"},
            "url: 'http://insecure' must be an https:// URL",
        ),
        (
            "4.14.1-r.yaml",
            {**GOOD_RISK, "matchingRules": [{"type": "Always"}, {"type": "Always"}]},
            "Always appears twice",
        ),
        (
            "4.14.1-r.yaml",
            {**GOOD_RISK, "matchingRules": [{"type": "Always", "promql": {"promql": "up"}}]},
            "an Always rule takes no other keys",
        ),
        (
            "4.14.1-r.yaml",
            {**GOOD_RISK, "matchingRules": [{"type": "PromQL"}]},
            "needs a non-empty query",
        ),
        (
            "4.14.1-r.yaml",
            {**GOOD_RISK, "matchingRules": [{"type": "Sometimes"}]},
            "'Sometimes' is not a known rule type",
        ),
        (
            "4.14.1-r.yaml",
            {**GOOD_RISK, "matchingRules": []},
            "matchingRules: must be a non-empty list",
        ),
        (
            "4.14.1-r.yaml",
            {k: v for k, v in GOOD_RISK.items() if k != "message"},
            "message: missing",
        ),
        (
            "4.14.1-r.yaml",
            {**GOOD_RISK, "fixedIn": "4.14"},
            "fixedIn: '4.14' is not a SemVer version",
        ),
    ],
)
def test_blocked_edge_problems(name: str, doc: Any, expected: str) -> None:
    found = problems({name: doc})
    assert any(expected in p for p in found), found
    assert all(p.startswith("blocked-edges/") for p in found)


def test_risks_sharing_a_name_must_share_a_definition() -> None:
    other = {**GOOD_RISK, "to": "4.14.2", "message": "something else"}
    found = problems({"4.14.1-GoodRisk.yaml": GOOD_RISK, "4.14.2-GoodRisk.yaml": other})
    assert found == [
        "blocked-edges/4.14.2-GoodRisk.yaml: name: risk GoodRisk is also defined in "
        "blocked-edges/4.14.1-GoodRisk.yaml with a different message"
    ]


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"name": "Stable-4.14", "versions": []}, "can never be requested"),
        ({"name": "stable", "versions": []}, "has no '-'"),
        (
            {"name": "stable-4.14", "versions": ["4.14.1", 4.15]},
            "versions[1]: 4.15 is a YAML number",
        ),
        ({"name": "stable-4.14", "versions": ["4.14.1", "4.14.1"]}, "4.14.1 is listed twice"),
        (
            {"name": "stable-4.14", "versions": [], "feeder": {"name": "fast", "filter": "(?<=x)"}},
            "feeder.filter",
        ),
        ({"name": "stable-4.14", "versions": [], "colour": "blue"}, "colour: unknown key"),
        ({"name": "stable-4.14"}, "versions: must be a list"),
    ],
)
def test_channel_problems(doc: Any, expected: str) -> None:
    found = problems(channels={"c.yaml": doc})
    assert any(expected in p for p in found), found


def test_missing_structure() -> None:
    broken = tree()
    del broken.dirs["channels"]
    broken.top["version"] = Entry("version", data=b"3.0.0")
    found = [str(p) for p in lint_tree(broken)]
    assert "channels/: missing: graph-data must have a 'channels/' directory" in found
    assert "version: schema 3.0.0 is not supported (major version 1 is)" in found


def test_current_graph_data_is_clean() -> None:

    assert lint_tree(open_tree(conformance_path("cincinnati", "graph-data-head"))) == []


def test_invalid0_fixture() -> None:

    found = [
        str(p)
        for p in lint_tree(
            open_tree(
                conformance_path(
                    "cincinnati", "parser-fixtures", "invalid0", "cincinnati-graph-data"
                )
            )
        )
    ]
    assert (
        "blocked-edges/invalid_format.yaml: _to: unknown key (known: fixedIn, from, matchingRules, message, name, to, url)"
        in found
    )
    assert any("missing_extension" in p for p in found) and any(
        "invalid.extension" in p for p in found
    )
