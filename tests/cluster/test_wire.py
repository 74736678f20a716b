"""The loopback transport under httpx (kupgrade/cluster/wire.py), against a real HTTP
server on 127.0.0.1: kept connections are reused, bodies of a known length and chunked
ones arrive whole or line by line, a server's `Connection: close` and a kept connection
it closed are handled, and every failure is an httpx error the backend already says in
one line."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.cluster.wire import LoopbackTransport, loopback_client


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.ports.add(self.client_address[1])  # type: ignore[attr-defined]
        if self.path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for n in range(5):
                line = f'{{"n": {n}}}\n'.encode()
                self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            return
        if self.path == "/slow":
            time.sleep(1.5)
        if self.path == "/drop":
            self.close_connection = True
            return
        body = self.path.encode() * 3
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if self.path == "/close":
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        self.send_response(201)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def _serving() -> Iterator[ThreadingHTTPServer]:
    """The server in a thread of its own, noting the client port of each connection."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.ports = set()  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    with _serving() as httpd:
        yield httpd


def _client(httpd: ThreadingHTTPServer) -> httpx.Client:
    port = httpd.server_address[1]
    return httpx.Client(
        base_url=f"http://127.0.0.1:{port}", transport=LoopbackTransport(None), timeout=5
    )


def test_kept_connections_are_reused_and_bodies_arrive_whole(
    server: ThreadingHTTPServer,
) -> None:
    with _client(server) as http:
        for _ in range(20):
            assert http.get("/len").content == b"/len" * 3
        posted = http.post("/echo", json={"a": [1, 2]})
        assert posted.status_code == 201 and posted.json() == {"a": [1, 2]}
        assert http.get("/chunked").text.count("\n") == 5
        assert len(server.ports) == 1  # type: ignore[attr-defined]  # one connection for all
        # a body read line by line, as a watch reads its events
        with http.stream("GET", "/chunked") as stream:
            assert [line for line in stream.iter_lines() if line] == [
                f'{{"n": {n}}}' for n in range(5)
            ]
        assert http.get("/len").status_code == 200
        assert len(server.ports) == 1  # type: ignore[attr-defined]


def test_a_closed_connection_is_not_reused(server: ThreadingHTTPServer) -> None:
    with _client(server) as http:
        assert http.get("/close").content == b"/close" * 3  # the server says it closes
        assert http.get("/len").status_code == 200
        assert len(server.ports) == 2  # type: ignore[attr-defined]
        # a stream left before its end is not put back for another request
        with http.stream("GET", "/chunked") as stream:
            next(stream.iter_raw())
        assert http.get("/len").status_code == 200
        assert len(server.ports) == 3  # type: ignore[attr-defined]


def test_a_kept_connection_the_server_dropped_is_replaced(server: ThreadingHTTPServer) -> None:
    transport = LoopbackTransport(None)
    with httpx.Client(
        base_url=f"http://127.0.0.1:{server.server_address[1]}", transport=transport
    ) as http:
        assert http.get("/len").status_code == 200
        for conn in transport._idle:  # as a server closes an idle keep-alive connection
            assert conn.sock is not None
            conn.sock.shutdown(socket.SHUT_RDWR)
        assert http.get("/len").content == b"/len" * 3


def test_failures_are_httpx_errors(server: ThreadingHTTPServer) -> None:
    with _client(server) as http:
        with pytest.raises(httpx.ReadTimeout):
            http.get("/slow", timeout=0.3)
        with pytest.raises(httpx.RemoteProtocolError):
            http.get("/drop")  # a new connection closed without an answer
        assert http.get("/len").status_code == 200  # and the client goes on
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with (
        httpx.Client(
            base_url=f"http://127.0.0.1:{port}", transport=LoopbackTransport(None)
        ) as http,
        pytest.raises(httpx.ConnectError),
    ):
        http.get("/len")


def test_only_a_client_of_this_machine_changes_transport() -> None:
    elsewhere = httpx.Client(base_url="https://api.example.com:6443")
    assert loopback_client(elsewhere) is elsewhere
    plain = httpx.Client(base_url="http://127.0.0.1:8080", headers={"X-Who": "me"})
    moved = loopback_client(plain)
    assert moved is not plain and isinstance(moved._transport, LoopbackTransport)
    assert moved.headers["X-Who"] == "me" and moved.base_url == plain.base_url


@pytest.fixture(scope="module")
def one_server() -> Iterator[ThreadingHTTPServer]:
    """One server for every example (each server's shutdown waits half a second)."""
    with _serving() as httpd:
        yield httpd


@settings(max_examples=40, deadline=None)
@given(body=st.binary(max_size=70_000))
def test_any_body_goes_and_comes_back_whole(one_server: ThreadingHTTPServer, body: bytes) -> None:
    with _client(one_server) as http:
        for _ in range(2):
            assert http.post("/echo", content=body).content == body
