"""The graph-builder steps (SPEC A3, C2): exactly Cincinnati's semantics, quirks included.

Input: a raw graph as the registry scrape produces it (versions carrying `+arch`, abstract
nodes for unscraped `previous` entries) and a parsed graph-data tree. The steps follow
../shared/conformance/cincinnati/README.md §3 in order; each function below is one step.
Quirks kept on purpose (README §7): unanchored regex search over `version+arch`;
unconditional blocks overwrite `previous.remove_regex` while conditional ones append
`|from`; a conditional block also removes the plain edge; conditional edges are computed
from the parents *before* removals, abstract parents included; `*` / `.*` remove every
incoming edge; add/remove items take the arch of the node that carries the key; channel
lists sort "4.10" before "4.9"; processed metadata keys stay in the output.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from kupgrade.collector import paused
from kupgrade.errors import BuildError
from kupgrade.graph import model as m
from kupgrade.graph.graphdata import BlockedEdge, Channel, ConditionalBlock, GraphData
from kupgrade.graph.model import Graph, Risk
from kupgrade.graph.regex import RegexError, SafeRegex, compile_regex
from kupgrade.versions import Precedence, SemVer, split_arch, with_arch

MATCH_ALL = ".*"
REMOVE_ALL = "*"


@dataclass(frozen=True, slots=True)
class RecordedRisk:
    """A conditional edge declaration waiting for step 8.3: (`from` regex, `to` text, risk)."""

    from_regex: SafeRegex
    to: str
    risk: Risk


@paused()  # every node and edge of the graph: see kupgrade.collector
def build_graph(raw: Graph, data: GraphData) -> Graph:
    """Apply graph-data to a raw graph; the input graph is not modified."""
    graph = raw.copy()
    by_release = _index_by_precedence(graph)
    apply_raw_metadata(graph, data.raw_metadata, by_release)  # step 2
    arches = architectures(graph)  # step 4
    apply_blocked_edges(graph, data.blocked, arches)  # step 5
    recorded = record_conditional_edges(graph, data.conditional, arches)  # step 6
    apply_channels(graph, data.channels, by_release)  # step 7
    add_edges(graph)  # step 8.1, 8.2
    graph.conditional = conditional_edges(graph, recorded)  # step 8.3
    remove_edges(graph)  # step 8.4 - 8.6
    return graph


def _index_by_precedence(graph: Graph) -> dict[Precedence, list[int]]:
    """Concrete nodes grouped by their version without build (Cincinnati's equality)."""
    index: dict[Precedence, list[int]] = defaultdict(list)
    for i, node in enumerate(graph.nodes):
        version = SemVer.try_parse(node.version)
        if version is not None and node.concrete:
            index[version.precedence].append(i)
    return index


def _append(metadata: dict[str, str], key: str, value: str, sep: str = ",") -> None:
    metadata[key] = metadata[key] + sep + value if key in metadata else value


def apply_raw_metadata(
    graph: Graph, raw_metadata: dict[str, dict[str, str]], by_release: dict[Precedence, list[int]]
) -> None:
    """Step 2: raw/metadata.json entries apply to every arch of the version (build ignored)."""
    for version_text, entries in raw_metadata.items():
        version = SemVer.try_parse(version_text)
        if version is None:
            continue  # Cincinnati logs the parse failure and matches nothing
        for i in by_release.get(version.precedence, ()):
            metadata = graph.nodes[i].metadata
            assert metadata is not None
            for key, value in entries.items():
                _append(metadata, key, value)


def architectures(graph: Graph) -> list[tuple[str, ...]]:
    """Step 4: the build identifiers of every SemVer node version (abstract nodes included)."""
    found = set()
    for node in graph.nodes:
        version = SemVer.try_parse(node.version)
        if version is not None:
            found.add(version.build)
    return sorted(found)


def _concrete(graph: Graph, version: str) -> int | None:
    index = graph.find(version)
    if index is None or not graph.nodes[index].concrete:
        return None
    return index


def blocked_targets(to: SemVer, arches: list[tuple[str, ...]]) -> list[str]:
    """Step 5: an explicit build, the legacy `-s390x` pre-release, or every architecture."""
    if to.build:
        return [str(to)]
    if to.pre == ("s390x",):
        return [str(to.with_build("s390x"))]
    return [str(to.with_build(*arch)) for arch in arches]


def apply_blocked_edges(
    graph: Graph, blocked: list[BlockedEdge], arches: list[tuple[str, ...]]
) -> None:
    """Step 5: unconditional blocks *set* previous.remove_regex (a later file overwrites)."""
    for block in blocked:
        for target in blocked_targets(block.to, arches):
            index = _concrete(graph, target)
            if index is not None:
                metadata = graph.nodes[index].metadata
                assert metadata is not None
                metadata[m.KEY_PREVIOUS_REMOVE_REGEX] = block.from_regex.pattern


def record_conditional_edges(
    graph: Graph, conditional: list[ConditionalBlock], arches: list[tuple[str, ...]]
) -> list[RecordedRisk]:
    """Step 6: record each risk and *append* `|from` to remove_regex of every arch's target."""
    recorded = []
    for block in conditional:
        recorded.append(RecordedRisk(block.from_regex, str(block.to), block.risk))
        for arch in arches:
            index = _concrete(graph, str(block.to.with_build(*arch)))
            if index is not None:
                metadata = graph.nodes[index].metadata
                assert metadata is not None
                _append(metadata, m.KEY_PREVIOUS_REMOVE_REGEX, block.from_regex.pattern, "|")
    return recorded


def _channel_sort_key(name: str) -> str:
    return name.split("-", 1)[1] if "-" in name else ""


def sort_channels(value: str) -> str:
    """Sorted plainly, then stably by the text after the first '-' ("4.10" < "4.9")."""
    names = sorted(value.split(","))
    names.sort(key=_channel_sort_key)
    return ",".join(names)


def apply_channels(
    graph: Graph, channels: list[Channel], by_release: dict[Precedence, list[int]]
) -> None:
    """Step 7: members get the channel appended; a listed build selects only that arch."""
    for channel in channels:
        members: set[int] = set()
        for listed in channel.versions:
            for i in by_release.get(listed.precedence, ()):
                if not listed.build or SemVer.parse(graph.nodes[i].version).build == listed.build:
                    members.add(i)
        for i in sorted(members):
            metadata = graph.nodes[i].metadata
            assert metadata is not None
            _append(metadata, m.KEY_CHANNELS, channel.name)
    for node in graph.nodes:
        if node.metadata is not None and m.KEY_CHANNELS in node.metadata:
            node.metadata[m.KEY_CHANNELS] = sort_channels(node.metadata[m.KEY_CHANNELS])


def _annotate(graph: Graph, item: str, carrier: int, key: str) -> str:
    """Give a comma-list item the arch of the node carrying the key (Cincinnati's annotate)."""
    metadata = graph.nodes[carrier].metadata
    arch = metadata.get(m.KEY_ARCH) if metadata else None
    if arch is None:
        return item
    version = SemVer.try_parse(item)
    if version is None:
        raise BuildError(
            f"{item!r} is not a SemVer version",
            file=graph.nodes[carrier].version,
            field=key,
            hint="every item of an add/remove list must be a version",
        )
    return with_arch(version, arch)


def _nodes_with(graph: Graph, key: str) -> list[tuple[int, str]]:
    return [
        (i, node.metadata[key])
        for i, node in enumerate(graph.nodes)
        if node.metadata is not None and key in node.metadata
    ]


def _for_each_item(
    graph: Graph, key: str, action: Callable[[int, int], object], *, reverse: bool = False
) -> None:
    for carrier, value in _nodes_with(graph, key):
        for raw_item in value.split(","):
            other = graph.find(_annotate(graph, raw_item.strip(), carrier, key))
            if other is not None:
                action(carrier, other) if reverse else action(other, carrier)


def add_edges(graph: Graph) -> None:
    """Steps 8.1-8.2: previous.add then next.add; missing versions and existing edges ignored."""
    _for_each_item(graph, m.KEY_PREVIOUS_ADD, graph.add_edge)
    _for_each_item(graph, m.KEY_NEXT_ADD, graph.add_edge, reverse=True)


def conditional_edges(graph: Graph, recorded: list[RecordedRisk]) -> dict[m.Edge, tuple[Risk, ...]]:
    """Step 8.3: risks on every (parent, target) edge, computed before any removal."""
    by_base: dict[str, list[int]] = defaultdict(list)
    for i, node in enumerate(graph.nodes):
        by_base[split_arch(node.version)[0]].append(i)
        if "+" in node.version:
            by_base[node.version].append(i)
    risks: dict[m.Edge, list[Risk]] = {}
    for entry in recorded:
        for target in by_base.get(entry.to, ()):
            to_version = graph.nodes[target].version
            for parent in sorted(graph.parents(target)):
                from_version = graph.nodes[parent].version
                if entry.from_regex.pattern == MATCH_ALL or entry.from_regex.search(from_version):
                    risks.setdefault((from_version, to_version), []).append(entry.risk)
    return {pair: tuple(found) for pair, found in risks.items()}


def _remove_listed(graph: Graph, key: str, *, next_edges: bool) -> None:
    for carrier, value in _nodes_with(graph, key):
        if not next_edges and value.strip() == REMOVE_ALL:
            for parent in list(graph.parents(carrier)):
                graph.remove_edge(parent, carrier)
            continue
        for raw_item in value.split(","):
            other = graph.find(_annotate(graph, raw_item.strip(), carrier, key))
            if other is not None:
                if next_edges:
                    graph.remove_edge(carrier, other)
                else:
                    graph.remove_edge(other, carrier)


def _remove_by_regex(graph: Graph) -> None:
    for carrier, pattern in _nodes_with(graph, m.KEY_PREVIOUS_REMOVE_REGEX):
        parents = list(graph.parents(carrier))
        if pattern == MATCH_ALL:
            for parent in parents:
                graph.remove_edge(parent, carrier)
            continue
        try:
            regex = compile_regex(pattern)
        except RegexError as exc:
            raise BuildError(
                f"previous.remove_regex {pattern!r} {exc.reason}", file=graph.nodes[carrier].version
            ) from None
        for parent in parents:
            if regex.search(graph.nodes[parent].version):
                graph.remove_edge(parent, carrier)


def remove_edges(graph: Graph) -> None:
    """Steps 8.4-8.6: previous.remove, previous.remove_regex, next.remove (remove beats add).

    Each edge a step removes that carries no risk is kept in `graph.blocked` with the key
    that removed it (an edge with risks is served as a conditional edge instead)."""
    for key in (m.KEY_PREVIOUS_REMOVE, m.KEY_PREVIOUS_REMOVE_REGEX, m.KEY_NEXT_REMOVE):
        carriers = [i for i, _ in _nodes_with(graph, key)]
        outgoing = key == m.KEY_NEXT_REMOVE  # next.remove cuts its carrier's own edges
        before = _edges_at(graph, carriers, outgoing)
        if key == m.KEY_PREVIOUS_REMOVE_REGEX:
            _remove_by_regex(graph)
        else:
            _remove_listed(graph, key, next_edges=outgoing)
        for a, b in before - _edges_at(graph, carriers, outgoing):
            pair = (graph.nodes[a].version, graph.nodes[b].version)
            if pair not in graph.conditional:
                graph.blocked[pair] = key


def _edges_at(graph: Graph, carriers: list[int], outgoing: bool) -> set[tuple[int, int]]:
    """The edges a removal step can touch: into its carriers, or out of them."""
    if outgoing:
        return {(c, child) for c in carriers for child in graph.children(c)}
    return {(parent, c) for c in carriers for parent in graph.parents(c)}
