"""The simulated cluster's API over HTTPS on loopback, in the process that runs its store.

The standard library's threading HTTP server serves it: the API must share the store and
virtual clock of the run loop in the same process (the update service's Granian runs its
application in worker processes of its own). Each request is one thread; watches stream
with chunked transfer encoding until they time out or the client goes.
"""

from __future__ import annotations

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from kupgrade.apiserver.access import Access, ensure_access, write_kubeconfig
from kupgrade.apiserver.api import MAX_BODY, KubeAPI, Reply, status_error
from kupgrade.apiserver.audit import AuditLog
from kupgrade.apiserver.clock import Stepper
from kupgrade.sim.cluster import SimCluster
from kupgrade.views.live_server import LOOPBACK


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle's algorithm the second waits for
    # the client's delayed ACK (40 ms on Linux), which made every request cost 40 ms.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: kubectl's requests are not the user's output."""

    def _serve(self) -> None:
        url = urlsplit(self.path)
        text = self.headers.get("Content-Length") or "0"
        length = int(text) if text.isdecimal() else -1
        if length < 0:
            reply = status_error(400, "BadRequest", f"invalid Content-Length {text[:40]!r}")
            self.close_connection = True
        elif length > MAX_BODY:
            reply = status_error(413, "RequestEntityTooLarge", "the request is too large")
            self.close_connection = True
        else:
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            # A client may send the Content-Type twice (kubectl 1.33's typed clients: the
            # protobuf body's type, then JSON); the body is in the first.
            headers["content-type"] = (self.headers.get_all("Content-Type") or [""])[0]
            query = dict(parse_qsl(url.query))
            try:
                reply = self.server.api.handle(self.command, url.path, query, headers, body)
            except Exception as exc:
                reply = status_error(500, "InternalError", f"{type(exc).__name__}: {exc}")
            if self.server.audit is not None:
                self.server.audit.record(self.command, self.path, query, headers, code=reply.status)
        self._send(reply)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve  # noqa: N815 - the base's names

    def _send(self, reply: Reply) -> None:
        if reply.stream is not None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            # The connection ends with the watch: said, so that a client does not put it
            # back in its pool and send its next request down a closed socket.
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for chunk in reply.stream:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                pass
            self.close_connection = True
            return
        text = isinstance(reply.body, str)
        data = self._encoded(reply.body)
        headers = {"Content-Type": "text/plain" if text else "application/json"}
        headers.update(reply.headers, **{"Content-Length": str(len(data))})
        self.send_response(reply.status)
        for name, value in headers.items():
            self.send_header(name, value)
        # The head and the body in one write, so one TLS record and one segment: two
        # (end_headers, then the body) cost a send each, a sixth of a write's time here.
        # http.server keeps the head in _headers_buffer until end_headers flushes it.
        head: list[bytes] = getattr(self, "_headers_buffer")  # noqa: B009 - not in typeshed
        head.append(b"\r\n" + data)
        self.flush_headers()

    @staticmethod
    def _encoded(body: Any) -> bytes:
        """A document encoded once (the OpenAPI's) as it is, text as UTF-8, the rest JSON."""
        if isinstance(body, bytes):
            return body
        return body.encode() if isinstance(body, str) else json.dumps(body).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, api: KubeAPI, access: Access, audit: AuditLog | None) -> None:
        super().__init__((LOOPBACK, port), _Handler)
        self.api = api
        self.audit = audit
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(access.cert, access.key)
        self.socket = context.wrap_socket(self.socket, server_side=True)


class APIServer:
    """Serve `sim`'s store on 127.0.0.1:`port` (0: any free port) in a background thread;
    the kubeconfig for it is written to `kubeconfig`."""

    def __init__(
        self,
        sim: SimCluster,
        home: Path,
        name: str,
        port: int = 0,
        *,
        clock: Stepper | None = None,
        audit_log: Path | None = None,
    ) -> None:
        self.access = ensure_access(home)
        self.api = KubeAPI(sim, self.access.token, clock=clock, home=str(home))
        self.audit = AuditLog(audit_log) if audit_log is not None else None
        self.server = _Server(port, self.api, self.access, self.audit)
        self.port = int(self.server.server_address[1])
        self.kubeconfig = write_kubeconfig(home / "kubeconfig", name, self.port, self.access)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> APIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self.audit is not None:
            self.audit.close()
