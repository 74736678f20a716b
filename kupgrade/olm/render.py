"""Drawing channel graphs: `opm alpha render-graph`'s mermaid text byte for byte, and
Graphviz dot with the same edges.

The mermaid writer works on the raw blobs as opm's does (no validation first): channels
in name order (stable for ties), entries by descending version, per entry its skip edges,
skipRange edges (to every entry of the channel in range, in declared order), then its
replace edge. With v0 semantics (OLM v0 never installs a skipped bundle) skipped entries
and the edges into them are marked.
"""

from __future__ import annotations

import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kupgrade.errors import KupgradeError, VersionError
from kupgrade.olm.catalog import (
    SCHEMA_BUNDLE,
    SCHEMA_CHANNEL,
    SCHEMA_PACKAGE,
    Catalog,
    ChannelBlob,
    Entry,
)
from kupgrade.olm.validate import ConvertError, package_properties
from kupgrade.versions import SemVer, SemverRange, go_quote, parse_blang, parse_range

_ZERO = SemVer(0, 0, 0)


class RenderError(KupgradeError):
    """The graph cannot be drawn (opm's message)."""


@dataclass
class RenderOptions:
    package: str = ""
    minimum_edge: str = ""
    draw_v0_semantics: bool = False


@dataclass
class Edge:
    source: str
    target: str
    kind: str  # skip | skipRange | replace
    label: str
    red: bool = False


@dataclass
class DrawnChannel:
    package: str
    name: str
    nodes: list[str]
    edges: list[tuple[str, Edge]] = field(default_factory=list)  # (after-node, edge)
    skipped: set[str] = field(default_factory=set)  # v0 semantics: skipped by a newer entry
    skipped_when_drawn: set[str] = field(default_factory=set)


def bundle_versions(catalog: Catalog) -> dict[str, SemVer]:
    """Each bundle name's version, the first blob of a name winning (opm's getBundleVersions)."""
    versions: dict[str, SemVer] = {}
    for blob in catalog.bundles:
        if blob.name in versions:
            continue
        try:
            props = package_properties(blob)
        except ConvertError as exc:
            raise RenderError(exc.message) from None
        if len(props) != 1:
            raise RenderError(
                f"bundle {go_quote(blob.name)} has multiple {go_quote(SCHEMA_PACKAGE)} properties, expected exactly 1"
            )
        try:
            versions[blob.name] = parse_blang(props[0].version)
        except VersionError as exc:
            raise RenderError(
                f"bundle {go_quote(blob.name)} has invalid version {go_quote(props[0].version)}: {exc.message}"
            ) from None
    return versions


def _try_range(text: str) -> SemverRange | None:
    try:
        return parse_range(text)
    except VersionError:
        return None


def _filter_channel(
    channel: ChannelBlob,
    versions: dict[str, SemVer],
    options: RenderOptions,
    floor: SemVer,
    floor_package: str,
) -> list[Entry] | None:
    """opm's filterChannel: keep what is at or above the minimum edge."""
    if not options.minimum_edge and not options.package:
        return channel.entries
    if options.package and channel.package != options.package:
        return None
    if floor_package and channel.package != floor_package:
        return None
    kept: list[Entry] = []
    for entry in channel.entries:
        bare = not (entry.replaces or entry.skips or entry.skipRange)
        if not options.minimum_edge:
            kept.append(entry)
            continue
        if entry.name == options.minimum_edge:
            kept.append(Entry(name=entry.name))
            continue
        replaces = (
            entry.replaces
            if entry.replaces and versions.get(entry.replaces, _ZERO) >= floor
            else ""
        )
        skips = tuple(s for s in entry.skips if versions.get(s, _ZERO) >= floor)
        parsed = _try_range(entry.skipRange) if entry.skipRange else None
        skip_range = entry.skipRange if parsed is not None and floor in parsed else ""
        if replaces or skips or skip_range:
            kept.append(Entry(entry.name, replaces, skips, skip_range))
        elif bare and versions.get(entry.name, _ZERO) >= floor:
            kept.append(Entry(name=entry.name))
    return kept or None


def draw(
    catalog: Catalog, options: RenderOptions, warn: Callable[[str], None] | None = None
) -> list[DrawnChannel]:
    """The channels and edges render-graph draws, in its order."""
    say: Callable[[str], object] = warn or (lambda text: sys.stderr.write(text + "\n"))
    versions = bundle_versions(catalog)
    floor = _ZERO
    if options.minimum_edge:
        if options.minimum_edge not in versions:
            raise RenderError(f"unknown minimum edge name: {go_quote(options.minimum_edge)}")
        floor = versions[options.minimum_edge]
    floor_package = (
        next(
            (
                c.package
                for c in catalog.channels
                for e in c.entries
                if e.name == options.minimum_edge
            ),
            "",
        )
        if options.minimum_edge
        else ""
    )
    drawn: list[DrawnChannel] = []
    for channel in sorted(catalog.channels, key=lambda c: c.name):
        entries = _filter_channel(channel, versions, options, floor, floor_package)
        if entries is None:
            continue
        drawn.append(_draw_channel(channel, entries, versions, options.draw_v0_semantics, say))
    return drawn


