"""HTTP servers as child processes: `kupgrade serve` for the demo, tests and benchmarks.

A real process on a real port is the point (the same server users run): start it with its
output in a log file, wait for an HTTP answer, stop its whole process group.
"""

from __future__ import annotations

import contextlib
import os
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


def free_port() -> int:
    """A port nothing listens on right now (the OS picks it)."""
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
        command = [sys.executable, "-m", "kupgrade", "serve", "--releases", str(releases),
                   "--graph-data", str(graph_data), "--port", str(self.port), *extra]  # fmt: skip
        super().__init__(command, f"http://127.0.0.1:{self.port}", log)


class PrometheusProcess(ChildProcess):
    """A real Prometheus on loopback holding metrics snapshots backfilled with promtool.

    The reference our PromQL engine is checked against: each snapshot goes through
    `promtool tsdb create-blocks-from openmetrics`, exactly as an operator would load one.
    """

    def __init__(self, workdir: Path, evaluation_interval: str = "1m") -> None:
        self.port = free_port()
        self.data = workdir / "data"
        config = workdir / "prometheus.yml"
        workdir.mkdir(parents=True, exist_ok=True)
        # No scrape targets; the interval is the default step of subqueries.
        config.write_text(f"global:\n  evaluation_interval: {evaluation_interval}\n")
        command = ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={self.data}",
                   "--storage.tsdb.retention.time=100y", f"--web.listen-address=127.0.0.1:{self.port}",
                   "--log.level=warn"]  # fmt: skip
        super().__init__(command, f"http://127.0.0.1:{self.port}", workdir / "prometheus.log")

    def backfill(self, snapshot: Path) -> None:
        """Load a snapshot (before `start`: Prometheus reads new blocks when it opens them)."""
        done = subprocess.run(
            [
                "promtool",
                "tsdb",
                "create-blocks-from",
                "openmetrics",
                str(snapshot),
                str(self.data),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise KupgradeError(
                f"promtool could not backfill:\n{done.stdout}{done.stderr}", file=str(snapshot)
            )

    def query(
        self, expr: str, time_s: float, client: httpx.Client | None = None
    ) -> dict[str, object]:
        """`data` of `/api/v1/query`, or `{"errorType", "error"}`, as `evaluate_text` gives."""
        getter = client or httpx
        answer = getter.get(
            self.base + "/api/v1/query", params={"query": expr, "time": repr(time_s)}, timeout=60
        )
        doc = answer.json()
        if doc.get("status") == "success":
            return dict(doc["data"])
        return {"errorType": doc.get("errorType"), "error": doc.get("error")}


class RegistryProcess(ChildProcess):
    """Debian's `docker-registry` (CNCF distribution) on loopback, storing in `workdir`.

    The real registry releases are pushed to and pulled from; no auth, deletes allowed.
    """

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        workdir.mkdir(parents=True, exist_ok=True)
        config = workdir / "config.yml"
        config.write_text(
            "version: 0.1\n"
            "log:\n  level: warn\n"
            f"storage:\n  filesystem:\n    rootdirectory: {workdir / 'data'}\n  delete:\n    enabled: true\n"
            f"http:\n  addr: 127.0.0.1:{self.port}\n"
        )
        super().__init__(
            ["docker-registry", "serve", str(config)],
            f"http://127.0.0.1:{self.port}",
            workdir / "registry.log",
        )

    def start(self) -> Self:
        """Started and answering: a push right after it must not find the port closed
        (under load the registry took longer to listen than the first push waited)."""
        super().start()
        try:
            self.wait_for("/v2/")
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"
