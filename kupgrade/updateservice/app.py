"""The update service: Cincinnati's policy-engine API over ASGI (SPEC A3, C2).

Clusters (and `kupgrade updates`) ask it for the graph of their channel and architecture.

Behaviour follows ../shared/conformance/cincinnati/README.md §5 exactly: Accept matched as
one exact string, `channel` mandatory, form-urlencoded query with the last value winning,
errors as `{"kind", "value"}` JSON, CORS by echoing `Origin` with `Vary: Origin`, and an
empty 404 for every other path. Extensions a Cincinnati client will not mind: ETag /
If-None-Match (304) and gzip.

The two graph routes are the hot path and are answered by a plain ASGI callable from
pre-rendered bytes; the other routes go through Starlette.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from kupgrade.graph.codec import encode_json
from kupgrade.graph.policy import DEFAULT_ARCH, PolicyError
from kupgrade.updateservice.console import Console
from kupgrade.updateservice.metrics import ServiceMetrics
from kupgrade.updateservice.openapi import openapi_document
from kupgrade.updateservice.rendered import Rendered
from kupgrade.updateservice.state import ServedState

log = logging.getLogger("kupgrade.updateservice")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

DEFAULT_PREFIX = "/api/upgrades_info"
CINCINNATI_V1 = "application/vnd.redhat.cincinnati.v1+json"
# Cincinnati compares the whole Accept value with these strings, byte for byte.
ACCEPTED = {
    b"*": "application/json",
    b"*/*": "application/json",
    b"application/*": "application/json",
    b"application/json": "application/json",
    CINCINNATI_V1.encode(): CINCINNATI_V1,
}
MANDATORY_PARAMS = ("channel",)
MAX_QUERY_BYTES = 8192
MAX_QUERY_FIELDS = 64
MAX_CACHED_QUERIES = 1024
_JSON = b"application/json"


def normalize_prefix(prefix: str) -> str:
    """One leading '/', no trailing '/'; '' and '/' mean no prefix."""
    stripped = prefix.strip().strip("/")
    return f"/{stripped}" if stripped else ""


class UpdateService:
    """ASGI application serving one ServedState (built here, or loaded from snapshots)."""

    def __init__(self, state: ServedState, prefix: str = DEFAULT_PREFIX) -> None:
        self.state = state
        self.metrics = state.metrics
        self.prefix = normalize_prefix(prefix)
        self.graph_paths = {f"{self.prefix}/graph", f"{self.prefix}/v1/graph"}
        openapi = encode_json(openapi_document(self.prefix))

        def openapi_route(_: Request) -> Response:
            return Response(openapi, media_type="application/json")

        routes = {
            f"{self.prefix}/openapi": ("openapi", openapi_route),
            f"{self.prefix}/v1/openapi": ("openapi", openapi_route),
            f"{self.prefix}/graph-data": ("graph-data", self._graph_data),
            "/metrics": ("metrics", self._metrics),
            "/livez": ("livez", lambda _: PlainTextResponse("ok\n")),
            "/readyz": ("readyz", self._readyz),
        }
        console = Console(state, self.prefix)
        routes.update(console.routes())
        self.posts = set(console.posts)  # the console's evaluations take a snapshot body
        self.route_names = {path: name for path, (name, _) in routes.items()}
        self._queries: dict[bytes, dict[str, str]] = {}
        self._graph_metrics: dict[int, tuple[Any, Any]] = {}
        self.starlette = Starlette(
            routes=[
                Route(path, handler, methods=["POST"] if path in self.posts else ["GET"])
                for path, (_, handler) in routes.items()
            ],
            lifespan=self._lifespan,
        )

    @contextlib.asynccontextmanager
    async def _lifespan(self, _: Starlette) -> AsyncIterator[None]:
        self.state.start()
        try:
            yield
        finally:
            self.state.stop()

    # --- dispatch ------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.starlette(scope, receive, send)
            return
        started = time.perf_counter()
        path = scope["path"]
        if path in self.graph_paths:
            code = await self._graph(scope, send)
            self._observe_graph(code, time.perf_counter() - started)
            return
        origin = _header(scope, b"origin")
        if origin is not None:
            send = _with_cors(send, origin)
        if path in self.route_names:
            route = self.route_names[path]
            code = await self._delegate(scope, receive, send)
        else:
            route = "unknown"
            code = 404
            await _respond(send, 404, b"", [])
        self.metrics.observe(route, code, time.perf_counter() - started)

    def _observe_graph(self, code: int, seconds: float) -> None:
        children = self._graph_metrics.get(code)
        if children is None:
            children = self._graph_metrics[code] = (
                self.metrics.requests.labels("graph", str(code)),
                self.metrics.latency.labels("graph"),
            )
        children[0].inc()
        children[1].observe(seconds)

    async def _delegate(self, scope: Scope, receive: Receive, send: Send) -> int:
        allowed = b"POST" if scope["path"] in self.posts else b"GET"
        if scope["method"].encode() != allowed:
            await _respond(send, 405, b"", [(b"allow", allowed)])
            return 405
        status = 500

        async def capture(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await self.starlette(scope, receive, capture)
        return status

    # --- the graph route (the hot path: keep it lean) -------------------------------------

    async def _graph(self, scope: Scope, send: Send) -> int:
        accept = origin = encoding = if_none_match = None
        for key, value in scope["headers"]:  # one pass; the first of a repeated header wins
            if key == b"accept":
                accept = value if accept is None else accept
            elif key == b"origin":
                origin = value if origin is None else origin
            elif key == b"accept-encoding":
                encoding = value if encoding is None else encoding
            elif key == b"if-none-match":
                if_none_match = value if if_none_match is None else if_none_match
        try:
            if scope["method"] != "GET":
                await _respond(send, 405, b"", _cors([(b"allow", b"GET")], origin, b""))
                return 405
            rendered, media_type, named = self._answer(accept, scope.get("query_string", b""))
        except PolicyError as exc:
            return await self._error(send, exc, origin)
        except Exception:  # never let one request take the service down
            log.exception("unexpected error answering %s", scope["path"])
            return await self._error(
                send, PolicyError(500, "failed_plugin_execution", "internal error"), origin
            )
        use_gzip = encoding is not None and _accepts_gzip(encoding)
        headers = rendered.headers(media_type, use_gzip)
        if named:  # the snapshot the answer is from: the same generation as its body
            headers = [*headers, *named]
        headers = _cors(headers, origin, b"Accept, Accept-Encoding")
        if if_none_match is not None and _etag_matches(
            if_none_match, rendered.gzip_etag if use_gzip else rendered.etag
        ):
            headers = [h for h in headers if h[0] != b"content-length"]
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return 304
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send(
            {
                "type": "http.response.body",
                "body": rendered.gzip_body if use_gzip else rendered.body,
            }
        )
        return 200

    def _answer(
        self, accept: bytes | None, raw_query: bytes
    ) -> tuple[Rendered, str, tuple[tuple[bytes, bytes], ...]]:
        """The checks in Cincinnati's order: Accept, mandatory params, graph, channel, arch.

        The generation is read once: the body and the headers naming its snapshot come
        from the same one, however often it is replaced meanwhile."""
        if accept is None:
            media_type = CINCINNATI_V1
        else:
            found = ACCEPTED.get(accept)
            if found is None:
                raise PolicyError(406, "invalid_content_type", "invalid Content-Type requested")
            media_type = found
        params = self._queries.get(raw_query)
        if params is None:
            params = _query(raw_query)
            if len(self._queries) >= MAX_CACHED_QUERIES:
                self._queries.clear()
            self._queries[raw_query] = params
        missing = [name for name in MANDATORY_PARAMS if name not in params]
        if missing:
            raise PolicyError(
                400,
                "missing_params",
                "mandatory client parameters missing: " + ", ".join(sorted(missing)),
            )
        generation = self.state.current
        if generation is None:
            reason = self.state.last_error or "the first build has not finished"
            raise PolicyError(
                500, "failed_upstream_fetch", f"no update graph is loaded yet: {reason}"
            )
        rendered = generation.render(params["channel"], params.get("arch", DEFAULT_ARCH))
        return rendered, media_type, generation.headers

    async def _error(self, send: Send, error: PolicyError, origin: bytes | None) -> int:
        self.metrics.error(error.status, error.kind)
        body = encode_json(error.body())
        headers = _cors(
            [(b"content-type", _JSON), (b"content-length", str(len(body)).encode())], origin, b""
        )
        await send({"type": "http.response.start", "status": error.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return error.status

    # --- the other routes -----------------------------------------------------------------

    def _graph_data(self, _: Request) -> Response:
        generation = self.state.current
        if generation is None:
            return PlainTextResponse("no graph-data loaded yet\n", status_code=503)
        headers = {"content-disposition": 'attachment; filename="graph-data.tar.gz"'}
        headers.update((k.decode(), v.decode()) for k, v in generation.headers)
        return Response(generation.tarball(), media_type="application/gzip", headers=headers)

    def _metrics(self, _: Request) -> Response:
        return Response(self.metrics.render(), media_type=ServiceMetrics.content_type)

    def _readyz(self, _: Request) -> Response:
        ready, text = self.state.readiness()
        return PlainTextResponse(text, status_code=200 if ready else 503)


# --- small ASGI helpers -------------------------------------------------------------------


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


def _query(raw: bytes) -> dict[str, str]:
    """Form-urlencoded, `+` is a space, the last value of a repeated key wins."""
    if len(raw) > MAX_QUERY_BYTES:
        raise PolicyError(
            414,
            "invalid_params",
            f"invalid client parameters: query longer than {MAX_QUERY_BYTES} bytes",
        )
    try:
        pairs = parse_qsl(
            raw.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS
        )
    except ValueError:
        raise PolicyError(
            400,
            "invalid_params",
            f"invalid client parameters: more than {MAX_QUERY_FIELDS} query parameters",
        ) from None
    return dict(pairs)


def _accepts_gzip(value: bytes | None) -> bool:
    """Whether Accept-Encoding lists gzip with a non-zero quality."""
    if not value:
        return False
    for item in value.decode("latin-1").split(","):
        coding, _, params = item.partition(";")
        if coding.strip().lower() not in ("gzip", "x-gzip"):
            continue
        for param in params.split(";"):
            name, _, quality = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    return float(quality) > 0
                except ValueError:
                    return False
        return True
    return False


def _etag_matches(value: bytes | None, etag: str) -> bool:
    if value is None:
        return False
    text = value.decode("latin-1").strip()
    if text == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in text.split(","))


def _cors(
    headers: list[tuple[bytes, bytes]], origin: bytes | None, vary: bytes
) -> list[tuple[bytes, bytes]]:
    """Add Vary (and, for a request with Origin, the echoed origin) to a header list."""
    if origin is None:
        return [*headers, (b"vary", vary)] if vary else headers
    return [
        *headers,
        (b"access-control-allow-origin", origin),
        (b"vary", vary + b", Origin" if vary else b"Origin"),
    ]


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _with_cors(send: Send, origin: bytes) -> Send:
    """Echo the Origin on every response, with `Vary: Origin` (Cincinnati allows any origin)."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            vary = [v for k, v in headers if k.lower() == b"vary"]
            headers = [(k, v) for k, v in headers if k.lower() != b"vary"]
            headers.append((b"access-control-allow-origin", origin))
            headers.append((b"vary", b", ".join([*vary, b"Origin"])))
            message = {**message, "headers": headers}
        await send(message)

    return wrapped
