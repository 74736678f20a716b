"""Raw graph input: a scraped graph JSON, or a directory of release-metadata documents.

A release image carries `release-metadata`
(`{"kind":"cincinnati-metadata-v0","version","previous","next","metadata"}`); the registry
scrape adds what only the registry knows: the digest-pinned pull spec and the
architecture. A directory input holds one JSON document per release image with those two
extra keys, `payload` (required, `repo@sha256:<hex>`) and `architecture` (optional;
defaults to metadata `release.openshift.io/architecture`, else `amd64`). Files are read
recursively in sorted order, so `4.14/4.14.3-amd64.json` layouts work.

The scrape's rules: node version `<version>+<arch>`; metadata gets
`release.manifestref` and `release.arch`; every `previous` entry P gives an edge P -> N and
every `next` entry X an edge N -> X, both with N's arch; entries never scraped become
abstract nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.graph import model as m
from kupgrade.graph.codec import decode_graph, decode_json
from kupgrade.graph.model import Graph, Node
from kupgrade.versions import SemVer, with_arch

METADATA_KIND = "cincinnati-metadata-v0"
ARCH_METADATA_KEY = "release.openshift.io/architecture"
DEFAULT_ARCH = "amd64"
_DIGEST_PULLSPEC = re.compile(r"[^@\s]+@(sha256:[0-9a-f]{64})")
_ARCH = re.compile(r"[0-9a-z]+")


def load_releases(path: Path) -> Graph:
    """Read `--releases`: a raw graph JSON file or a release-metadata directory."""
    if path.is_dir():
        return releases_from_directory(path)
    return decode_graph(intake.read_file(path, "releases file"), str(path))


def releases_from_directory(root: Path) -> Graph:
    files = sorted(p for p in root.rglob("*.json") if p.is_file())
    if not files:
        raise InputError("holds no release-metadata *.json documents", file=str(root))
    releases = [_read_release(p) for p in files]
    graph = Graph()
    origin: dict[str, Path] = {}
    for path, release in zip(files, releases, strict=True):
        version = release.node.version
        if version in origin:
            raise InputError(
                f"release {version} is also described by {origin[version]}",
                file=str(path),
                field="version",
            )
        origin[version] = path
        graph.add_node(release.node)
    for path, release in zip(files, releases, strict=True):
        _link(graph, release, path)
    cycle = graph.find_cycle()
    if cycle is not None:
        raise InputError(
            "previous/next entries form a cycle: " + " -> ".join(cycle),
            file=str(root),
            hint="an update graph must be acyclic",
        )
    return graph


@dataclass(frozen=True, slots=True)
class _Release:
    node: Node
    previous: list[SemVer]
    following: list[SemVer]


def _read_release(path: Path) -> _Release:
    where = str(path)
    doc = decode_json(intake.read_file(path, "release-metadata file"), where)
    if not isinstance(doc, dict):
        raise InputError("must be a release-metadata JSON object", file=where)
    if doc.get("kind") != METADATA_KIND:
        raise InputError(
            f"must be {METADATA_KIND!r}, got {doc.get('kind')!r}", file=where, field="kind"
        )
    version = _version(doc.get("version"), where, "version")
    if version.build:
        raise InputError(
            "must not carry build metadata (the architecture is appended as +arch)",
            file=where,
            field="version",
        )
    metadata = doc.get("metadata", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise InputError("must map keys to string values", file=where, field="metadata")
    payload = doc.get("payload")
    match = _DIGEST_PULLSPEC.fullmatch(payload) if isinstance(payload, str) else None
    if match is None:
        raise InputError(
            f"must be a pull spec pinned by digest (registry/repo@sha256:<64 hex>), got {payload!r}",
            file=where,
            field="payload",
        )
    arch = doc.get("architecture", metadata.get(ARCH_METADATA_KEY, DEFAULT_ARCH))
    if not isinstance(arch, str) or not _ARCH.fullmatch(arch):
        raise InputError(f"must match [0-9a-z]+, got {arch!r}", file=where, field="architecture")
    links = {}
    for key in ("previous", "next"):
        items = doc.get(key, [])
        if not isinstance(items, list):
            raise InputError("must be a list of versions", file=where, field=key)
        links[key] = [_version(item, where, f"{key}[{i}]") for i, item in enumerate(items)]
    node_metadata = {**metadata, m.KEY_MANIFESTREF: match.group(1), m.KEY_ARCH: arch}
    node = Node(f"{version}+{arch}", payload, node_metadata)
    return _Release(node, links["previous"], links["next"])


def _version(value: Any, where: str, field: str) -> SemVer:
    version = SemVer.try_parse(value) if isinstance(value, str) else None
    if version is None:
        raise InputError(f"must be a SemVer version, got {value!r}", file=where, field=field)
    return version


def _endpoint(graph: Graph, version: str) -> int:
    index = graph.find(version)
    return index if index is not None else graph.add_node(Node(version))


def _link(graph: Graph, release: _Release, path: Path) -> None:
    assert release.node.metadata is not None
    arch = release.node.metadata[m.KEY_ARCH]
    me = graph.find(release.node.version)
    assert me is not None
    for key, items in (("previous", release.previous), ("next", release.following)):
        for item in items:
            other = _endpoint(graph, with_arch(item, arch))
            if other == me:
                raise InputError(f"lists the release itself ({item})", file=str(path), field=key)
            if key == "previous":
                graph.add_edge_unchecked(other, me)
            else:
                graph.add_edge_unchecked(me, other)
