"""What a graph document holds, in numbers (for `graph build`, `graph filter -o text`, the demo)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from kupgrade.graph import model as m


@dataclass(slots=True)
class RiskSummary:
    name: str
    edges: int
    url: str
    rules: list[str]


@dataclass(slots=True)
class GraphSummary:
    nodes: int
    abstract_nodes: int
    edges: int
    conditional_edges: int
    channels: list[str]
    arches: list[str]
    risks: list[RiskSummary] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarize(doc: dict[str, Any]) -> GraphSummary:
    """Count a Cincinnati graph document (graph-builder or policy-engine output)."""
    nodes = doc.get("nodes", [])
    channels: set[str] = set()
    arches: set[str] = set()
    for node in nodes:
        metadata = node.get("metadata") or {}
        channels.update(c.strip() for c in metadata.get(m.KEY_CHANNELS, "").split(",") if c.strip())
        arches.update(a.strip() for a in metadata.get(m.KEY_ARCH, "").split(",") if a.strip())
    pairs: set[tuple[str, str]] = set()
    risk_edges: Counter[str] = Counter()
    risk_info: dict[str, tuple[str, list[str]]] = {}
    for entry in doc.get("conditionalEdges") or []:
        edges = {(e["from"], e["to"]) for e in entry.get("edges", [])}
        pairs |= edges
        for risk in entry.get("risks", []):
            risk_edges[risk["name"]] += len(edges)
            risk_info.setdefault(
                risk["name"],
                (risk.get("url", ""), [r.get("type", "") for r in risk.get("matchingRules", [])]),
            )
    return GraphSummary(
        nodes=len(nodes),
        abstract_nodes=sum(1 for n in nodes if "payload" not in n),
        edges=len(doc.get("edges", [])),
        conditional_edges=len(pairs),
        channels=sorted(channels),
        arches=sorted(arches),
        risks=[
            RiskSummary(name, risk_edges[name], *risk_info[name]) for name in sorted(risk_edges)
        ],
    )