def _draw_channel(
    channel: ChannelBlob,
    entries: list[Entry],
    versions: dict[str, SemVer],
    v0: bool,
    warn: Callable[[str], object],
) -> DrawnChannel:
    ordered = sorted(entries, key=lambda e: versions.get(e.name, _ZERO).precedence, reverse=True)
    out = DrawnChannel(channel.package, channel.name, [e.name for e in ordered])
    by_version: _ByVersion | None = None  # made at the first skipRange
    for entry in ordered:
        if entry.name in out.skipped:
            out.skipped_when_drawn.add(entry.name)
        for skip in entry.skips:
            out.edges.append(
                (entry.name, Edge(skip, entry.name, "skip", "skip", v0 and skip in out.skipped))
            )
            if v0:
                out.skipped.add(skip)
        if entry.skipRange:
            try:
                parsed = parse_range(entry.skipRange)
            except VersionError as exc:
                where = f"{go_quote(channel.package)}/{go_quote(entry.name)}"
                warn(f"warning: ignoring invalid SkipRange for package/edge {where}: {exc.message}")
            else:
                if by_version is None:
                    by_version = _ByVersion(entries, versions)
                label = f'"skipRange({entry.skipRange})"'
                red = v0 and entry.name in out.skipped
                for position in by_version.within(parsed):
                    edge = Edge(entries[position].name, entry.name, "skipRange", label, red)
                    out.edges.append((entry.name, edge))
        if entry.replaces:
            edge = Edge(
                entry.replaces, entry.name, "replace", "replace", v0 and entry.name in out.skipped
            )
            out.edges.append((entry.name, edge))
    return out


class _ByVersion:
    """A channel's entries sorted by version, to find the entries a skipRange holds.

    opm's writer (alpha/declcfg/write.go, WriteMermaidChart) tests every entry of the
    channel against every skipRange: channel size times skipRanges, minutes for a channel
    of 50,000 bundles. A blang range is an OR of ANDs of comparators on one total order
    (precedence), so each AND's `<`, `<=`, `>`, `>=` and `=` bound a slice of the sorted
    entries found by bisection; only that slice is then tested against the whole range
    (which applies `!=` and anything else exactly as before), and the survivors go back to
    channel order, the order opm draws them in.
    """

    def __init__(self, entries: Sequence[Entry], versions: dict[str, SemVer]) -> None:
        self.versions = [versions.get(e.name, _ZERO) for e in entries]
        keys = [v.precedence for v in self.versions]
        self.order = sorted(range(len(entries)), key=keys.__getitem__)
        self.keys = [keys[i] for i in self.order]

    def within(self, parsed: SemverRange) -> list[int]:
        """The positions, in channel order, of the entries whose version `parsed` holds."""
        found: set[int] = set()
        for conjunction in parsed.alternatives:
            low, high = 0, len(self.keys)
            for op, bound in conjunction:
                key = bound.precedence
                if op in (">", ">=", "", "=", "=="):
                    low = max(low, (bisect_right if op == ">" else bisect_left)(self.keys, key))
                if op in ("<", "<=", "", "=", "=="):
                    high = min(high, (bisect_left if op == "<" else bisect_right)(self.keys, key))
            found.update(i for i in self.order[low:high] if self.versions[i] in parsed)
        return sorted(found)


def _deprecations(catalog: Catalog) -> tuple[set[str], set[str], set[str]]:
    packages: set[str] = set()
    channels: set[str] = set()
    bundles: set[str] = set()
    for blob in catalog.deprecations:
        for entry in blob.entries:
            if entry.reference.schema == SCHEMA_PACKAGE:
                packages.add(blob.package)
            elif entry.reference.schema == SCHEMA_CHANNEL:
                channels.add(entry.reference.name)
            elif entry.reference.schema == SCHEMA_BUNDLE:
                bundles.add(entry.reference.name)
    return packages, channels, bundles


