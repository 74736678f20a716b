"""Helpers to write small graphs and graph-data trees in tests."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import yaml

from kupgrade.graph.builder import build_graph
from kupgrade.graph.codec import graph_from_doc, graph_to_json
from kupgrade.graph.graphdata import load_graph_data
from kupgrade.graph.tree import Entry, Tree

P = "io.openshift.upgrades.graph."


def node(version: str, **metadata: str) -> dict[str, Any]:
    arch = version.split("+", 1)[1] if "+" in version else None
    meta = {P + "release.arch": arch} if arch else {}
    meta.update({k.replace("__", "."): v for k, v in metadata.items()})
    digest = hashlib.sha256(version.encode()).hexdigest()
    return {"version": version, "payload": f"quay.io/x/release@sha256:{digest}", "metadata": meta}


def raw_graph(nodes: list[dict[str, Any]], edges: list[tuple[str, str]]) -> dict[str, Any]:
    index = {n["version"]: i for i, n in enumerate(nodes)}
    return {"nodes": nodes, "edges": [[index[a], index[b]] for a, b in edges]}


def tree(
    blocked: dict[str, Any] | None = None,
    channels: dict[str, Any] | None = None,
    raw_metadata: dict[str, Any] | None = None,
    version: str = "1.1.0",
) -> Tree:
    def entry(name: str, doc: Any) -> Entry:
        data = doc.encode() if isinstance(doc, str) else yaml.safe_dump(doc).encode()
        return Entry(name, data=data)

    return Tree(
        "mem",
        top={"version": Entry("version", data=version.encode())},
        dirs={
            "blocked-edges": {n: entry(n, d) for n, d in (blocked or {}).items()},
            "channels": {n: entry(n, d) for n, d in (channels or {}).items()},
            "raw": {
                "metadata.json": Entry(
                    "metadata.json", data=json.dumps(raw_metadata or {}).encode()
                )
            },
        },
    )


def build_doc(raw: dict[str, Any], data_tree: Tree) -> dict[str, Any]:
    return graph_to_json(build_graph(graph_from_doc(raw, "raw"), load_graph_data(data_tree)))


def edges_of(doc: dict[str, Any]) -> set[tuple[str, str]]:
    versions = [n["version"] for n in doc["nodes"]]
    return {(versions[a], versions[b]) for a, b in doc["edges"]}


def conditional_of(doc: dict[str, Any]) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for entry in doc["conditionalEdges"]:
        for edge in entry["edges"]:
            out.setdefault((edge["from"], edge["to"]), []).extend(r["name"] for r in entry["risks"])
    return out


def metadata_of(doc: dict[str, Any], version: str) -> dict[str, str]:
    return next(n for n in doc["nodes"] if n["version"] == version).get("metadata", {})


def risk(
    to: str, from_: str, name: str, rules: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "to": to,
        "from": from_,
        "url": f"https://example.com/{name}",
        "name": name,
        "message": f"{name} happens.",
        "matchingRules": rules or [{"type": "Always"}],
    }
