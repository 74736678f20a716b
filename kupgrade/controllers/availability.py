"""Update availability: ask the upstream update service, record what this cluster may do.

SPEC A3-A5. Like the version controller: the request carries `channel`, `arch`, `id` and
`version`; every way it can fail is a `RetrievedUpdates=False` condition with the
controller's reason and message; targets reached by plain edges become
`availableUpdates`, those behind risks `conditionalUpdates` with a `Recommended`
condition evaluated against this cluster (each risk once per name).
"""

from __future__ import annotations

import copy
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import remove, set_condition
from kupgrade.cluster.objects import rfc3339
from kupgrade.controllers.protocol import Progress

__all__ = [
    "AvailabilityController",
    "ClusterView",
    "cluster_version",
    "evaluate",
    "fetch",
    "rfc3339",
]
from kupgrade.errors import KupgradeError
from kupgrade.graph.codec import decode_json, graph_from_doc
from kupgrade.graph.model import Graph, Node, Risk
from kupgrade.intake.http import bounded_get
from kupgrade.risks.cache import Cache
from kupgrade.risks.recommend import SEED, recommend
from kupgrade.risks.rules import Condition, Registry
from kupgrade.versions import SemVer, version_sort_key

CHANNELS_KEY = "io.openshift.upgrades.graph.release.channels"
FETCH_TIMEOUT = 60.0
REFRESH_INTERVAL = 180.0  # simulated seconds between checks of the update service (SPEC A3)
REFRESH_STATE = "availability:next"

Clock = Callable[[], float]


@dataclass(frozen=True)
class ClusterView:
    """What availability needs to know about a cluster (ClusterVersion spec and status)."""

    upstream: str
    channel: str
    version: str
    arch: str = "amd64"
    cluster_id: str = field(default_factory=lambda: str(uuid.uuid4()))


@dataclass
class Retrieval:
    """The outcome of one upstream fetch: a graph, or the condition explaining why not."""

    condition: dict[str, str]
    graph: Graph | None = None
    url: str = ""


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


def _failed(reason: str, message: str, now: float) -> Retrieval:
    return Retrieval(
        {
            "type": "RetrievedUpdates",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastTransitionTime": rfc3339(now),
        }
    )


def _preflight(cluster: ClusterView, now: float) -> Retrieval | None:
    """The checks the controller makes before it asks anybody (in its order)."""
    if not cluster.upstream:
        return _failed("NoUpstream", "No upstream server has been set to retrieve updates.", now)
    try:
        url = httpx.URL(cluster.upstream)
    except (httpx.InvalidURL, TypeError) as exc:
        return _failed(
            "InvalidURI", f'failed to parse upstream URL: parse "{cluster.upstream}": {exc}', now
        )
    if url.scheme not in ("http", "https") or not url.host:
        detail = (
            "missing protocol scheme"
            if not url.scheme
            else f"unsupported protocol scheme {url.scheme!r}"
        )
        return _failed(
            "InvalidURI", f'failed to parse upstream URL: parse "{cluster.upstream}": {detail}', now
        )
    try:
        uuid.UUID(cluster.cluster_id)
    except ValueError:
        return _failed(
            "InvalidID", f"invalid cluster ID: invalid UUID format: {cluster.cluster_id!r}", now
        )
    if not cluster.arch:
        return _failed("NoArchitecture", "The set of architectures has not been configured.", now)
    if not cluster.version:
        return _failed(
            "NoCurrentVersion",
            "The cluster version does not have a semantic version assigned and cannot calculate valid upgrades.",
            now,
        )
    if not cluster.channel:
        return _failed("NoChannel", "The update channel has not been configured.", now)
    if SemVer.try_parse(cluster.version) is None:
        return _failed(
            "InvalidCurrentVersion",
            "The current cluster version is not a valid semantic version and cannot be used to calculate upgrades.",
            now,
        )
    return None


