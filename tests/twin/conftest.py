"""What the twin tests share: an update service on loopback."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

AWS_VERSION = "4.8.0-0.nightly-2021-07-31-065602"


def _graph(versions: list[str]) -> bytes:
    nodes = [
        {"version": v, "payload": f"quay.io/x@sha256:{str(i) * 64}", "metadata": {}}
        for i, v in enumerate(versions, start=1)
    ]
    edges = [[i, j] for i in range(len(nodes)) for j in range(i + 1, len(nodes))]
    return json.dumps({"nodes": nodes, "edges": edges}).encode()


@pytest.fixture
def upstream() -> Iterator[str]:
    """An update service on loopback whose graph goes from the captures' and the default
    cluster's versions to 4.9.0 and 4.14.27."""
    body = _graph([AWS_VERSION, "4.9.0", "4.13.40", "4.14.27"])

    class Graph(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Graph)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/graph"
    server.shutdown()
