"""HTTP servers as child processes: `kupgrade serve` for the demo (tests and benchmarks
start theirs, and their Prometheus and registry, the same way: tests/support/processes.py).

A real process on a real port is the point (the same server users run): start it with its
output in a log file, wait for an HTTP answer, stop its whole process group.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx

from kupgrade.errors import KupgradeError

EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOW_PORT = 20000  # above the ports Ray's workers take (10002-19999 by default)


def free_port() -> int:
    """A port nothing listens on right now, for a child to bind a moment later.

    Chosen below the kernel's ephemeral range when there is room: a port the OS hands
    out for port 0 is also the kind every outgoing connection and every other server
    started with port 0 takes (a local Ray instance opens dozens), so between our pick
    and the child's bind another process could take it; one below the range only a
    process asking for it by number can."""
    try:
        first = int(EPHEMERAL.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        first = 0
    for _ in range(64 if first - LOW_PORT > 1000 else 0):
        port = random.randrange(LOW_PORT, first)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ChildProcess:
    """A server child process answering on `base`; use as a context manager."""

    def __init__(self, command: list[str], base: str, log: Path) -> None:
        self.command = command
        self.base = base
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        with self.log.open("wb") as sink:
            self.process = subprocess.Popen(
                self.command, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
            )
        return self

    def wait_for(self, path: str = "/readyz", timeout: float = 60.0) -> None:
        """Until `path` answers 200; raises KupgradeError with the log if the process dies."""
        assert self.process is not None, "start() first"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise KupgradeError(f"{self.command[0]} exited early:\n{self.logs()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.base + path, timeout=1.0).status_code == 200:
                    return
            time.sleep(0.05)
        raise KupgradeError(
            f"{self.base}{path} did not answer 200 within {timeout:.0f}s; see {self.log}"
        )

    def stop(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def logs(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class ServiceProcess(ChildProcess):
    """A running `kupgrade serve` on a free loopback port."""

    def __init__(self, releases: Path, graph_data: Path, log: Path, *extra: str) -> None:
        self.port = free_port()
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
        super().__init__(command, f"http://127.0.0.1:{self.port}", log)