def fetch(cluster: ClusterView, clock: Clock, client: httpx.Client | None = None) -> Retrieval:
    """GET the cluster's channel from the upstream service, as the version controller does."""
    now = clock()
    failed = _preflight(cluster, now)
    if failed is not None:
        return failed
    params = {
        "arch": cluster.arch,
        "channel": cluster.channel,
        "id": cluster.cluster_id,
        "version": cluster.version,
    }
    request_url = str(httpx.URL(cluster.upstream).copy_merge_params(params))
    owned = client is None
    http = client or httpx.Client(timeout=FETCH_TIMEOUT)
    try:
        answer, body = bounded_get(
            http, request_url, total_timeout=FETCH_TIMEOUT, headers={"Accept": "application/json"}
        )
    except httpx.HTTPError as exc:
        return _failed(
            "RemoteFailed", f'Unable to retrieve available updates: Get "{request_url}": {exc}', now
        )
    finally:
        if owned:
            http.close()
    if answer.status_code != 200:
        return _failed(
            "ResponseFailed",
            f"Unable to retrieve available updates: unexpected HTTP status: {answer.status_code} {answer.reason_phrase}",
            now,
        )
    try:
        graph = graph_from_doc(decode_json(body, request_url), request_url)
    except KupgradeError as exc:
        return _failed(
            "ResponseInvalid", f"Unable to retrieve available updates: {exc.message}", now
        )
    ok = {"type": "RetrievedUpdates", "status": "True", "lastTransitionTime": rfc3339(now)}
    return Retrieval(ok, graph, request_url)


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
        result.retrieved = _failed(
            "VersionNotFound",
            "Unable to retrieve available updates: currently reconciling cluster version "
            f'{cluster.version} not found in the "{cluster.channel}" channel',
            clock(),
        ).condition
        return result
    node = graph.nodes[index]
    result.current = release_of(node)
    conditional = _conditional_targets(graph, node.version, registry, result.notes)
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
    graph: Graph, current: str, registry: Registry, notes: list[str]
) -> list[dict[str, Any]]:
    """Conditional edges from the current version, with unusable rules pruned.

    A risk left with no rule the controller can evaluate would be rejected by the API
    server, so its target is dropped (with a note), as the version controller does; so is
    a target declared twice.
    """
    pairs = [(to, risks) for (src, to), risks in graph.conditional.items() if src == current]
    counts = Counter(to for to, _ in pairs)
    out: list[dict[str, Any]] = []
    for to, risks in pairs:
        target = graph.find(to)
        if target is None:
            notes.append(
                f"conditional update to {to} names a release that is not in the graph; dropped"
            )
            continue
        if counts[to] > 1:
            notes.append(f"conditional update to {to} is declared twice; dropped")
            continue
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
    return out


def _prune(risks: tuple[Risk, ...], registry: Registry) -> tuple[list[Risk], str | None]:
    kept: list[Risk] = []
    for risk in risks:
        rules, _ = registry.prune_invalid(risk.matching_rules)
        if not rules:
            return [], risk.name
        kept.append(Risk(risk.url, risk.name, risk.message, tuple(rules)))
    return kept, None


class AvailabilityController:
    """The version controller's periodic check of the update service (SPEC A3, A4).

    It fetches the graph for the cluster's channel and version and records
    availableUpdates, conditionalUpdates and RetrievedUpdates on the ClusterVersion. With
    `throttled`, risk evaluation goes through the version controller's cache
    (`risks/cache.py`): one match call a second across all rules, each rule at most once
    an hour, and a rule not yet evaluated answers with the controller's "client-side
    throttling" failure (Recommended=Unknown) until its turn. The cache lives as long as
    the controller does, as the real one lives in the operator's memory.
    """

    def __init__(
        self,
        api: Backend,
        promql: Condition | None,
        *,
        throttled: bool,
        interval: float = REFRESH_INTERVAL,
    ) -> None:
        self.api = api
        condition = Cache(promql, api.now) if promql is not None and throttled else promql
        self.registry = Registry.standard(condition)
        self.interval = interval

    def sync(self) -> None:
        """The periodic check: refresh when due (the next one's time is kept in the
        cluster, so a restarted controller keeps the period)."""
        now = self.api.now()
        due = float(self.api.state(REFRESH_STATE) or 0)
        if now < due:
            return
        self.refresh(explicit=False)
        self.api.set_state(REFRESH_STATE, now + self.interval)

    def progress(self) -> list[Progress]:
        """A periodic check has no progress to show."""
        return []

    def refresh(self, explicit: bool) -> list[str]:
        """Ask the upstream now and record the answer; the notes a CLI shows.

        An explicit check (`upgrade`) starts RetrievedUpdates afresh with its own
        transition time; the periodic one keeps the condition's time unless its status
        changes.
        """
        found = self.api.get("ClusterVersion", "version")
        if found is None:
            return []
        cv = copy.deepcopy(found)
        status = cv["status"]
        view = ClusterView(
            cv["spec"].get("upstream", ""),
            cv["spec"].get("channel", ""),
            (status.get("desired") or {}).get("version", ""),
            cluster_id=cv["spec"]["clusterID"],
        )
        result = evaluate(view, fetch(view, self.api.now), self.registry, self.api.now)
        status["availableUpdates"] = result.available or None
        status["conditionalUpdates"] = result.conditional or None
        conditions = status.setdefault("conditions", [])
        if explicit:
            remove(conditions, "RetrievedUpdates")
        set_condition(conditions, result.retrieved, rfc3339(self.api.now()))
        self.api.write(cv)
        return result.notes


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
