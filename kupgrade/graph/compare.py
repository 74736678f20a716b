"""Comparing graph documents the way ../shared/conformance/cincinnati/README.md §6 does.

`cincinnati` is Cincinnati's own `compare_graphs_verbose` (nodes as a multiset, edges as a
from -> {to} map, the order-dependent remove keys dropped, conditional edges ignored);
`strict` adds the conditional edges as (from, to, risk names) and the full risk
definitions per name. Both return human-readable differences; empty means equal.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

from kupgrade.graph import model as m

IGNORED_KEYS = frozenset({m.KEY_PREVIOUS_REMOVE_REGEX, m.KEY_PREVIOUS_REMOVE})
_MAX_SHOWN = 10


def _node_key(node: dict[str, Any]) -> str:
    metadata = node.get("metadata")
    if isinstance(node.get("payload"), str) and isinstance(metadata, dict):
        kept = {k: v for k, v in metadata.items() if k not in IGNORED_KEYS}
        return json.dumps([node["version"], node["payload"], kept], sort_keys=True)
    return json.dumps([node["version"]])


def _edge_map(doc: dict[str, Any]) -> dict[str, set[str]]:
    versions = [n["version"] for n in doc.get("nodes", [])]
    out: dict[str, set[str]] = defaultdict(set)
    for src, dst in doc.get("edges", []):
        out[versions[src]].add(versions[dst])
    return out


def _shown(items: list[str]) -> str:
    head = ", ".join(items[:_MAX_SHOWN])
    return head + (f" … ({len(items)} in all)" if len(items) > _MAX_SHOWN else "")


def _node_differences(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> list[str]:
    """Nodes compared as a multiset; reported by version so a person can act on it."""
    want = Counter(_node_key(n) for n in expected)
    got = Counter(_node_key(n) for n in actual)
    if want == got:
        return []
    by_version_want = {n["version"]: n for n in expected}
    by_version_got = {n["version"]: n for n in actual}
    missing = sorted(set(by_version_want) - set(by_version_got))
    extra = sorted(set(by_version_got) - set(by_version_want))
    changed = []
    for version in sorted(set(by_version_want) & set(by_version_got)):
        a, b = by_version_want[version], by_version_got[version]
        if _node_key(a) != _node_key(b):
            changed.append(f"{version} ({', '.join(_what_differs(a, b))})")
    problems = []
    if missing:
        problems.append(f"nodes missing: {_shown(missing)}")
    if extra:
        problems.append(f"nodes unexpected: {_shown(extra)}")
    if changed:
        problems.append(f"nodes differ: {_shown(changed)}")
    if not problems:
        problems.append("nodes differ in multiplicity (a version is repeated)")
    return problems


def _what_differs(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    if ("payload" in a) != ("payload" in b):
        return ["concrete vs abstract"]
    out = ["payload"] if a.get("payload") != b.get("payload") else []
    ma = {k: v for k, v in (a.get("metadata") or {}).items() if k not in IGNORED_KEYS}
    mb = {k: v for k, v in (b.get("metadata") or {}).items() if k not in IGNORED_KEYS}
    out += [f"metadata {k}" for k in sorted(set(ma) | set(mb)) if ma.get(k) != mb.get(k)]
    return out


def compare_cincinnati(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """README §6.1."""
    problems = []
    if expected.get("version") != actual.get("version"):
        problems.append(
            f"version: expected {expected.get('version')!r}, got {actual.get('version')!r}"
        )
    problems += _node_differences(expected.get("nodes", []), actual.get("nodes", []))
    want_edges, got_edges = _edge_map(expected), _edge_map(actual)
    missing_edges = sorted(
        f"{a}->{b}" for a, tos in want_edges.items() for b in tos - got_edges.get(a, set())
    )
    extra_edges = sorted(
        f"{a}->{b}" for a, tos in got_edges.items() for b in tos - want_edges.get(a, set())
    )
    if missing_edges:
        problems.append(f"edges missing: {_shown(missing_edges)}")
    if extra_edges:
        problems.append(f"edges unexpected: {_shown(extra_edges)}")
    return problems


def _conditional(
    doc: dict[str, Any],
) -> tuple[set[tuple[str, str, tuple[str, ...]]], dict[str, set[str]]]:
    names: dict[tuple[str, str], list[str]] = defaultdict(list)
    definitions: dict[str, set[str]] = defaultdict(set)
    for entry in doc.get("conditionalEdges") or []:
        risk_names = [r["name"] for r in entry.get("risks", [])]
        for risk in entry.get("risks", []):
            definitions[risk["name"]].add(
                json.dumps(
                    [risk.get("url"), risk.get("message"), risk.get("matchingRules")],
                    sort_keys=True,
                )
            )
        for edge in entry.get("edges", []):
            names[(edge["from"], edge["to"])].extend(risk_names)
    pairs = {(a, b, tuple(sorted(n))) for (a, b), n in names.items()}
    return pairs, definitions


def compare_strict(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """README §6.4: §6.1 plus conditional edges and risk definitions."""
    problems = compare_cincinnati(expected, actual)
    want_pairs, want_defs = _conditional(expected)
    got_pairs, got_defs = _conditional(actual)
    missing = sorted(f"{a}->{b} {list(n)}" for a, b, n in want_pairs - got_pairs)
    extra = sorted(f"{a}->{b} {list(n)}" for a, b, n in got_pairs - want_pairs)
    if missing:
        problems.append(f"conditional edges missing: {_shown(missing)}")
    if extra:
        problems.append(f"conditional edges unexpected: {_shown(extra)}")
    for name in sorted(set(want_defs) | set(got_defs)):
        if want_defs.get(name) != got_defs.get(name):
            problems.append(f"risk {name}: definitions differ")
    return problems
