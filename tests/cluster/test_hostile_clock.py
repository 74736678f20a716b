"""A server whose clocks.sim.kupgrade.io answers are not a Clock: the remote controllers'
backend says so in one line naming the kubeconfig it came through, when it starts and at
a step, never a traceback (a KeyError or ValueError before)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from kupgrade.cluster.remote import CLOCK, InformedBackend
from kupgrade.errors import InputError

GOOD = {
    "kind": "Clock",
    "spec": {"mode": "stepped"},
    "status": {"now": 100.0, "resourceVersion": "7", "nextEventAt": None},
}


class _Clocks(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    answers: ClassVar[list[Any]] = []  # what each request is answered, in turn (the last repeats)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        doc = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        body = json.dumps(doc).encode()
        self.send_response(200 if self.path.startswith(CLOCK) else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer  # noqa: N815 - the base's names


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[Path]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Clocks)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "c", "cluster": {"server": f"http://127.0.0.1:{httpd.server_address[1]}"}}
        ],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    yield path
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize(
    "clock",
    [
        {"kind": "Clock"},
        {"kind": "Clock", "status": "later", "spec": {"mode": "stepped"}},
        {**GOOD, "status": {"now": "soon", "resourceVersion": "7"}},
        {**GOOD, "status": {"now": 1.0, "resourceVersion": "seven"}},
        {**GOOD, "status": {"now": 1.0, "resourceVersion": "²"}},  # isdigit(), not int()
        {**GOOD, "status": {"now": True, "resourceVersion": "7"}},
        {**GOOD, "status": {"now": 1.0, "resourceVersion": "7", "nextEventAt": "x"}},
        [1, 2],
    ],
)
def test_a_clock_that_is_not_one_is_said_when_the_backend_starts(
    kubeconfig: Path, clock: Any
) -> None:
    _Clocks.answers = [clock]
    with pytest.raises(InputError) as said:
        InformedBackend(kubeconfig)
    assert "answered a Clock without a time and a resourceVersion" in said.value.message
    assert str(kubeconfig) in said.value.message  # the input it came through


def test_a_spec_that_is_not_an_object_is_a_cluster_running_its_controllers(
    kubeconfig: Path,
) -> None:
    _Clocks.answers = [{**GOOD, "spec": "stepped"}]
    with pytest.raises(InputError) as said:
        InformedBackend(kubeconfig)
    assert "runs its own controllers" in said.value.message


def test_a_step_answered_without_a_clock_is_said(kubeconfig: Path) -> None:
    _Clocks.answers = [GOOD, {"kind": "Clock", "status": {"now": 101.0}}]
    api = InformedBackend(kubeconfig)
    try:
        assert api.now() == 100.0
        with pytest.raises(InputError) as said:
            api.step(None)
        assert "without a time and a resourceVersion" in said.value.message
    finally:
        api.close()
