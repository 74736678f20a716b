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
from kupgrade.apiserver.clock import Stepper
from kupgrade.cluster.gdc import kubelet_version, own_clusters
from kupgrade.cluster.kubeadm import image_version
from kupgrade.sim.cluster import SimCluster
from kupgrade.versions import parse_kube
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
        length = int(text) if text.isdigit() else -1
        if length < 0:
            reply = status_error(400, "BadRequest", f"invalid Content-Length {text[:40]!r}")
            self.close_connection = True
        elif length > MAX_BODY:
            reply = status_error(413, "RequestEntityTooLarge", "the request is too large")
            self.close_connection = True
        else:
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                reply = self.server.api.handle(
                    self.command, url.path, dict(parse_qsl(url.query)), headers, body
                )
            except Exception as exc:
                reply = status_error(500, "InternalError", f"{type(exc).__name__}: {exc}")
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
        data = reply.body.encode() if text else json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/plain" if text else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, api: KubeAPI, access: Access) -> None:
        super().__init__((LOOPBACK, port), _Handler)
        self.api = api
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
        version: dict[str, str],
        port: int = 0,
        *,
        clock: Stepper | None = None,
    ) -> None:
        self.access = ensure_access(home)
        self.api = KubeAPI(sim, self.access.token, version, clock=clock, home=str(home))
        self.server = _Server(port, self.api, self.access)
        self.port = int(self.server.server_address[1])
        self.kubeconfig = write_kubeconfig(home / "kubeconfig", name, self.port, self.access)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> APIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def version_info(store: Any) -> dict[str, str]:
    """GET /version: the Kubernetes version the simulated cluster runs (OpenShift 4.N
    ships Kubernetes 1.N+13; a distributed-cloud release its own minor)."""
    clusters = own_clusters(store.list("Cluster"))
    apiservers = [
        image_version(p)
        for p in store.list("Pod")
        if (p["metadata"].get("labels") or {}).get("component") == "kube-apiserver"
    ]
    if apiservers:  # a kubeadm cluster: the version its (oldest) apiserver serves
        git = "v" + min((a for a in apiservers if a), key=parse_kube, default="1.30.0")
    elif clusters:
        git = kubelet_version(str(clusters[0]["status"].get("anthosBareMetalVersion", "")))
    else:
        # The apiservers run what the kube-apiserver operator reports (mid-update, the
        # release it has reached, not the one the cluster is going to).
        co = store.get("ClusterOperator", "kube-apiserver") or {"status": {}}
        reported = [
            v["version"] for v in co["status"].get("versions") or [] if v.get("name") == "operator"
        ]
        cv = store.get("ClusterVersion", "version") or {"status": {}}
        release = (
            reported[0]
            if reported
            else str((cv["status"].get("desired") or {}).get("version", "4.13.0"))
        )
        minor = int(release.split(".")[1]) + 13 if release.count(".") >= 1 else 26
        git = f"v1.{minor}.0"
    major, minor_text = git.removeprefix("v").split(".")[:2]
    return {
        "major": major,
        "minor": minor_text,
        "gitVersion": git,
        "gitTreeState": "clean",
        "goVersion": "go1.22",
        "compiler": "gc",
        "platform": "linux/amd64",
    }
