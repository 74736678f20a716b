"""Update paths across minors, the way users walk channels (SPEC A3, H7, X4).

A cluster on stable-4.13 that must reach 4.15 moves through stable-4.13, stable-4.14 and
stable-4.15 in turn. The path takes the fewest hops over recommended edges (plain edges,
and conditional ones whose risks do not apply to this cluster); among paths of that
length it prefers the newest release at every hop (H7: the latest patch first). When no
path exists the answer says where the walk stops and what blocks it.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kupgrade.errors import InputError
from kupgrade.graph.model import Graph, Risk
from kupgrade.risks.recommend import Recommendation, recommend
from kupgrade.risks.rules import Registry
from kupgrade.versions import SemVer

CHANNEL_RE = re.compile(r"^(?P<family>[a-z][a-z0-9]*)-(?P<major>\d+)\.(?P<minor>\d+)$")


def channels_between(channel: str, start: SemVer, target: SemVer) -> list[str]:
    """The channels of `channel`'s family from the start's minor to the target's."""
    m = CHANNEL_RE.match(channel)
    if m is None:
        raise InputError(
            f"channel {channel!r} is not <family>-<major>.<minor> (e.g. stable-4.14)",
            field="--channel",
            hint="paths switch channels within one family, minor by minor",
        )
    if start.major != target.major:
        raise InputError(f"{start} and {target} are different major versions", field="--to")
    first = min(start.minor, int(m["minor"]))
    return [f"{m['family']}-{start.major}.{minor}" for minor in range(first, target.minor + 1)]


@dataclass
class Edge:
    src: str
    dst: str
    channels: list[str] = field(default_factory=list)
    risks: tuple[Risk, ...] = ()
    recommendation: Recommendation | None = None

    @property
    def recommended(self) -> bool:
        return self.recommendation is None or self.recommendation.status == "True"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "from": self.src,
            "to": self.dst,
            "channels": self.channels,
            "recommended": self.recommended,
        }
        if self.recommendation is not None:
            out["risks"] = [
                {"name": name, "applies": e.applies, **({"error": e.error} if e.error else {})}
                for name, e in self.recommendation.exposures
            ]
            out["recommendedCondition"] = {
                "status": self.recommendation.status,
                "reason": self.recommendation.reason,
                "message": self.recommendation.message,
            }
        return out


@dataclass
class PathResult:
    start: str
    target: str
    channels: list[str]
    hops: list[Edge] = field(default_factory=list)
    explanation: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return bool(self.hops) or self.start == self.target

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.start,
            "to": self.target,
            "found": self.found,
            "channels": self.channels,
            "hops": [h.to_json() for h in self.hops],
            "explanation": self.explanation,
        }


def merge(graphs: dict[str, Graph], registry: Registry) -> dict[tuple[str, str], Edge]:
    """All edges of all channels, each with the channels that list it and its risks judged."""
    edges: dict[tuple[str, str], Edge] = {}
    for channel, graph in graphs.items():
        for i, j in graph.edges():
            pair = (graph.nodes[i].version, graph.nodes[j].version)
            edges.setdefault(pair, Edge(*pair)).channels.append(channel)
        for pair, risks in graph.conditional.items():
            edge = edges.setdefault(pair, Edge(*pair))
            if channel not in edge.channels:
                edge.channels.append(channel)
            edge.risks = edge.risks + tuple(r for r in risks if r not in edge.risks)
    exposure_of = registry.per_risk_name()
    for edge in edges.values():
        if edge.risks:
            edge.recommendation = recommend(edge.risks, exposure_of)
    return edges


def _adjacency(edges: Iterable[Edge]) -> dict[str, list[Edge]]:
    out: dict[str, list[Edge]] = {}
    for edge in edges:
        out.setdefault(edge.src, []).append(edge)
    return out


def _distances_to(target: str, edges: Iterable[Edge]) -> dict[str, int]:
    backwards: dict[str, list[str]] = {}
    for edge in edges:
        backwards.setdefault(edge.dst, []).append(edge.src)
    dist = {target: 0}
    queue = deque([target])
    while queue:
        here = queue.popleft()
        for prev in backwards.get(here, []):
            if prev not in dist:
                dist[prev] = dist[here] + 1
                queue.append(prev)
    return dist


def _key(version: str) -> tuple[Any, ...]:
    parsed = SemVer.try_parse(version)
    return (1, parsed.sort_key) if parsed is not None else (0, version)


