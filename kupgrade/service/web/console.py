"""The console's routes on `kupgrade serve`: the page at `/` (plain HTML, CSS and
JavaScript written here and shipped in the package: nothing is fetched from elsewhere,
so it works offline and there is no third-party code to vendor or build), and the JSON
it reads besides the Cincinnati graph API: the channels and architectures the loaded
graph-data knows, and the path `kupgrade path` would choose, computed from the same
generation the graph API serves."""

from __future__ import annotations

from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kupgrade.errors import KupgradeError
from kupgrade.graph.codec import graph_from_doc
from kupgrade.graph.model import Graph
from kupgrade.graph.policy import DEFAULT_ARCH, PolicyError
from kupgrade.plan.path import channels_between, plan_path
from kupgrade.risks.rules import Registry
from kupgrade.service.state import GraphState
from kupgrade.versions import SemVer

ASSETS = resources.files("kupgrade.service.web") / "assets"
TYPES = {"app.js": "text/javascript", "app.css": "text/css"}


class Console:
    def __init__(self, state: GraphState, prefix: str) -> None:
        self.state = state
        self.prefix = prefix
        page = (ASSETS / "index.html").read_text(encoding="utf-8")
        self.page = page.replace("{{PREFIX}}", prefix).encode()
        self.assets = {name: (ASSETS / name).read_bytes() for name in TYPES}

    def routes(self) -> dict[str, tuple[str, Any]]:
        out: dict[str, tuple[str, Any]] = {
            "/": ("console", self.index),
            "/console/api/channels": ("console-api", self.channels),
            "/console/api/path": ("console-api", self.path),
        }
        for name in TYPES:
            out[f"/console/{name}"] = ("console", self._asset(name))
        return out

    def index(self, _: Request) -> Response:
        return Response(self.page, media_type="text/html; charset=utf-8",
                        headers={"cache-control": "no-cache"})  # fmt: skip

    def _asset(self, name: str) -> Any:
        body, media = self.assets[name], TYPES[name]

        def serve(_: Request) -> Response:
            return Response(body, media_type=media, headers={"cache-control": "no-cache"})

        return serve

    def channels(self, _: Request) -> Response:
        generation = self.state.current
        if generation is None:
            return JSONResponse({"error": "no graph-data loaded yet"}, status_code=503)
        return JSONResponse({"channels": sorted(generation.channels),
                             "arches": sorted(generation.arches), "prefix": self.prefix})  # fmt: skip

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
            result = plan_path(start, target, graphs, Registry.standard(None),
                               q.get("nr") == "1")  # fmt: skip
        except (KupgradeError, PolicyError, ValueError) as exc:
            return JSONResponse({"error": str(getattr(exc, "message", exc))}, status_code=400)
        return JSONResponse(result.to_json())
