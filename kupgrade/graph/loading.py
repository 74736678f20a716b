"""Reading the builder's inputs from disk: the one place `graph build` and `serve` share.

`fingerprint` is a cheap stat-based identity of the inputs (paths, sizes, mtimes) so the
service can re-check every few seconds without re-reading thousands of files.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from kupgrade.graph.builder import build_graph
from kupgrade.graph.graphdata import GraphData, load_graph_data
from kupgrade.graph.model import Graph
from kupgrade.graph.releases import load_releases
from kupgrade.graph.tree import Tree, open_tree


@dataclass(frozen=True, slots=True)
class Built:
    raw: Graph
    tree: Tree
    data: GraphData
    graph: Graph


def build_from_paths(releases: Path, graph_data: Path) -> Built:
    """Read both inputs and build; raises KupgradeError subclasses on bad input."""
    raw = load_releases(releases)
    tree = open_tree(graph_data)
    data = load_graph_data(tree)
    return Built(raw, tree, data, build_graph(raw, data))


def fingerprint(*paths: Path) -> str:
    """A digest of every file's path, size and mtime under the given paths."""
    h = hashlib.sha256()
    for root in paths:
        for path in sorted(_walk(root)):
            try:
                st = path.stat()
            except OSError:
                h.update(f"{path}\0missing\n".encode())
                continue
            h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _walk(root: Path) -> list[Path]:
    if not root.is_dir():
        return [root]
    found = [root]
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        found.extend(Path(dirpath, name) for name in filenames)
        found.extend(Path(dirpath, name) for name in dirnames)
    return found
