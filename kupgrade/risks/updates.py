"""Conditional-update evaluation (SPEC A3-A5): from the graph the update service answered,
the targets this cluster may take, plain edges as `availableUpdates` and those behind
risks as `conditionalUpdates` with a `Recommended` condition evaluated against this
cluster (each risk once per name), as the cluster-version operator records them; and a
settled ClusterVersion holding them (the web console's and the demo's).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kupgrade.graph.client import Clock, ClusterView, Retrieval, failed
from kupgrade.graph.model import Edge, Graph, Node, Risk
from kupgrade.risks.recommend import SEED, recommend
from kupgrade.risks.rules import Registry
from kupgrade.versions import SemVer, version_sort_key
from kupgrade.versions.times import rfc3339

CHANNELS_KEY = "io.openshift.upgrades.graph.release.channels"


@dataclass
class Availability:
    retrieved: dict[str, str]
    current: dict[str, Any] | None = None
    available: list[dict[str, Any]] = field(default_factory=list)
    conditional: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def status(self) -> dict[str, Any]:
        """The ClusterVersion status fields this part of the controller owns."""
        return {
            "availableUpdates": self.available,
            "conditionalUpdates": self.conditional,
            "conditions": [self.retrieved],
        }


def release_of(node: Node) -> dict[str, Any]:
    """A graph node as a ClusterVersion `Release` (version, image, url, channels)."""
    metadata = node.metadata or {}
    out: dict[str, Any] = {"version": node.version, "image": node.payload or ""}
    if metadata.get("url"):
        out["url"] = metadata["url"]
    if metadata.get(CHANNELS_KEY):
        out["channels"] = sorted(metadata[CHANNELS_KEY].split(","))
    return out


def _descending(
    releases: list[dict[str, Any]], key: Callable[[dict[str, Any]], str]
) -> list[dict[str, Any]]:
    return sorted(releases, key=lambda r: version_sort_key(key(r)), reverse=True)


def evaluate(
    cluster: ClusterView,
    retrieval: Retrieval,
    registry: Registry,
    clock: Clock,
    wording: str = SEED,
) -> Availability:
    """Targets from the current version, with risks evaluated once per risk name;
    `wording` picks how an evaluation failure reads (recommend.WORDINGS)."""
    result = Availability(retrieval.condition)
    graph = retrieval.graph
    if graph is None:
        return result
    current = SemVer.parse(cluster.version)
    index = next(
        (i for i, n in enumerate(graph.nodes) if SemVer.try_parse(n.version) == current), None
    )
    if index is None:
        result.retrieved = failed(
            "VersionNotFound",
            "Unable to retrieve available updates: currently reconciling cluster version "
            f'{cluster.version} not found in the "{cluster.channel}" channel',
            clock(),
        ).condition
        return result
    node = graph.nodes[index]
    result.current = release_of(node)
    if cluster.migrating_to_multi:
        # The only update on offer is the current version as a multi-arch payload
        # (cincinnati.go GetUpdates); its conditional updates are not read.
        result.available = [release_of(node)]
        return result
    edges = retrieval.conditional or list(graph.conditional.items())
    try:
        conditional = _conditional_targets(graph, edges, cluster.version, registry, result.notes)
    except LookupError as exc:
        result.retrieved = failed(
            "ResponseInvalid", f"Unable to retrieve available updates: {exc.args[0]}", clock()
        ).condition
        return result
    images = {c["release"]["image"] for c in conditional}
    plain = [release_of(graph.nodes[j]) for j in graph.children(index)]
    for release in plain:
        if release["image"] in images:
            result.notes.append(
                f"Update to {release['version']} listed as both a conditional and unconditional update; "
                "preferring the conditional update."
            )
    result.available = _descending(
        [r for r in plain if r["image"] not in images], lambda r: r["version"]
    )
    exposure_of = registry.per_risk_name()

    stamp = rfc3339(clock())
    for entry in conditional:
        risks = entry.pop("_risks")
        entry["conditions"] = [recommend(risks, exposure_of, wording=wording).condition(stamp)]
    result.conditional = _descending(conditional, lambda c: str(c["release"]["version"]))
    return result


def _conditional_targets(
    graph: Graph,
    edges: list[tuple[Edge, tuple[Risk, ...]]],
    current: str,
    registry: Registry,
    notes: list[str],
) -> list[dict[str, Any]]:
    """Conditional edges from the current version, with unusable rules pruned
    (cluster-version-operator pkg/cincinnati/cincinnati.go GetUpdates).

    Every entry naming the current version counts, in document order; a target that is
    not a node fails the whole answer (LookupError). A risk left with no rule the
    controller can evaluate would be rejected by the API server, so its target is
    dropped; then a target (by image) still declared more than once is dropped entirely
    (risks are never merged across entries).
    """
    out: list[dict[str, Any]] = []
    for (src, to), risks in edges:
        if src != str(SemVer.parse(current)):  # Go: version.String() == edge.From
            continue
        target = graph.find(to)
        if target is None:
            target = next((i for i, n in enumerate(graph.nodes) if _same_text(n.version, to)), None)
        if target is None:
            raise LookupError(f"no node for conditional update {to}")
        kept, dropped = _prune(risks, registry)
        if dropped:
            notes.append(
                f"Conditional update to {to}, risk {dropped!r}, has empty pruned matchingRules; dropping this target"
            )
            continue
        out.append(
            {
                "release": release_of(graph.nodes[target]),
                "risks": [r.to_json() for r in kept],
                "_risks": kept,
            }
        )
    counts = Counter(entry["release"]["image"] for entry in out)
    for entry in out:
        if counts[entry["release"]["image"]] > 1:
            notes.append(
                f"Upstream declares {counts[entry['release']['image']]} conditional updates to "
                f"{entry['release']['version']}; dropping them all."
            )
    return [entry for entry in out if counts[entry["release"]["image"]] == 1]


def _same_text(version: str, text: str) -> bool:
    """Go's `node.Version.String() == edge.To`: the node's version as semver prints it."""
    parsed = SemVer.try_parse(version)
    return parsed is not None and str(parsed) == text


def _prune(risks: tuple[Risk, ...], registry: Registry) -> tuple[list[Risk], str | None]:
    kept: list[Risk] = []
    for risk in risks:
        rules, _ = registry.prune_invalid(risk.matching_rules)
        if not rules:
            return [], risk.name
        kept.append(Risk(risk.url, risk.name, risk.message, tuple(rules)))
    return kept, None


def cluster_version(view: ClusterView, result: Availability, now: float) -> dict[str, Any]:
    """A settled ClusterVersion at `view.version` holding this availability."""
    stamp = rfc3339(now)
    desired = result.current or {"version": view.version, "image": ""}
    conditions = [
        {
            "type": "Available",
            "status": "True",
            "lastTransitionTime": stamp,
            "message": f"Done applying {view.version}",
        },
        {"type": "Failing", "status": "False", "lastTransitionTime": stamp},
        {
            "type": "Progressing",
            "status": "False",
            "lastTransitionTime": stamp,
            "message": f"Cluster version is {view.version}",
        },
        result.retrieved,
    ]
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"channel": view.channel, "upstream": view.upstream, "clusterID": view.cluster_id},
        "status": {**result.status(), "desired": desired, "conditions": conditions},
    }
