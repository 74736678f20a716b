"""Cincinnati graph JSON: strict reading with errors that name the field, canonical writing.

Cincinnati's own output order is random (hash maps, concurrent fetches); ours is canonical
so that the same input always gives the same bytes: nodes by SemVer precedence (then build
text), edges as sorted index pairs, conditional edges grouped by identical risk lists with
their edges sorted, metadata keys sorted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.graph.model import Edge, Graph, MatchingRule, Node, Risk
from kupgrade.versions import version_sort_key

_json_encoder = msgspec.json.Encoder()


def decode_json(data: bytes, source: str) -> Any:
    """One JSON value read within the intake limits (UTF-8, nesting)."""
    return intake.decode_json(data, source)


def _is_str_map(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _is_index(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def decode_graph(data: bytes, source: str) -> Graph:
    """Read a raw, graph-builder or policy-engine graph document."""
    return graph_from_doc(decode_json(data, source), source)


def graph_from_doc(doc: Any, source: str) -> Graph:
    """Validate a decoded graph document; errors name `source` and the field."""
    if not isinstance(doc, dict):
        raise InputError("a graph must be a JSON object with 'nodes' and 'edges'", file=source)
    graph = Graph()
    _decode_nodes(graph, doc.get("nodes"), source)
    _decode_edges(graph, doc.get("edges"), source)
    graph.conditional = decode_conditional_edges(doc.get("conditionalEdges"), source)
    cycle = graph.find_cycle()
    if cycle is not None:
        raise InputError(
            "the edges contain a cycle: " + " -> ".join(cycle),
            file=source,
            field="edges",
            hint="an update graph must be acyclic; remove one of these edges",
        )
    return graph


def _decode_nodes(graph: Graph, nodes: object, source: str) -> None:
    if not isinstance(nodes, list):
        raise InputError("must be a list of nodes", file=source, field="nodes")
    for i, raw in enumerate(nodes):
        where = f"nodes[{i}]"
        if not isinstance(raw, dict):
            raise InputError("a node must be an object with 'version'", file=source, field=where)
        version = raw.get("version")
        if not isinstance(version, str) or not version:
            raise InputError("must be a non-empty string", file=source, field=f"{where}.version")
        payload, metadata = raw.get("payload"), raw.get("metadata")
        # A node is concrete only with a string payload and string metadata (README §2);
        # anything else is read as an abstract node, as Cincinnati's untagged enum does.
        if isinstance(payload, str) and _is_str_map(metadata):
            assert isinstance(metadata, dict)
            node = Node(version, payload, dict(metadata))
        else:
            node = Node(version)
        existing = graph.find(version)
        if existing is not None:
            raise InputError(
                f"version {version!r} appears twice (also nodes[{existing}])",
                file=source,
                field=f"{where}.version",
            )
        graph.add_node(node)


def _decode_edges(graph: Graph, edges: object, source: str) -> None:
    if not isinstance(edges, list):
        raise InputError("must be a list of [from, to] index pairs", file=source, field="edges")
    count = len(graph)
    for i, pair in enumerate(edges):
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not _is_index(pair[0])
            or not _is_index(pair[1])
        ):
            raise InputError(
                f"must be a [from, to] pair of node indexes, got {pair!r}",
                file=source,
                field=f"edges[{i}]",
            )
        src, dst = pair
        if not (0 <= src < count and 0 <= dst < count):
            raise InputError(
                f"index out of range: {pair!r} (the graph has {count} nodes)",
                file=source,
                field=f"edges[{i}]",
            )
        if src == dst:
            raise InputError(
                f"an edge from a node to itself ({graph.nodes[src].version}) is a cycle",
                file=source,
                field=f"edges[{i}]",
            )
        graph.add_edge_unchecked(src, dst)


def _req_str(obj: dict[str, Any], key: str, source: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise InputError("must be a string", file=source, field=f"{where}.{key}")
    return value


def decode_rules(rules: object, source: str, where: str) -> tuple[MatchingRule, ...]:
    if not isinstance(rules, list):
        raise InputError("must be a list of rules", file=source, field=where)
    out = []
    for j, rule in enumerate(rules):
        at = f"{where}[{j}]"
        if not isinstance(rule, dict):
            raise InputError("a rule must be an object with 'type'", file=source, field=at)
        rtype = rule.get("type", "")
        if not isinstance(rtype, str):
            raise InputError("must be a string", file=source, field=f"{at}.type")
        promql = rule.get("promql")
        query = ""
        if promql is not None:
            if not isinstance(promql, dict) or not isinstance(promql.get("promql", ""), str):
                raise InputError(
                    "must be an object {promql: <query>}", file=source, field=f"{at}.promql"
                )
            query = promql.get("promql", "")
        out.append(MatchingRule(rtype, query))
    return tuple(out)


def decode_risk(risk: object, source: str, where: str) -> Risk:
    if not isinstance(risk, dict):
        raise InputError("a risk must be an object", file=source, field=where)
    return Risk(
        url=_req_str(risk, "url", source, where),
        name=_req_str(risk, "name", source, where),
        message=_req_str(risk, "message", source, where),
        matching_rules=decode_rules(risk.get("matchingRules"), source, f"{where}.matchingRules"),
    )


def decode_conditional_edges(entries: object, source: str) -> dict[Edge, tuple[Risk, ...]]:
    """Read `conditionalEdges`; a pair listed in several entries gets their risks merged."""
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise InputError("must be a list", file=source, field="conditionalEdges")
    out: dict[Edge, tuple[Risk, ...]] = {}
    for i, entry in enumerate(entries):
        where = f"conditionalEdges[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("edges"), list):
            raise InputError("must be an object with 'edges' and 'risks'", file=source, field=where)
        raw_risks = entry.get("risks")
        if not isinstance(raw_risks, list):
            raise InputError("must be a list", file=source, field=f"{where}.risks")
        risks = tuple(
            decode_risk(r, source, f"{where}.risks[{k}]") for k, r in enumerate(raw_risks)
        )
        for k, edge in enumerate(entry["edges"]):
            at = f"{where}.edges[{k}]"
            if not isinstance(edge, dict):
                raise InputError("must be an object {from, to}", file=source, field=at)
            pair = (_req_str(edge, "from", source, at), _req_str(edge, "to", source, at))
            merged = out.get(pair, ())
            out[pair] = merged + tuple(r for r in risks if r not in merged)
    return out


# --- writing -------------------------------------------------------------------------------


def canonical_order(graph: Graph) -> list[int]:
    return sorted(range(len(graph.nodes)), key=lambda i: version_sort_key(graph.nodes[i].version))


def node_to_json(node: Node, *, drop_keys: frozenset[str] = frozenset()) -> dict[str, Any]:
    if not node.concrete:
        return {"version": node.version}
    assert node.metadata is not None
    metadata = {k: node.metadata[k] for k in sorted(node.metadata) if k not in drop_keys}
    return {"version": node.version, "payload": node.payload, "metadata": metadata}


def group_conditional_edges(
    items: Iterable[tuple[Edge, tuple[Risk, ...]]],
    rename: Callable[[str], str] = lambda v: v,
) -> list[dict[str, Any]]:
    """Group pairs with identical risk lists into Cincinnati's `conditionalEdges` entries."""
    groups: dict[tuple[Risk, ...], list[Edge]] = {}
    for pair, risks in items:
        groups.setdefault(risks, []).append((rename(pair[0]), rename(pair[1])))

    def edge_key(pair: Edge) -> tuple[object, object]:
        return (version_sort_key(pair[0]), version_sort_key(pair[1]))

    entries = []
    for risks, pairs in groups.items():
        pairs.sort(key=edge_key)
        entries.append((edge_key(pairs[0]), pairs, risks))
    entries.sort(key=lambda entry: entry[0])
    return [
        {
            "edges": [{"from": a, "to": b} for a, b in pairs],
            "risks": [risk.to_json() for risk in risks],
        }
        for _, pairs, risks in entries
    ]


def graph_to_json(graph: Graph) -> dict[str, Any]:
    """The graph-builder document: nodes, edges, conditionalEdges (no `version`)."""
    order = canonical_order(graph)
    position = {old: new for new, old in enumerate(order)}
    edges = sorted((position[a], position[b]) for a, b in graph.edges())
    return {
        "nodes": [node_to_json(graph.nodes[i]) for i in order],
        "edges": [list(edge) for edge in edges],
        "conditionalEdges": group_conditional_edges(graph.conditional.items()),
    }


def encode_json(doc: object) -> bytes:
    """Compact JSON, UTF-8, no trailing newline (what the service sends)."""
    return _json_encoder.encode(doc)


def encode_graph(graph: Graph) -> bytes:
    return encode_json(graph_to_json(graph))
