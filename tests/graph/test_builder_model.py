"""Property test: the builder agrees with a naive model written straight from README §3.

Hypothesis draws raw graphs (several arches, abstract nodes, add/remove metadata) and
graph-data (unconditional and conditional blocks, channels, raw metadata); the model below
re-implements the steps on plain strings with Python's `re`, independently of our code.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kupgrade.graph.builder import build_graph
from kupgrade.graph.codec import graph_from_doc
from kupgrade.graph.graphdata import load_graph_data
from tests.support.graphkit import (
    P,
    build_doc,
    conditional_of,
    edges_of,
    node,
    raw_graph,
    risk,
    tree,
)

BASES = [f"4.{m}.{p}" for m in range(3) for p in range(4)]
ARCHES = ["amd64", "s390x"]
REGEXES = [
    "4\\.1\\..*",
    ".*",
    "4\\.0\\.[0-2]",
    "amd64",
    "s390x$",
    "^4\\.0",
    "4[.]2[.]1[+].*",
    "4\\.1\\.3|4\\.0\\.0",
]
CHANNELS = ["stable-4.1", "stable-4.10", "fast-4.9", "candidate-4.2"]
RR = P + "previous.remove_regex"


def base(version: str) -> str:
    return version.split("+", 1)[0]


def build_of(version: str) -> str:
    return version.split("+", 1)[1] if "+" in version else ""


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    present = draw(
        st.lists(
            st.tuples(st.sampled_from(BASES), st.sampled_from(ARCHES)),
            min_size=2,
            max_size=14,
            unique=True,
        )
    )
    versions = sorted({f"{b}+{a}" for b, a in present}, key=lambda v: (BASES.index(base(v)), v))
    abstract = set(draw(st.lists(st.sampled_from(versions), max_size=3)))
    edges = set()
    for i, a in enumerate(versions):
        for b in versions[i + 1 :]:
            if build_of(a) == build_of(b) and base(a) != base(b) and draw(st.booleans()):
                edges.add((a, b))
    metadata: dict[str, dict[str, str]] = {}
    for v in versions:
        if v in abstract:
            continue
        meta: dict[str, str] = {}
        earlier = [b for b in BASES if BASES.index(b) < BASES.index(base(v))]
        later = [b for b in BASES if BASES.index(b) > BASES.index(base(v))]
        if earlier and draw(st.integers(0, 4)) == 0:
            meta[P + "previous.add"] = ",".join(
                draw(st.lists(st.sampled_from(earlier), min_size=1, max_size=2))
            )
        if later and draw(st.integers(0, 4)) == 0:
            meta[P + "next.add"] = ", ".join(
                draw(st.lists(st.sampled_from(later), min_size=1, max_size=2))
            )
        if draw(st.integers(0, 5)) == 0:
            meta[P + "previous.remove"] = draw(st.sampled_from(["*", *earlier])) if earlier else "*"
        if later and draw(st.integers(0, 5)) == 0:
            meta[P + "next.remove"] = draw(st.sampled_from(later))
        metadata[v] = meta
    files: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 6))):
        to = draw(st.sampled_from(BASES))
        if draw(st.integers(0, 3)) == 0:
            to += "+" + draw(st.sampled_from(ARCHES))
        regex = draw(st.sampled_from(REGEXES))
        if draw(st.booleans()):
            files.append({"to": to, "from": regex})
        else:
            files.append(risk(to, regex, draw(st.sampled_from(["RiskA", "RiskB", "RiskC"]))))
    channels = []
    for name in draw(st.lists(st.sampled_from(CHANNELS), max_size=3, unique=True)):
        listed = draw(st.lists(st.sampled_from(BASES + [f"{b}+amd64" for b in BASES]), max_size=6))
        channels.append({"name": name, "versions": listed})
    raw_md = {}
    for b in draw(st.lists(st.sampled_from(BASES), max_size=2, unique=True)):
        raw_md[b] = {"url": f"https://errata/{b}"}
    return {
        "versions": versions,
        "abstract": abstract,
        "edges": edges,
        "metadata": metadata,
        "files": files,
        "channels": channels,
        "raw_md": raw_md,
    }


def model(
    s: dict[str, Any],
) -> tuple[
    set[tuple[str, str]],
    dict[tuple[str, str], list[str]],
    dict[str, dict[str, str]],
    dict[tuple[str, str], str],
]:
    """Edges, conditional edges, metadata, and the edges removed outright by what."""
    versions: list[str] = s["versions"]
    concrete = [v for v in versions if v not in s["abstract"]]
    meta = copy.deepcopy(s["metadata"])
    for v in concrete:
        meta[v][P + "release.arch"] = build_of(v)
    edges = set(s["edges"])

    def append(v: str, key: str, value: str, sep: str = ",") -> None:
        meta[v][key] = meta[v][key] + sep + value if key in meta[v] else value

    for ver, kv in s["raw_md"].items():  # step 2
        for v in concrete:
            if base(v) == base(ver):
                for k, val in kv.items():
                    append(v, k, val)
    arches = {build_of(v) for v in versions}  # step 4
    files = s["files"]
    for f in files:  # step 5
        if set(f) == {"to", "from"}:
            targets = (
                [f["to"]]
                if "+" in f["to"]
                else [f"{f['to']}+{a}" if a else f["to"] for a in arches]
            )
            for t in targets:
                if t in concrete:
                    meta[t][RR] = f["from"]
    recorded = []
    for f in files:  # step 6
        if "name" in f:
            recorded.append((f["from"], f["to"], f["name"]))
            for a in arches:
                t = f"{base(f['to'])}+{a}" if a else base(f["to"])
                if t in concrete:
                    append(t, RR, f["from"], "|")
    for ch in s["channels"]:  # step 7
        members = {
            v
            for v in concrete
            for lv in ch["versions"]
            if base(lv) == base(v) and ("+" not in lv or build_of(lv) == build_of(v))
        }
        for v in members:
            append(v, P + "release.channels", ch["name"])
    for v in concrete:
        if P + "release.channels" in meta[v]:
            names = sorted(meta[v][P + "release.channels"].split(","))
            meta[v][P + "release.channels"] = ",".join(
                sorted(names, key=lambda n: n.split("-", 1)[1])
            )

    def annotated(item: str, carrier: str) -> str:
        return f"{base(item.strip())}+{build_of(carrier)}"

    for key, reverse in ((P + "previous.add", False), (P + "next.add", True)):  # 8.1, 8.2
        for v in versions:
            if v in meta and key in meta[v]:
                for item in meta[v][key].split(","):
                    other = annotated(item, v)
                    if other in versions:
                        edges.add((v, other) if reverse else (other, v))
    conditional: dict[tuple[str, str], list[str]] = {}
    for frm, to, name in recorded:  # 8.3
        for t in versions:
            if t == to or base(t) == to:
                for p in sorted(a for a, b in edges if b == t):
                    if frm == ".*" or re.search(frm, p):
                        conditional.setdefault((p, t), []).append(name)
    before = set(edges)
    for v in versions:  # 8.4
        value = meta.get(v, {}).get(P + "previous.remove")
        if value is not None:
            if value.strip() == "*":
                edges = {(a, b) for a, b in edges if b != v}
            else:
                for item in value.split(","):
                    edges.discard((annotated(item, v), v))
    blocked = {e: P + "previous.remove" for e in before - edges}
    before = set(edges)
    for v in versions:  # 8.5
        pattern = meta.get(v, {}).get(RR)
        if pattern is not None:
            edges = {
                (a, b) for a, b in edges if b != v or not (pattern == ".*" or re.search(pattern, a))
            }
    blocked |= {e: RR for e in before - edges}
    before = set(edges)
    for v in versions:  # 8.6
        value = meta.get(v, {}).get(P + "next.remove")
        if value is not None:
            for item in value.split(","):
                edges.discard((v, annotated(item, v)))
    blocked |= {e: P + "next.remove" for e in before - edges}
    # An edge with risks is served as a conditional edge; the rest were blocked outright.
    blocked = {e: key for e, key in blocked.items() if e not in conditional}
    return edges, conditional, meta, blocked


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_builder_agrees_with_the_readme_model(s: dict[str, Any]) -> None:
    nodes = []
    for v in s["versions"]:
        if v in s["abstract"]:
            nodes.append({"version": v})
        else:
            doc = node(v)
            doc["metadata"].update(s["metadata"][v])
            nodes.append(doc)
    files = {f"f{i:03d}.yaml": f for i, f in enumerate(s["files"])}
    channels = {f"c{i}.yaml": c for i, c in enumerate(s["channels"])}
    doc = build_doc(
        raw_graph(nodes, sorted(s["edges"])),
        tree(blocked=files, channels=channels, raw_metadata=s["raw_md"]),
    )
    want_edges, want_conditional, want_meta, want_blocked = model(s)
    built = build_graph(
        graph_from_doc(raw_graph(nodes, sorted(s["edges"])), "raw"),
        load_graph_data(tree(blocked=files, channels=channels, raw_metadata=s["raw_md"])),
    )
    assert built.blocked == want_blocked  # what the console shows on request
    assert edges_of(doc) == want_edges
    assert conditional_of(doc) == want_conditional
    for n in doc["nodes"]:
        if "metadata" in n:
            for key in (P + "release.channels", "url", RR):
                assert n["metadata"].get(key) == want_meta[n["version"]].get(key), (
                    n["version"],
                    key,
                )
