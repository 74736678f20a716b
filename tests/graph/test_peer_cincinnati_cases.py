"""openshift/cincinnati's own plugin tests (../shared/peer/cincinnati, transcribed from its
edge-add-remove, release-scrape, channel-filter and arch-filter tests), run through
`kupgrade graph build` and `kupgrade graph filter` (SPEC B1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.caseuse import case_params, plain
from tests.support.cli import kupgrade
from tests.support.conformance import SHARED

PEER = SHARED / "peer" / "cincinnati"
CASES = PEER / "cases.yaml"


def _cases() -> list[Any]:
    if not CASES.exists():
        return [pytest.param(None, id="peer-cincinnati-absent")]
    return case_params(yaml.safe_load(CASES.read_text())["cases"])


def _empty_tree(root: Path) -> Path:
    """The graph-data tree the cases run with: nothing but its version and raw metadata."""
    tree = root / "graph-data"
    for folder in ("channels", "blocked-edges", "raw"):
        (tree / folder).mkdir(parents=True)
    (tree / "version").write_text("1.0.0\n")
    (tree / "raw" / "metadata.json").write_text("{}")
    return tree


def _releases(root: Path, given: Any) -> Path:
    if "raw" in given:
        path = root / "raw.json"
        path.write_text(json.dumps(plain(given["raw"])))
        return path
    if "raw_file" in given:
        path = root / "raw.json"
        path.write_text((PEER / str(given["raw_file"])).read_text())
        return path
    folder = root / "releases"
    folder.mkdir()
    for i, document in enumerate(given["release_metadata"]):
        (folder / f"release-metadata-{i}.json").write_text(json.dumps(plain(document)))
    return folder


def _run(case: Any, root: Path) -> Any:
    given = case["input"]
    if case["kind"] == "build":
        releases = _releases(root, given)
        return kupgrade(
            "graph",
            "build",
            "--releases",
            str(releases),
            "--graph-data",
            str(_empty_tree(root)),
            "-o",
            "-",
        )
    assert case["kind"] == "filter"
    graph = root / "graph.json"
    graph.write_text(json.dumps(plain(given["graph"])))
    channel, arch = str(given["channel"]), str(given["arch"])
    return kupgrade(
        "graph", "filter", "--graph", str(graph), "--channel", channel, "--arch", arch, "-o", "json"
    )


def _node(node: dict[str, Any], ignored: set[str], payload: bool) -> str:
    metadata = {k: v for k, v in (node.get("metadata") or {}).items() if k not in ignored}
    shown = {"version": node["version"], "metadata": metadata}
    if payload:
        shown["payload"] = node.get("payload")
    return json.dumps(shown, sort_keys=True)


@pytest.mark.parametrize("case", _cases())
def test_cincinnati_plugin_case(case: Any, tmp_path: Path) -> None:
    if case is None:
        pytest.skip(f"{CASES} is absent")
    done = _run(case, tmp_path)
    expect = case["expect"]
    if not expect["ok"]:
        assert done.returncode != 0, done.stdout
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        return
    assert done.returncode == 0, done.stderr
    graph = json.loads(done.stdout)
    versions = [n["version"] for n in graph["nodes"]]
    edges = {(versions[a], versions[b]) for a, b in graph["edges"]}
    if expect.get("edges_differ_from_input"):
        raw = json.loads((PEER / str(case["input"]["raw_file"])).read_text())
        before = {(raw["nodes"][a]["version"], raw["nodes"][b]["version"]) for a, b in raw["edges"]}
        assert edges != before
    ignored = set(plain(expect.get("ignore_metadata_keys") or []))
    payload = bool(expect.get("compare_payload", True))
    if "nodes" in expect:
        got = {_node(n, ignored, payload) for n in graph["nodes"]}
        assert got == {_node(plain(n), ignored, payload) for n in expect["nodes"]}
    if "edges" in expect:
        assert edges == {(a, b) for a, b in plain(expect["edges"])}
