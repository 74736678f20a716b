"""The console's routes on `kupgrade serve`: the page at `/` (plain HTML, CSS and
JavaScript written here and shipped in the package: nothing is fetched from elsewhere,
so it works offline and there is no third-party code to vendor or build), and the JSON
it reads besides the Cincinnati graph API: the channels and architectures the loaded
graph-data knows, and the path `kupgrade path` would choose, computed from the same
generation the graph API serves."""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

import httpx
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kupgrade.cluster.upgrade_text import render_upgrade
from kupgrade.errors import InputError, KupgradeError
from kupgrade.graph.client import ClusterView, fetch
from kupgrade.graph.codec import graph_from_doc
from kupgrade.graph.model import Graph
from kupgrade.graph.policy import DEFAULT_ARCH, PolicyError
from kupgrade.plan.path import channels_between, plan_path
from kupgrade.risks.backends import prometheus_condition, snapshot_condition
from kupgrade.risks.promql.snapshot import parse_snapshot
from kupgrade.risks.recommend import CVO_HEAD, SEED
from kupgrade.risks.rules import PromQLCondition, Registry
from kupgrade.risks.updates import cluster_version, evaluate
from kupgrade.updateservice.state import ServedState
from kupgrade.versions import SemVer

ASSETS = resources.files("kupgrade.updateservice") / "assets"
# The stylesheet is the live view's too (views/assets): one file for both pages.
SHARED = resources.files("kupgrade.views") / "assets"
TYPES = {"app.js": "text/javascript", "app.css": "text/css"}


class Console:
    def __init__(self, state: ServedState, prefix: str) -> None:
        self.state = state
        self.prefix = prefix
        page = (ASSETS / "index.html").read_text(encoding="utf-8")
        self.page = page.replace("{{PREFIX}}", prefix).encode()
        self.assets = {
            name: ((ASSETS if (ASSETS / name).is_file() else SHARED) / name).read_bytes()
            for name in TYPES
        }

    posts = ("/console/api/updates",)

    def routes(self) -> dict[str, tuple[str, Any]]:
        out: dict[str, tuple[str, Any]] = {
            "/": ("console", self.index),
            "/console/api/channels": ("console-api", self.channels),
            "/console/api/path": ("console-api", self.path),
            "/console/api/blocked": ("console-api", self.blocked),
            "/console/api/updates": ("console-api", self.updates),
        }
        for name in TYPES:
            out[f"/console/{name}"] = ("console", self._asset(name))
        return out

    def index(self, request: Request) -> Response:
        """The page, for a browser. A Cincinnati client asking for `/` gets what the
        policy engine answers every path it does not serve, an empty 404
        (conformance/cincinnati http-cases `root-path`): the page is for whoever asks
        for HTML."""
        if "text/html" not in request.headers.get("accept", ""):
            return Response(b"", status_code=404, headers={"vary": "Accept"})
        return Response(
            self.page,
            media_type="text/html; charset=utf-8",
            headers={"cache-control": "no-cache", "vary": "Accept"},
        )

    def _asset(self, name: str) -> Any:
        body, media = self.assets[name], TYPES[name]

        def serve(_: Request) -> Response:
            return Response(body, media_type=media, headers={"cache-control": "no-cache"})

        return serve

    def channels(self, _: Request) -> Response:
        generation = self.state.current
        if generation is None:
            return JSONResponse({"error": "no graph-data loaded yet"}, status_code=503)
        return JSONResponse(
            {
                "channels": sorted(generation.channels),
                "arches": sorted(generation.arches),
                "prefix": self.prefix,
            }
        )

    def blocked(self, request: Request) -> Response:
        """The edges graph-data removed outright in a channel and architecture, which the
        graph API leaves out (blocked edges, previous.remove, next.remove)."""
        q = request.query_params
        generation = self.state.current
        if generation is None:
            return JSONResponse({"error": "no graph-data loaded yet"}, status_code=503)
        try:
            found = generation.view.blocked(q.get("channel", ""), q.get("arch", DEFAULT_ARCH))
        except PolicyError as exc:
            return JSONResponse({"error": exc.body().get("value", str(exc))}, status_code=400)
        return JSONResponse({"blocked": found})

    def path(self, request: Request) -> Response:
        """What `kupgrade path -o json` answers (without a metrics snapshot, a PromQL
        risk counts as not recommended, as there)."""
        q = request.query_params
        generation = self.state.current
        if generation is None:
            return JSONResponse({"error": "no graph-data loaded yet"}, status_code=503)
        start, target = q.get("from", ""), q.get("to", "")
        channel, arch = q.get("channel", ""), q.get("arch", DEFAULT_ARCH)
        try:
            first, last = SemVer.parse(start), SemVer.parse(target)
            graphs: dict[str, Graph] = {}
            for name in channels_between(channel, first, last):
                doc = generation.view.filter(name, arch)
                graphs[name] = graph_from_doc(doc, f"{name}/{arch}")
            result = plan_path(start, target, graphs, Registry.standard(None), q.get("nr") == "1")
        except (KupgradeError, PolicyError, ValueError) as exc:
            return JSONResponse({"error": str(getattr(exc, "message", exc))}, status_code=400)
        return JSONResponse(result.to_json())

    # --- a cluster's view: what `kupgrade updates` says for it ------------------------------

    async def updates(self, request: Request) -> Response:
        """The recommended updates and known issues of a cluster at `version` on
        `channel`, its risks evaluated on the OpenMetrics snapshot in the body or on the
        `prometheus` URL: the status `kupgrade updates -o json` prints, and its text."""
        q = request.query_params
        generation = self.state.current
        if generation is None:
            return JSONResponse({"error": "no graph-data loaded yet"}, status_code=503)
        try:
            body = await _bounded(request, SNAPSHOT_BYTES)
            ask = Ask(
                q.get("channel", ""),
                q.get("arch", DEFAULT_ARCH),
                q.get("version", ""),
                q.get("prometheus") or None,
                q.get("wording", "documented"),
                q.get("nr") == "1",
            )
            upstream = f"{str(request.base_url).rstrip('/')}{self.prefix}/graph"
            answer = await run_in_threadpool(_evaluate, generation, upstream, ask, body)
        except KupgradeError as exc:
            return JSONResponse({"error": exc.message}, status_code=400)
        return JSONResponse(answer)


