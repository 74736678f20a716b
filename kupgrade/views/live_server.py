"""The live view's web server: plain HTTP on loopback, next to the process that runs a
cluster or a fleet, serving the page and what it shows as server-sent events.

What it shows comes from elsewhere: a `Poller` that looks at a cluster through its
Kubernetes API every so often, or a rehearsal that publishes its fleet's state between
two steps. Each look that differs from the last is numbered and sent to every open page
(EventSource reconnects on its own, so a page survives the run's process handing over).
The standard library's threading server is enough: one page per engineer, on loopback.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from kupgrade.errors import InputError

LOOPBACK = "127.0.0.1"  # every server of kupgrade listens on loopback only
ASSETS = resources.files("kupgrade.views") / "assets"
FILES = {
    "/": ("live.html", "text/html; charset=utf-8"),
    "/console/live.js": ("live.js", "text/javascript"),
    "/console/app.css": ("app.css", "text/css"),
}
KEEPALIVE = 15.0  # seconds between comments on an idle event stream (proxies close silent ones)
RETRY_MS = 500  # how soon a page reconnects after the stream ends (a handover, a restart)


def free_port() -> int:
    """A port free on loopback now."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def listening(port: int) -> socket.socket:
    """A socket listening on loopback, for a run whose processes follow one another (a
    handover): the parent holds it and each process serves on it in turn, so a page that
    reconnects in between waits in the backlog instead of being refused."""
    sock = socket.socket()
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((LOOPBACK, port))
        sock.listen(64)
    except OSError as exc:
        sock.close()
        raise _unusable(port, exc) from None
    sock.set_inheritable(True)
    return sock


def _unusable(port: int, exc: OSError) -> InputError:
    return InputError(
        f"cannot serve the console on {LOOPBACK}:{port}: {exc.strerror or exc}",
        field="--console-port",
        hint="choose another port, or 0 for any free one",
    )


class Published:
    """The latest look, numbered; waiters wake when a different one arrives."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.seq = 0
        self.body = b"{}"
        self.closed = False
        self.ended = ""  # why the run ended for good ("": a handover, pages reconnect)

    def publish(self, doc: dict[str, Any]) -> None:
        body = json.dumps(doc, sort_keys=True, default=str).encode()
        with self.cond:
            if body != self.body:
                self.seq += 1
                self.body = body
                self.cond.notify_all()

    def wait(self, after: int, timeout: float) -> tuple[int, bytes]:
        with self.cond:
            self.cond.wait_for(lambda: self.seq != after or self.closed, timeout=timeout)
            return self.seq, self.body

    def close(self, ended: str = "") -> None:
        with self.cond:
            self.ended = ended
            self.closed = True
            self.cond.notify_all()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the page's requests are not the user's output."""

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path in FILES:
            name, media = FILES[path]
            self._send(200, self.server.assets[name], media)
        elif path == "/console/api/live":
            self._send(200, self.server.published.body, "application/json")
        elif path == "/console/api/live/events":
            self._stream()
        else:
            self._send(404, b'{"error": "not found"}', "application/json")

    def _send(self, code: int, body: bytes, media: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(body)

    def _stream(self) -> None:
        """Server-sent events: every new look as one `data:` line (JSON has no newline)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")  # the stream ends with the connection
        self.end_headers()
        self.close_connection = True
        published, seen = self.server.published, -1
        try:
            self.wfile.write(f"retry: {RETRY_MS}\n\n".encode())
            while not published.closed:
                seq, body = published.wait(seen, KEEPALIVE)
                if seq == seen:
                    self.wfile.write(b": keepalive\n\n")
                else:
                    self.wfile.write(b"id: %d\ndata: %s\n\n" % (seq, body))
                    seen = seq
                self.wfile.flush()
            if published.ended:
                said = json.dumps({"message": published.ended}).encode()
                self.wfile.write(b"event: end\ndata: %s\n\n" % said)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, published: Published, fd: int | None = None) -> None:
        super().__init__((LOOPBACK, port), _Handler, bind_and_activate=fd is None)
        if fd is not None:  # a socket the parent listens on (see `listening`)
            self.socket.close()
            self.socket = socket.socket(fileno=fd)
            self.server_address = self.socket.getsockname()
        self.published = published
        self.assets = {name: (ASSETS / name).read_bytes() for name, _ in FILES.values()}


class LiveServer:
    """Serve the live page on 127.0.0.1:`port` (0: any free one), or on the listening
    socket `fd` a parent process holds, in a background thread."""

    def __init__(self, port: int = 0, fd: int | None = None) -> None:
        self.published = Published()
        try:
            self.server = _Server(port, self.published, fd)
        except OSError as exc:
            raise _unusable(port, exc) from None
        self.port = int(self.server.server_address[1])
        self.url = f"http://{LOOPBACK}:{self.port}/"
        self.ended = ""
        self._thread = threading.Thread(
            target=self.server.serve_forever, daemon=True, name="console"
        )

    def publish(self, doc: dict[str, Any]) -> None:
        self.published.publish(doc)

    def end(self, why: str) -> None:
        """The run is over for good: when the server closes, pages are told so and stop
        reconnecting (without it they reconnect, as to the next process of a handover)."""
        self.ended = why

    def __enter__(self) -> LiveServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.published.close(self.ended)
        self.server.shutdown()
        self.server.server_close()


class Throttle:
    """Publish from a run loop's step callback at most every `every` seconds of real time
    (and always when asked to: the last state of a run)."""

    def __init__(
        self, server: LiveServer, look: Callable[[], dict[str, Any]], every: float
    ) -> None:
        self.server = server
        self.look = look
        self.every = every
        self.last = 0.0

    def __call__(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= self.every:
            self.server.publish(self.look())
            self.last = now


@contextmanager
def published(
    port: int | None,
    view: Callable[[], dict[str, Any]],
    said: Callable[[str], None],
    ended: Callable[[], str],
) -> Iterator[Callable[[Any], None] | None]:
    """A run's view served on loopback while it goes (None: no console asked): a callback
    for the run's loop that publishes at most twice a second, and the last state when the
    run ends, with `ended()` saying why. `said` tells the user the URL."""
    if port is None:
        yield None
        return
    with LiveServer(port) as live:
        said(live.url)
        publish = Throttle(live, view, 0.5)
        publish(force=True)
        yield lambda _: publish()
        publish(force=True)
        live.end(ended())
