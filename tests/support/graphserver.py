"""An update service on loopback that answers with one Cincinnati graph: for twins and
preflights whose clusters need an upstream (tests and bench/)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlsplit

from tests.support.service import serving


def graph_of(versions: list[str]) -> bytes:
    """A graph of `versions` with an edge from each to every later one."""
    nodes = [
        {
            "version": v,
            "payload": f"quay.io/x@sha256:{hashlib.sha256(v.encode()).hexdigest()}",
            "metadata": {},
        }
        for v in versions
    ]
    edges = [[i, j] for i in range(len(nodes)) for j in range(i + 1, len(nodes))]
    return json.dumps({"nodes": nodes, "edges": edges}).encode()


def next_minor(version: str) -> str:
    """4.14.1 -> 4.15.0: the release a cluster's next minor update goes to."""
    major, minor = version.split(".")[:2]
    return f"{major}.{int(minor) + 1}.0"


def _to_next_minor(path: str) -> bytes:
    asked = parse_qs(urlsplit(path).query).get("version", [""])[0]
    return graph_of([asked, next_minor(asked)])


@contextmanager
def serve_graph(versions: list[str] | None = None) -> Iterator[str]:
    """The URL of a graph of `versions`, served until the caller is done; without
    versions, a graph from the asking cluster's version to its next minor."""
    fixed = graph_of(versions) if versions is not None else b""
    with serving(fixed, answer=None if versions is not None else _to_next_minor) as base:
        yield f"{base}/graph"