def render_mermaid(
    catalog: Catalog, options: RenderOptions, warn: Callable[[str], None] | None = None
) -> str:
    """`opm alpha render-graph` output for `catalog`."""
    drawn = draw(catalog, options, warn)
    dep_packages, dep_channels, dep_bundles = _deprecations(catalog)
    bodies: dict[str, list[str]] = {}
    classes: dict[str, list[str]] = {"deprecated": [], "deprecatedskipped": [], "skipped": []}
    deprecated_package = ""
    deprecated_channels: list[str] = []
    red_links: list[str] = []
    link = 0
    for channel in drawn:
        lines = bodies.setdefault(channel.package, [])
        channel_id = f"{channel.package}-{channel.name}"
        lines.append(f"    %% channel {go_quote(channel.name)}")
        lines.append(f"    subgraph {channel_id}[{go_quote(channel.name)}]")
        if channel.package in dep_packages:
            deprecated_package = channel.package
        if channel.name in dep_channels:
            deprecated_channels.append(channel_id)
        edges = iter(channel.edges)
        pending = next(edges, None)
        for name in channel.nodes:
            node_id = f"{channel_id}-{name}"
            lines.append(f"      {node_id}[{go_quote(name)}]")
            if name in dep_bundles and name in channel.skipped_when_drawn:
                classes["deprecatedskipped"].append(node_id)
            elif name in dep_bundles:
                classes["deprecated"].append(node_id)
            elif name in channel.skipped_when_drawn:
                classes["skipped"].append(node_id)
            while pending is not None and pending[0] == name:
                edge = pending[1]
                source_id, target_id = f"{channel_id}-{edge.source}", f"{channel_id}-{edge.target}"
                lines.append(
                    f"      {source_id}[{go_quote(edge.source)}]-- {edge.label} --> {target_id}[{go_quote(edge.target)}]"
                )
                if edge.red:
                    red_links.append(str(link))
                link += 1
                pending = next(edges, None)
        lines.append("    end")
    out = [
        "graph LR",
        "  classDef deprecated fill:#E8960F",
        "  classDef skipped stroke:#FF0000,stroke-width:4px",
        "  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px",
    ]
    for package in sorted(bodies):
        out.append(f"  %% package {go_quote(package)}")
        out.append(f"  subgraph {go_quote(package)}")
        out.extend(bodies[package])
        out.append("  end")
    if deprecated_package:
        out.append(f"style {deprecated_package} fill:#989695")
    out.extend(f"style {channel_id} fill:#DCD0FF" for channel_id in deprecated_channels)
    for kind in sorted(classes):
        if classes[kind]:
            out.append(f"class {','.join(sorted(classes[kind]))} {kind}")
    if red_links:
        out.append(
            f"linkStyle {','.join(red_links)} stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;"
        )
    return "\n".join(out) + "\n"


def render_dot(
    catalog: Catalog, options: RenderOptions, warn: Callable[[str], None] | None = None
) -> str:
    """The same graph as Graphviz dot: one cluster per package and channel."""
    drawn = draw(catalog, options, warn)
    _, _, dep_bundles = _deprecations(catalog)
    styles = {
        "skip": 'style=dashed, label="skip"',
        "skipRange": "style=dotted",
        "replace": 'label="replace"',
    }
    out = ["digraph catalog {", "  rankdir=LR;", "  node [shape=box];"]
    by_package: dict[str, list[DrawnChannel]] = {}
    for channel in drawn:
        by_package.setdefault(channel.package, []).append(channel)
    for package in sorted(by_package):
        out.append(f"  subgraph {_dot_id('cluster_' + package)} {{")
        out.append(f"    label={_dot_id(package)};")
        for channel in by_package[package]:
            prefix = f"{package}-{channel.name}-"
            out.append(f"    subgraph {_dot_id('cluster_' + prefix)} {{")
            out.append(f"      label={_dot_id(channel.name)};")
            for name in channel.nodes:
                attrs = [f"label={_dot_id(name)}"]
                if name in dep_bundles:
                    attrs.append('style=filled, fillcolor="#E8960F"')
                if name in channel.skipped:
                    attrs.append('color="#FF0000"')
                out.append(f"      {_dot_id(prefix + name)} [{', '.join(attrs)}];")
            for _, edge in channel.edges:
                style = styles[edge.kind]
                if edge.kind == "skipRange":
                    style += f", label={_dot_id(edge.label.strip(chr(34)))}"
                if edge.red:
                    style += ', color="#FF0000"'
                out.append(
                    f"      {_dot_id(prefix + edge.source)} -> {_dot_id(prefix + edge.target)} [{style}];"
                )
            out.append("    }")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def channel_doc(channel: DrawnChannel) -> dict[str, Any]:
    """One drawn channel as data (`render-graph -o json`): its bundles in drawing order,
    its edges with their kind (replace, skip, skipRange; with v0 semantics, whether an
    edge leads into a skipped bundle) and the bundles skipped."""
    return {
        "package": channel.package,
        "channel": channel.name,
        "bundles": list(channel.nodes),
        "edges": [
            {
                "from": e.source,
                "to": e.target,
                "kind": e.kind,
                "label": e.label.strip('"'),
                "intoSkipped": e.red,
            }
            for _, e in channel.edges
        ],
        "skipped": sorted(channel.skipped),
    }
