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
from kupgrade.graph.codec import decode_conditional_edges, decode_json, graph_from_doc
from kupgrade.graph.model import Edge, Graph, Risk
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
    # The architecture the cluster runs now; empty means the same as `arch` (the desired
    # one). `Multi` desired over a single-arch current is the migration to multi-arch.
    current_arch: str = ""

    @property
    def migrating_to_multi(self) -> bool:
        """Desired `Multi` over a single-arch payload (cincinnati.go GetUpdates)."""
        return self.arch == MULTI and (self.current_arch or self.arch) != MULTI


# configv1.ClusterVersionArchitectureMulti; the update service is asked for `multi`.
MULTI = "Multi"


def release_arch(arch: str) -> str:
    """The `arch` query parameter for a desired architecture (cincinnati.go GetUpdates)."""
    return "multi" if arch == MULTI else arch


@dataclass
class Retrieval:
    """The outcome of one upstream fetch: a graph, or the condition explaining why not."""

    condition: dict[str, str]
    graph: Graph | None = None
    url: str = ""
    # Every conditional edge in document order, one per entry it appears in (not merged
    # as the graph merges them): the operator counts duplicates per target.
    conditional: list[tuple[Edge, tuple[Risk, ...]]] = field(default_factory=list)


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
        return failed(
            "NoUpstream", "No updateService server has been set to retrieve updates.", now
        )
    try:
        url = httpx.URL(cluster.upstream)
    except (httpx.InvalidURL, TypeError) as exc:
        return failed(
            "InvalidURI",
            f'failed to parse update service URL: parse "{cluster.upstream}": {exc}',
            now,
        )
    if url.scheme not in ("http", "https") or not url.host:
        detail = (
            "missing protocol scheme"
            if not url.scheme
            else f"unsupported protocol scheme {url.scheme!r}"
        )
        return failed(
            "InvalidURI",
            f'failed to parse update service URL: parse "{cluster.upstream}": {detail}',
            now,
        )
    bad_id = uuid_error(cluster.cluster_id)
    if bad_id:
        return failed("InvalidID", f"invalid cluster ID: {bad_id}", now)
    if not cluster.arch:
        return failed("NoArchitecture", "Architecture has not been configured.", now)
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


def uuid_error(text: str) -> str:
    """Why google/uuid's Parse refuses `text` ("" when it accepts it): the lengths it
    knows (36, urn:uuid: + 36, {36}, 32 hex) and dashes at 8, 13, 18, 23."""
    body = text
    if not text.isascii():  # Go counts bytes, and no non-ASCII byte is a hex digit
        size = len(text.encode())
        return "invalid UUID format" if size in (32, 36, 38, 45) else f"invalid UUID length: {size}"
    if len(text) == 36 + 9:
        if text[:9].lower() != "urn:uuid:":
            return f"invalid urn prefix: {text[:9]!r}".replace("'", '"')
        body = text[9:]
    elif len(text) == 36 + 2:
        body = text[1:-1]
    elif len(text) == 32:
        return "" if _hex(text) else "invalid UUID format"
    elif len(text) != 36:
        return f"invalid UUID length: {len(text)}"
    if any(body[i] != "-" for i in (8, 13, 18, 23)):
        return "invalid UUID format"
    return "" if _hex(body.replace("-", "")) and len(body) == 36 else "invalid UUID format"


def _hex(text: str) -> bool:
    return len(text) == 32 and all(c in "0123456789abcdefABCDEF" for c in text)


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
        "arch": release_arch(cluster.arch),
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
        doc = decode_json(body, request_url)
        if isinstance(doc, dict) and doc.get("edges") is None:
            doc = {**doc, "edges": []}  # the operator reads a missing `edges` as none
        graph = graph_from_doc(doc, request_url)
        entries = doc.get("conditionalEdges") or []
        conditional = [
            pair
            for entry in entries
            for pair in decode_conditional_edges([entry], request_url).items()
        ]
    except KupgradeError as exc:
        return failed(
            "ResponseInvalid", f"Unable to retrieve available updates: {exc.message}", now
        )
    ok = {"type": "RetrievedUpdates", "status": "True", "lastTransitionTime": rfc3339(now)}
    return Retrieval(ok, graph, request_url, conditional)
