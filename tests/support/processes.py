"""The servers tests and benchmarks run beside kupgrade, as child processes on loopback:
a real Prometheus (the PromQL engine's reference), Debian's docker-registry (where
releases are pushed to and pulled from) and kupgrade's own `cluster serve-api`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

import httpx

from kupgrade.errors import KupgradeError
from kupgrade.updateservice.process import ChildProcess, free_port


class PrometheusProcess(ChildProcess):
    """A real Prometheus on loopback holding metrics snapshots backfilled with promtool.

    The reference our PromQL engine is checked against: each snapshot goes through
    `promtool tsdb create-blocks-from openmetrics`, exactly as an operator would load one.
    """

    def __init__(
        self, workdir: Path, evaluation_interval: str = "1m", rules: str | None = None
    ) -> None:
        self.port = free_port()
        self.data = workdir / "data"
        config = workdir / "prometheus.yml"
        workdir.mkdir(parents=True, exist_ok=True)
        # No scrape targets; the interval is the default step of subqueries (and how often
        # the alerting `rules`, a rule file's text, are evaluated).
        text = f"global:\n  evaluation_interval: {evaluation_interval}\n"
        if rules is not None:
            (workdir / "rules.yml").write_text(rules)
            text += f"rule_files:\n  - {workdir / 'rules.yml'}\n"
        config.write_text(text)
        command = [
            "prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={self.data}",
            "--storage.tsdb.retention.time=100y",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--log.level=warn",
        ]
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


@contextmanager
def served_api(
    home: Path, name: str, *flags: str, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], dict[str, Any]]]:
    """`kupgrade cluster serve-api NAME FLAGS -o json` on a cluster of `home`, in its own
    process until the caller is done (then stopped as a user's ^C would): the process and
    what it said when it started (its server, kubeconfig, ...). `env` is the environment
    it starts from (this process's by default). Its log goes to a file, so
    a chatty server never blocks on a full pipe."""
    log = home / f"serve-api-{name}.log"
    home.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "kupgrade", "cluster", "serve-api", name, *flags, "-o", "json"],
            env={**(os.environ if env is None else env), "KUPGRADE_HOME": str(home)},
            stdout=subprocess.PIPE,
            stderr=errors,
        )
    try:
        assert process.stdout is not None
        said = b""
        while not said.endswith(b"}\n"):
            line = process.stdout.readline()
            if not line:
                raise AssertionError(f"serve-api ended: {log.read_text(errors='replace')}")
            said += line
        yield process, json.loads(said)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
