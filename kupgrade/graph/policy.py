"""The per-request policy (Cincinnati's policy-engine): channel filter, then arch filter.

SPEC A3: a cluster receives the graph of its channel and architecture only.

Semantics of ../shared/conformance/cincinnati/README.md §4, quirks included: a conditional
edge survives the arch filter when both versions merely *contain* the arch string, and
versions lose build identifiers equal to the arch (`4.12.0-rc.0+multi` -> `4.12.0-rc.0`).
`PolicyView` precomputes per-node channel and arch sets once per graph so that serving one
(channel, arch) costs one pass over the edges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kupgrade.graph import model as m
from kupgrade.graph.codec import canonical_order, group_conditional_edges, node_to_json
from kupgrade.graph.model import Graph, Risk
from kupgrade.versions import SemVer

CHANNEL_PATTERN = r"^[0-9a-z\-\.]+$"
ARCH_PATTERN = r"^[0-9a-z]+$"
_CHANNEL_RE = re.compile(r"[0-9a-z\-.]+")
_ARCH_RE = re.compile(r"[0-9a-z]+")
DEFAULT_ARCH = "amd64"
_DROP_ARCH = frozenset({m.KEY_ARCH})


class PolicyError(Exception):
    """An error with Cincinnati's `{kind, value}` body and HTTP status."""

    def __init__(self, status: int, kind: str, value: str, param: str | None = None) -> None:
        super().__init__(value)
        self.status = status
        self.kind = kind
        self.value = value
        self.param = param  # the query parameter at fault, if any

    def body(self) -> dict[str, str]:
        return {"kind": self.kind, "value": self.value}


def check_channel(channel: str) -> None:
    if not _CHANNEL_RE.fullmatch(channel):
        raise PolicyError(
            400,
            "invalid_params",
            f"invalid client parameters: channel '{channel}' does not match regex '{CHANNEL_PATTERN}'",
            "channel",
        )


def check_arch(arch: str) -> None:
    if not _ARCH_RE.fullmatch(arch):
        raise PolicyError(
            400,
            "invalid_params",
            f"invalid client parameters: arch '{arch}' does not match regex '{ARCH_PATTERN}'",
            "arch",
        )


def _split(value: str | None) -> frozenset[str]:
    return (
        frozenset(item.strip() for item in value.split(",")) if value is not None else frozenset()
    )


def strip_arch(version: str, arch: str) -> str:
    """Remove build identifiers equal to `arch`; non-SemVer is `arch_version_error` (500)."""
    parsed = SemVer.try_parse(version)
    if parsed is None:
        raise PolicyError(500, "arch_version_error", f"{version}: not a SemVer version")
    if arch not in parsed.build:
        return str(parsed)
    return str(parsed.with_build(*(b for b in parsed.build if b != arch)))


@dataclass(frozen=True, slots=True)
class _Conditional:
    src: str
    dst: str
    risks: tuple[Risk, ...]


class PolicyView:
    """A built graph prepared for fast channel/arch filtering."""

    def __init__(self, graph: Graph) -> None:
        order = canonical_order(graph)
        position = {old: new for new, old in enumerate(order)}
        self.nodes = [graph.nodes[i] for i in order]
        self.edges = sorted((position[a], position[b]) for a, b in graph.edges())
        self.channels: list[frozenset[str] | None] = []
        self.arches: list[frozenset[str]] = []
        for node in self.nodes:
            metadata = node.metadata if node.concrete else None
            self.channels.append(
                _split(metadata.get(m.KEY_CHANNELS))
                if metadata and m.KEY_CHANNELS in metadata
                else None
            )
            self.arches.append(_split(metadata.get(m.KEY_ARCH)) if metadata else frozenset())
        self.conditional = [
            _Conditional(a, b, risks) for (a, b), risks in graph.conditional.items()
        ]
        self.blocked_pairs = dict(graph.blocked)
        self.versions = frozenset(node.version for node in self.nodes)
        # A conditional edge naming a version that is not a node (malformed input) is the
        # only way a channel nobody uses can answer anything but the empty graph.
        self.has_orphan_conditional_edges = any(
            c.src not in self.versions or c.dst not in self.versions for c in self.conditional
        )

    def _in_channel(self, channel: str) -> list[int]:
        return [
            i for i, names in enumerate(self.channels) if names is not None and channel in names
        ]

    def blocked(self, channel: str, arch: str = DEFAULT_ARCH) -> list[dict[str, str]]:
        """The edges graph-data removed outright between versions this channel and arch
        serve (Graph.blocked): what the graph API leaves out, for the console to show on
        request, each with the metadata key that removed it and that key's value."""
        check_channel(channel)
        check_arch(arch)
        index = {
            self.nodes[i].version: i for i in self._in_channel(channel) if arch in self.arches[i]
        }
        out = []
        for (a, b), key in sorted(self.blocked_pairs.items()):
            if a in index and b in index:
                carrier = self.nodes[index[a] if key == m.KEY_NEXT_REMOVE else index[b]]
                rule = (carrier.metadata or {}).get(key, "")
                out.append(
                    {
                        "from": strip_arch(a, arch),
                        "to": strip_arch(b, arch),
                        "removedBy": key,
                        "rule": rule,
                    }
                )
        return out

    def known_channels(self) -> set[str]:
        return {name for names in self.channels if names for name in names}

    def known_arches(self) -> set[str]:
        return {arch for arches in self.arches for arch in arches}

    def filter(self, channel: str, arch: str = DEFAULT_ARCH) -> dict[str, Any]:
        """The policy-engine document `{"version": 1, nodes, edges, conditionalEdges}`."""
        check_channel(channel)
        in_channel = self._in_channel(channel)
        kept_versions = {self.nodes[i].version for i in in_channel}
        removed = self.versions - kept_versions
        conditional = [c for c in self.conditional if c.src not in removed and c.dst not in removed]
        check_arch(arch)
        kept = [i for i in in_channel if arch in self.arches[i]]
        conditional = [c for c in conditional if arch in c.src and arch in c.dst]
        position = {old: new for new, old in enumerate(kept)}
        nodes = []
        for i in kept:
            doc = node_to_json(self.nodes[i], drop_keys=_DROP_ARCH)
            doc["version"] = strip_arch(doc["version"], arch)
            nodes.append(doc)
        edges = (
            [[position[a], position[b]] for a, b in self.edges if a in position and b in position]
            if kept
            else []
        )
        return {
            "version": 1,
            "nodes": nodes,
            "edges": edges,
            "conditionalEdges": group_conditional_edges(
                (((c.src, c.dst), c.risks) for c in conditional),
                rename=lambda v: strip_arch(v, arch),
            ),
        }