def shortest(start: str, target: str, edges: list[Edge]) -> list[Edge] | None:
    """Fewest hops; at each hop the newest release that still lies on a shortest path."""
    dist = _distances_to(target, edges)
    if start not in dist:
        return None
    adjacency = _adjacency(edges)
    path: list[Edge] = []
    here = start
    while here != target:
        steps = [e for e in adjacency[here] if dist.get(e.dst) == dist[here] - 1]
        best = max(steps, key=lambda e: _key(e.dst))
        path.append(best)
        here = best.dst
    return path


def plan_path(
    start: str,
    target: str,
    graphs: dict[str, Graph],
    registry: Registry,
    include_not_recommended: bool = False,
) -> PathResult:
    result = PathResult(start, target, list(graphs))
    edges = merge(graphs, registry)
    versions = {v for g in graphs.values() for v in (n.version for n in g.nodes)}
    if not _known(result, start, target, versions):
        return result
    allowed = [e for e in edges.values() if include_not_recommended or e.recommended]
    path = shortest(start, target, allowed)
    if path is not None:
        result.hops = path
        blocked = [e for e in path if not e.recommended]
        result.explanation.append(
            f"{len(path)} hop(s) from {start} to {target} through {', '.join(_channels_used(path))}; "
            "at each hop the newest release on a shortest path (latest patch first)"
        )
        if blocked:
            result.explanation.append(
                "not recommended for this cluster: "
                + "; ".join(f"{e.src} -> {e.dst} ({_why(e)})" for e in blocked)
            )
        return result
    _explain_missing(result, start, target, list(edges.values()), include_not_recommended)
    return result


def _known(result: PathResult, start: str, target: str, versions: set[str]) -> bool:
    start_v, target_v = SemVer.try_parse(start), SemVer.try_parse(target)
    if start_v is not None and target_v is not None and target_v < start_v:
        result.explanation.append(f"{target} is older than {start}: a downgrade is not an update")
        return False
    for label, version in (("current version", start), ("target", target)):
        if version not in versions:
            result.explanation.append(
                f"the {label} {version} is in none of the channels queried ({', '.join(result.channels)})"
            )
    return start in versions and target in versions


def _channels_used(path: list[Edge]) -> list[str]:
    seen: list[str] = []
    for edge in path:
        if not any(c in seen for c in edge.channels):
            seen.append(min(edge.channels, key=_channel_minor))
    return seen


def _channel_minor(channel: str) -> tuple[int, int]:
    m = CHANNEL_RE.match(channel)
    return (int(m["major"]), int(m["minor"])) if m else (0, 0)


def _why(edge: Edge) -> str:
    rec = edge.recommendation
    if rec is None:
        return "recommended"
    return f"Recommended={rec.status} {rec.reason}: " + rec.message.replace("\n\n", " / ").replace(
        "\n", " "
    )


def _reachable(start: str, edges: list[Edge]) -> set[str]:
    adjacency = _adjacency(edges)
    seen = {start}
    queue = deque([start])
    while queue:
        for edge in adjacency.get(queue.popleft(), []):
            if edge.dst not in seen:
                seen.add(edge.dst)
                queue.append(edge.dst)
    return seen


def _explain_missing(
    result: PathResult, start: str, target: str, edges: list[Edge], included: bool
) -> None:
    """Why no path: blocked by risks (which), or where the graph stops (which minor)."""
    if not included:
        risky = shortest(start, target, edges)
        if risky is not None:
            blocked = [e for e in risky if not e.recommended]
            result.explanation.append(
                f"every path from {start} to {target} takes an update that is not recommended for this cluster; "
                f"the shortest ({len(risky)} hops) is blocked at "
                + "; ".join(f"{e.src} -> {e.dst} ({_why(e)})" for e in blocked)
            )
            result.explanation.append(
                "rerun with --include-not-recommended to see that path anyway"
            )
            return
    reach = _reachable(start, edges)
    newest = max(reach, key=_key)
    minor = _minor_of(newest)
    target_minor = _minor_of(target)
    if minor != target_minor:
        result.explanation.append(
            f"from {start} the graph reaches at most {newest}: no update leads out of {minor} towards {target_minor} "
            f"in {', '.join(result.channels)}"
        )
    else:
        result.explanation.append(
            f"from {start} the graph reaches {target_minor} (up to {newest}) but no edge leads to {target}"
        )


def _minor_of(version: str) -> str:
    v = SemVer.try_parse(version)
    return f"{v.major}.{v.minor}" if v is not None else version
