"""Shared fixtures: the conformance data in ../shared (read at run time, never copied) and
a real `kupgrade serve` process on loopback."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KUPGRADE_SHARED", REPO.parent / "shared"))
CONFORMANCE = SHARED / "conformance"
CINCINNATI = CONFORMANCE / "cincinnati"


def conformance_path(*parts: str) -> Path:
    """A path under ../shared/conformance; skips the test with a clear reason if absent."""
    path = CONFORMANCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(
            f"conformance data not found at {path} (set KUPGRADE_SHARED to the shared checkout)"
        )
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """A `kupgrade serve` child process; `base` is its URL."""

    def __init__(self, releases: Path, graph_data: Path, log: Path, *extra: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        command = [
            sys.executable,
            "-m",
            "kupgrade",
            "serve",
            "--releases",
            str(releases),
            "--graph-data",
            str(graph_data),
            "--port",
            str(self.port),
            *extra,
        ]
        with log.open("wb") as sink:
            self.process = subprocess.Popen(
                command, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait_ready(self, timeout: float = 60.0, expect_ready: bool = True) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"server exited:\n{self.log.read_text()}"
            with contextlib.suppress(httpx.HTTPError):
                status = httpx.get(
                    f"{self.base}/livez" if not expect_ready else f"{self.base}/readyz", timeout=1
                ).status_code
                if status == 200:
                    return
            time.sleep(0.05)
        raise AssertionError(f"server not ready:\n{self.log.read_text()}")

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def logs(self) -> str:
        return self.log.read_text(errors="replace")


@contextlib.contextmanager
def running_server(
    releases: Path, graph_data: Path, log: Path, *extra: str, expect_ready: bool = True
) -> Iterator[Server]:
    server = Server(releases, graph_data, log, *extra)
    try:
        server.wait_ready(expect_ready=expect_ready)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def e2e_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The server http-cases.yaml describes: synthetic-raw.json + graph-data-134475077."""
    releases = conformance_path("cincinnati", "e2e", "synthetic-raw.json")
    graph_data = conformance_path("cincinnati", "e2e", "graph-data-134475077")
    with running_server(
        releases, graph_data, tmp_path_factory.mktemp("serve") / "serve.log"
    ) as server:
        yield server


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kupgrade.graph.sample import write_sample

    return write_sample(tmp_path_factory.mktemp("sample") / "data")
