"""Update paths on the real stable-4.7/4.8 graphs served by our update service (SPEC H7, X4)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import deque
from typing import Any

import httpx
import pytest

from kupgrade.graph.codec import graph_from_doc
from kupgrade.graph.model import Graph, MatchingRule, Risk
from kupgrade.plan.path import channels_between, plan_path
from kupgrade.risks.rules import Registry
from kupgrade.versions import SemVer
from tests.support.service import Server


def _path(server: Server, *args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "path",
            "--upstream",
            f"{server.base}/api/upgrades_info/graph",
            *args,
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(done.stdout)


def _graph(server: Server, channel: str) -> dict[str, Any]:
    answer = httpx.get(
        f"{server.base}/api/upgrades_info/graph", params={"channel": channel, "arch": "amd64"}
    )
    return dict(answer.json())


def _bfs(docs: list[dict[str, Any]], start: str) -> dict[str, int]:
    children: dict[str, set[str]] = {}
    for doc in docs:
        names = [n["version"] for n in doc["nodes"]]
        for a, b in doc["edges"]:
            children.setdefault(names[a], set()).add(names[b])
    dist = {start: 0}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        for nxt in children.get(here, ()):
            if nxt not in dist:
                dist[nxt] = dist[here] + 1
                queue.append(nxt)
    return dist


def test_path_across_minors_is_shortest_and_prefers_newest(e2e_server: Server) -> None:
    code, result = _path(e2e_server, "--from", "4.7.0", "--to", "4.8.54", "--channel", "stable-4.7")
    assert code == 0 and result["found"]
    assert result["channels"] == ["stable-4.7", "stable-4.8"]
    docs = [_graph(e2e_server, c) for c in result["channels"]]
    assert len(result["hops"]) == _bfs(docs, "4.7.0")["4.8.54"]
    here = "4.7.0"
    for hop in result["hops"]:
        assert hop["from"] == here and hop["recommended"] and hop["channels"]
        # H7: no newer release at this hop still lies on a shortest path
        rest = _bfs(docs, hop["to"]).get("4.8.54")
        for doc in docs:
            names = [n["version"] for n in doc["nodes"]]
            for a, b in doc["edges"]:
                if names[a] == here and SemVer.parse(names[b]) > SemVer.parse(hop["to"]):
                    assert _bfs(docs, names[b]).get("4.8.54", 99) > (rest or 0)
        here = hop["to"]
    assert here == "4.8.54"
    assert "hop" in result["explanation"][0]


def test_impossible_paths_explain_themselves(e2e_server: Server) -> None:
    code, result = _path(e2e_server, "--from", "4.7.0", "--to", "4.9.99", "--channel", "stable-4.7")
    assert code == 1 and not result["found"]
    assert "4.9.99 is in none of the channels queried" in result["explanation"][0]
    code, result = _path(
        e2e_server, "--from", "4.8.54", "--to", "4.7.60", "--channel", "stable-4.8"
    )
    assert code == 1 and "downgrade" in result["explanation"][0]
    code, result = _path(e2e_server, "--from", "4.7.60", "--to", "4.8.2", "--channel", "stable-4.7")
    assert code == 1 and "reaches" in result["explanation"][0]


def _toy(conditional: bool) -> Graph:
    doc = {
        "nodes": [
            {"version": v, "payload": f"p/{v}", "metadata": {}}
            for v in ("4.1.0", "4.1.5", "4.2.0", "4.2.3")
        ],
        "edges": [[0, 1], [0, 2], [1, 3], [2, 3]],
    }
    if conditional:
        doc["edges"] = [[0, 1], [0, 2], [2, 3]]
        doc["conditionalEdges"] = [
            {
                "edges": [{"from": "4.1.5", "to": "4.2.3"}],
                "risks": [
                    {
                        "name": "R",
                        "url": "https://r",
                        "message": "m",
                        "matchingRules": [{"type": "Always"}],
                    }
                ],
            }
        ]
    return graph_from_doc(doc, "toy")


def test_newest_patch_first_and_risks_block() -> None:
    registry = Registry.standard(None)
    result = plan_path("4.1.0", "4.2.3", {"stable-4.1": _toy(False)}, registry)
    assert [h.dst for h in result.hops] == ["4.2.0", "4.2.3"] or [h.dst for h in result.hops] == [
        "4.1.5",
        "4.2.3",
    ]
    assert result.hops[0].dst == "4.2.0"  # of the two-hop paths, the newer first hop
    blocked = plan_path("4.1.0", "4.2.3", {"stable-4.1": _toy(True)}, registry)
    assert [h.dst for h in blocked.hops] == ["4.2.0", "4.2.3"]  # the risky 4.1.5 edge is avoided
    risky_only = _toy(True)
    risky_only.remove_edge(2, 3)
    none = plan_path("4.1.0", "4.2.3", {"stable-4.1": risky_only}, registry)
    assert (
        not none.found
        and "not recommended" in none.explanation[0]
        and "Recommended=False R" in none.explanation[0]
    )
    forced = plan_path(
        "4.1.0", "4.2.3", {"stable-4.1": risky_only}, registry, include_not_recommended=True
    )
    assert forced.found and not forced.hops[-1].recommended
    assert Risk("https://r", "R", "m", (MatchingRule("Always"),)) in forced.hops[-1].risks


def test_channels_between() -> None:
    assert channels_between("stable-4.13", SemVer.parse("4.13.4"), SemVer.parse("4.15.1")) == [
        "stable-4.13",
        "stable-4.14",
        "stable-4.15",
    ]
    assert channels_between("fast-4.14", SemVer.parse("4.13.4"), SemVer.parse("4.14.1")) == [
        "fast-4.13",
        "fast-4.14",
    ]
    with pytest.raises(Exception, match="family"):
        channels_between("stable", SemVer.parse("4.13.4"), SemVer.parse("4.14.1"))
