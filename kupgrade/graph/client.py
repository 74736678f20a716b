"""The update-service client, as the cluster-version operator asks (SPEC A3): the request
carries `channel`, `arch`, `id` and `version`; every way it can fail is a
`RetrievedUpdates=False` condition with the operator's reason and message
(cluster-version-operator pkg/cincinnati and pkg/cvo/availableupdates.go), and an answer
is a graph.
"""

from __future__ import annotations

import functools
import ssl
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from kupgrade.errors import KupgradeError
from kupgrade.graph.codec import decode_json, graph_from_doc
from kupgrade.graph.model import Graph
from kupgrade.intake.http import bounded_get
from kupgrade.versions import SemVer
from kupgrade.versions.times import rfc3339

FETCH_TIMEOUT = 60.0

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


def failed(reason: str, message: str, now: float) -> Retrieval:
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
        return failed("NoUpstream", "No upstream server has been set to retrieve updates.", now)
    try:
        url = httpx.URL(cluster.upstream)
    except (httpx.InvalidURL, TypeError) as exc:
        return failed(
            "InvalidURI", f'failed to parse upstream URL: parse "{cluster.upstream}": {exc}', now
        )
    if url.scheme not in ("http", "https") or not url.host:
        detail = (
            "missing protocol scheme"
            if not url.scheme
            else f"unsupported protocol scheme {url.scheme!r}"
        )
        return failed(
            "InvalidURI", f'failed to parse upstream URL: parse "{cluster.upstream}": {detail}', now
        )
    try:
        uuid.UUID(cluster.cluster_id)
    except ValueError:
        return failed(
            "InvalidID", f"invalid cluster ID: invalid UUID format: {cluster.cluster_id!r}", now
        )
    if not cluster.arch:
        return failed("NoArchitecture", "The set of architectures has not been configured.", now)
    if not cluster.version:
        return failed(
            "NoCurrentVersion",
            "The cluster version does not have a semantic version assigned and cannot calculate valid upgrades.",
            now,
        )
    if not cluster.channel:
        return failed("NoChannel", "The update channel has not been configured.", now)
    if SemVer.try_parse(cluster.version) is None:
        return failed(
            "InvalidCurrentVersion",
            "The current cluster version is not a valid semantic version and cannot be used to calculate upgrades.",
            now,
        )
    return None


@functools.cache
def _tls() -> ssl.SSLContext:
    """The system's CAs, loaded once per process: a rehearsal asks its update service every
    few simulated minutes, and loading them took 60 ms a time (a tenth of a 500-node
    rehearsal)."""
    return httpx.create_ssl_context()


def fetch(cluster: ClusterView, clock: Clock, client: httpx.Client | None = None) -> Retrieval:
    """GET the cluster's channel from the upstream service, as the version controller does."""
    now = clock()
    refused = _preflight(cluster, now)
    if refused is not None:
        return refused
    params = {
        "arch": cluster.arch,
        "channel": cluster.channel,
        "id": cluster.cluster_id,
        "version": cluster.version,
    }
    request_url = str(httpx.URL(cluster.upstream).copy_merge_params(params))
    owned = client is None
    http = client or httpx.Client(timeout=FETCH_TIMEOUT, verify=_tls())
    try:
        answer, body = bounded_get(
            http, request_url, total_timeout=FETCH_TIMEOUT, headers={"Accept": "application/json"}
        )
    except httpx.HTTPError as exc:
        return failed(
            "RemoteFailed", f'Unable to retrieve available updates: Get "{request_url}": {exc}', now
        )
    finally:
        if owned:
            http.close()
    if answer.status_code != 200:
        return failed(
            "ResponseFailed",
            f"Unable to retrieve available updates: unexpected HTTP status: {answer.status_code} {answer.reason_phrase}",
            now,
        )
    try:
        graph = graph_from_doc(decode_json(body, request_url), request_url)
    except KupgradeError as exc:
        return failed(
            "ResponseInvalid", f"Unable to retrieve available updates: {exc.message}", now
        )
    ok = {"type": "RetrievedUpdates", "status": "True", "lastTransitionTime": rfc3339(now)}
    return Retrieval(ok, graph, request_url)
