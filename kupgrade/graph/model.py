"""The update graph (SPEC A3, C2) as Cincinnati models it.

Nodes are releases identified by their exact version string (with `+arch` inside the graph
builder); a *concrete* node carries a payload pull spec and string metadata, an *abstract*
node only a version (a `previous` entry that was never scraped). Edges are update paths;
conditional edges carry risks and are kept apart from the plain edges.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from kupgrade.errors import BuildError

PREFIX = "io.openshift.upgrades.graph."
KEY_ARCH = PREFIX + "release.arch"
KEY_CHANNELS = PREFIX + "release.channels"
KEY_MANIFESTREF = PREFIX + "release.manifestref"
KEY_PREVIOUS_ADD = PREFIX + "previous.add"
KEY_NEXT_ADD = PREFIX + "next.add"
KEY_PREVIOUS_REMOVE = PREFIX + "previous.remove"
KEY_PREVIOUS_REMOVE_REGEX = PREFIX + "previous.remove_regex"
KEY_NEXT_REMOVE = PREFIX + "next.remove"


@dataclass(slots=True)
class Node:
    version: str
    payload: str | None = None
    metadata: dict[str, str] | None = None

    @property
    def concrete(self) -> bool:
        return self.payload is not None and self.metadata is not None


@dataclass(frozen=True, slots=True)
class MatchingRule:
    """One entry of a risk's `matchingRules` (`{type, promql: {promql}}`)."""

    type: str
    promql: str = ""

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"type": self.type}
        if self.promql:
            out["promql"] = {"promql": self.promql}
        return out


@dataclass(frozen=True, slots=True)
class Risk:
    url: str
    name: str
    message: str
    matching_rules: tuple[MatchingRule, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "url": self.url,
            "name": self.name,
            "message": self.message,
            "matchingRules": [rule.to_json() for rule in self.matching_rules],
        }


Edge = tuple[str, str]


@dataclass(slots=True)
class Graph:
    """A mutable DAG with O(1) edge lookups in both directions.

    `conditional` maps a (from, to) version pair to the risks on that edge, in the order
    they were recorded; one pair has one entry, as in Cincinnati's output. `blocked` maps
    the pairs graph-data removed outright (not conditional ones) to the metadata key that
    removed them: Cincinnati does not serve them, the console shows them on request.
    """

    nodes: list[Node] = field(default_factory=list)
    conditional: dict[Edge, tuple[Risk, ...]] = field(default_factory=dict)
    blocked: dict[Edge, str] = field(default_factory=dict)
    _index: dict[str, int] = field(default_factory=dict)
    _parents: list[set[int]] = field(default_factory=list)
    _children: list[set[int]] = field(default_factory=list)

    # --- nodes ---------------------------------------------------------------------------

    def add_node(self, node: Node) -> int:
        if not node.version:
            raise BuildError("a node has an empty version")
        if node.version in self._index:
            raise BuildError(f"version {node.version!r} appears twice")
        self._index[node.version] = len(self.nodes)
        self.nodes.append(node)
        self._parents.append(set())
        self._children.append(set())
        return len(self.nodes) - 1

    def find(self, version: str) -> int | None:
        """The node whose version is exactly `version` (build included)."""
        return self._index.get(version)

    def __len__(self) -> int:
        return len(self.nodes)

    # --- edges ---------------------------------------------------------------------------

    def parents(self, index: int) -> set[int]:
        return self._parents[index]

    def children(self, index: int) -> set[int]:
        return self._children[index]

    def add_edge(self, src: int, dst: int) -> bool:
        """Add src -> dst; False if it exists. Raises BuildError if it would close a cycle."""
        if dst in self._children[src]:
            return False
        if src == dst or self.reaches(dst, src):
            raise BuildError(
                f"adding the edge {self.nodes[src].version} -> {self.nodes[dst].version} "
                "would create a cycle"
            )
        self._children[src].add(dst)
        self._parents[dst].add(src)
        return True

    def add_edge_unchecked(self, src: int, dst: int) -> None:
        """Add an edge without the cycle check; call `find_cycle` once afterwards."""
        self._children[src].add(dst)
        self._parents[dst].add(src)

    def remove_edge(self, src: int, dst: int) -> bool:
        if dst not in self._children[src]:
            return False
        self._children[src].discard(dst)
        self._parents[dst].discard(src)
        return True

    def edges(self) -> Iterator[tuple[int, int]]:
        for src, children in enumerate(self._children):
            for dst in children:
                yield (src, dst)

    @property
    def edge_count(self) -> int:
        return sum(len(children) for children in self._children)

    def reaches(self, src: int, dst: int) -> bool:
        """Whether dst is reachable from src (iterative DFS)."""
        if src == dst:
            return True
        seen = {src}
        stack = [src]
        while stack:
            for child in self._children[stack.pop()]:
                if child == dst:
                    return True
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        return False

    def find_cycle(self) -> list[str] | None:
        """One cycle as a list of versions (first == last), or None for a DAG."""
        white, grey, black = 0, 1, 2
        colour = [white] * len(self.nodes)
        for root in range(len(self.nodes)):
            if colour[root] != white:
                continue
            path: list[int] = [root]
            iters = [iter(sorted(self._children[root]))]
            colour[root] = grey
            while iters:
                child = next(iters[-1], None)
                if child is None:
                    colour[path.pop()] = black
                    iters.pop()
                    continue
                if colour[child] == grey:
                    start = path.index(child)
                    return [self.nodes[i].version for i in [*path[start:], child]]
                if colour[child] == white:
                    colour[child] = grey
                    path.append(child)
                    iters.append(iter(sorted(self._children[child])))
        return None

    def copy(self) -> Graph:
        clone = Graph()
        for node in self.nodes:
            metadata = dict(node.metadata) if node.metadata is not None else None
            clone.add_node(Node(node.version, node.payload, metadata))
        for src, children in enumerate(self._children):
            for dst in children:
                clone.add_edge_unchecked(src, dst)
        clone.conditional = dict(self.conditional)
        clone.blocked = dict(self.blocked)
        return clone
