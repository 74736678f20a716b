"""Servers the tests talk to over loopback: a real `kupgrade serve`, and a tiny HTTP
server that answers whatever a test hands it."""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from kupgrade.updateservice.process import ServiceProcess


class Server(ServiceProcess):
    """A `kupgrade serve` child process for tests."""


@contextlib.contextmanager
def running_server(
    releases: Path, graph_data: Path, log: Path, *extra: str, expect_ready: bool = True
) -> Iterator[Server]:
    """Started and answering: /readyz, or only /livez when the graph is expected to fail."""
    with Server(releases, graph_data, log, *extra) as server:
        server.wait_for("/readyz" if expect_ready else "/livez")
        yield server


def wait_for(predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("condition not reached in time")


def metric(base: str, name: str) -> float:
    for line in httpx.get(f"{base}/metrics").text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


class _Handler(http.server.BaseHTTPRequestHandler):
    body: bytes = b""
    drip: bool = False
    answer: Callable[[str], bytes] | None = None  # the body for a request's path and query

    def do_GET(self) -> None:
        body = self.answer(self.path) if self.answer is not None else self.body
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if not self.drip:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            if self.drip:
                for byte in body:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.05)
            else:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(
    body: bytes = b"", drip: bool = False, answer: Callable[[str], bytes] | None = None
) -> Iterator[str]:
    """A server on loopback answering every GET with `body`, or with what `answer` makes
    of the request's path; its base URL, until the caller is done."""
    fields = {"body": body, "drip": drip, "answer": staticmethod(answer) if answer else None}
    handler = type("H", (_Handler,), fields)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