SNAPSHOT_BYTES = 64 * 1024 * 1024  # an uploaded snapshot; the service keeps no more in memory
WORDINGS = {"documented": SEED, "current": CVO_HEAD}


@dataclass(frozen=True)
class Ask:
    channel: str
    arch: str
    version: str
    prometheus: str | None
    wording: str
    include_not_recommended: bool


async def _bounded(request: Request, limit: int) -> bytes:
    size = int(request.headers.get("content-length") or 0)
    if size > limit:
        raise InputError(
            f"the snapshot is {size} bytes; at most {limit} are read",
            field="body",
            hint="send a smaller snapshot, or a Prometheus URL",
        )
    chunks, seen = [], 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > limit:
            raise InputError(f"the snapshot is more than {limit} bytes", field="body")
        chunks.append(chunk)
    return b"".join(chunks)


def _condition(body: bytes, prometheus: str | None) -> PromQLCondition | None:
    if body.strip() and prometheus:
        raise InputError("give a snapshot or a Prometheus URL, not both", field="prometheus")
    if body.strip():
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"the snapshot is not UTF-8 text ({exc.reason})", field="body"
            ) from None
        snapshot = parse_snapshot(io.StringIO(text), source="the uploaded snapshot")
        if snapshot.latest_ms is None:
            raise InputError("the snapshot holds no samples", field="body")
        return snapshot_condition(snapshot, snapshot.latest_ms)
    if prometheus:
        return prometheus_condition(prometheus, None, None, None)
    return None


def _evaluate(generation: Any, upstream: str, ask: Ask, body: bytes) -> dict[str, Any]:
    """`kupgrade updates --upstream` this service, answered from its own generation
    (in process: no request back to itself)."""
    if ask.wording not in WORDINGS:
        raise InputError("wording is documented or current", field="wording")
    if SemVer.try_parse(ask.version) is None:
        raise InputError(f"{ask.version!r} is not a version like 4.14.3", field="version")
    condition = _condition(body, ask.prometheus)

    def answer(request: httpx.Request) -> httpx.Response:
        params = request.url.params
        try:
            rendered = generation.render(
                params.get("channel", ""), params.get("arch", DEFAULT_ARCH)
            )
        except PolicyError as exc:
            return httpx.Response(exc.status, json=exc.body())
        return httpx.Response(
            200, content=rendered.body, headers={"content-type": "application/json"}
        )

    view = ClusterView(upstream, ask.channel, ask.version, ask.arch)
    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        retrieval = fetch(view, time.time, client)
    result = evaluate(
        view, retrieval, Registry.standard(condition), time.time, WORDINGS[ask.wording]
    )
    out, err = render_upgrade(
        cluster_version(view, result, time.time()), ask.include_not_recommended
    )
    return {"status": result.status(), "notes": result.notes, "text": out, "warnings": err}
