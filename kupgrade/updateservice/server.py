"""Running the update service under Granian (a Rust HTTP server with an ASGI interface).

Granian imports the application in its worker process, so the configuration travels in
an environment variable and `create_app` is the factory it calls there.
"""

from __future__ import annotations

import errno
import json
import logging
import logging.config
import os
import shutil
import socket
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kupgrade.errors import KupgradeError
from kupgrade.updateservice.app import DEFAULT_PREFIX, UpdateService, normalize_prefix
from kupgrade.updateservice.builder import DEFAULT_KEEP, BuilderState
from kupgrade.updateservice.metrics import ServiceMetrics
from kupgrade.updateservice.rebuild import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S
from kupgrade.updateservice.replica import ReplicaState, newest
from kupgrade.updateservice.snapshot_stores import DirectoryStore, open_store
from kupgrade.updateservice.state import GraphState, ServedState

CONFIG_ENV = "KUPGRADE_SERVE_CONFIG"
# How long a client may take to send a request's headers before the connection is closed
# (half-open and slow-loris connections must not hold the server's slots).
DEFAULT_READ_TIMEOUT_S = 10.0


ROLES = ("all", "builder", "replica")


@dataclass(frozen=True, slots=True)
class ServeConfig:
    releases: str = ""
    graph_data: str = ""
    host: str = "127.0.0.1"
    port: int = 8080
    path_prefix: str = DEFAULT_PREFIX
    refresh: float = 300.0
    log_format: str = "text"
    build_timeout: float = DEFAULT_TIMEOUT_S
    build_memory_mb: int = DEFAULT_MEMORY_MB
    read_timeout: float = DEFAULT_READ_TIMEOUT_S
    workers: int = 1
    metrics_dir: str = ""  # set by `serve` when workers share one metrics view
    role: str = "all"  # build and serve; `builder` also publishes; `replica` serves snapshots
    snapshots: str = ""  # a directory or REGISTRY/REPO (builder and replica)
    keep: int = DEFAULT_KEEP
    plain_http: bool = False

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_env() -> ServeConfig:
        raw = os.environ.get(CONFIG_ENV)
        if not raw:
            raise KupgradeError(f"{CONFIG_ENV} is not set; start the service with `kupgrade serve`")
        return ServeConfig(**json.loads(raw))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        return json.dumps(doc, ensure_ascii=False)


def logging_config(log_format: str) -> dict[str, Any]:
    """A dictConfig for our loggers and Granian's, in text or JSON lines on stderr."""
    formatter: dict[str, Any] = (
        {"()": f"{__name__}.JsonFormatter"}
        if log_format == "json"
        else {
            "format": "%(asctime)s %(levelname)s %(name)s: %(message)s",
            "datefmt": "%Y-%m-%dT%H:%M:%S",
        }
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"default": formatter},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "default",
                "stream": "ext://sys.stderr",
            }
        },
        "loggers": {
            "kupgrade": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
            "_granian": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
            "granian.access": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        },
    }


def create_app() -> UpdateService:
    """Granian's factory: build the application from the environment (in the worker)."""
    config = ServeConfig.from_env()
    logging.config.dictConfig(logging_config(config.log_format))
    return UpdateService(served_state(config), config.path_prefix)


def served_state(config: ServeConfig) -> ServedState:
    """What the role serves from: inputs built here, and published (builder), or
    snapshots loaded (replica)."""
    metrics = ServiceMetrics(config.metrics_dir or None)
    if config.role == "replica":
        return ReplicaState(
            open_store(config.snapshots, plain_http=config.plain_http), config.refresh, metrics
        )
    releases, graph_data = Path(config.releases), Path(config.graph_data)
    if config.role == "builder":
        return BuilderState(
            releases,
            graph_data,
            config.refresh,
            metrics,
            open_store(config.snapshots, plain_http=config.plain_http),
            keep=config.keep,
            build_timeout=config.build_timeout,
            build_memory_mb=config.build_memory_mb,
        )
    return GraphState(
        releases,
        graph_data,
        config.refresh,
        metrics,
        build_timeout=config.build_timeout,
        build_memory_mb=config.build_memory_mb,
    )


def check_port(host: str, port: int) -> None:
    """Fail early with a clear message when the address cannot be bound, naming the option
    at fault: a host that does not resolve or is not this machine's is --host's problem;
    a port in use or not allowed is --port's."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise KupgradeError(
            f"cannot resolve {host!r}: {getattr(exc, 'strerror', None) or exc}",
            field="--host",
            hint="give an address of this machine, e.g. 127.0.0.1, ::1 or 0.0.0.0",
        ) from None
    try:
        with socket.create_server((host, port), family=family):
            pass
    except OSError as exc:
        if exc.errno == errno.EADDRNOTAVAIL:
            raise KupgradeError(
                f"cannot listen on {host}: {exc.strerror or exc}",
                field="--host",
                hint="give an address of this machine, e.g. 127.0.0.1, ::1 or 0.0.0.0",
            ) from None
        raise KupgradeError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            field="--port",
            hint="choose another --port or stop the process using it",
        ) from None


def check_role(config: ServeConfig, *, wait_for_snapshot: bool = False) -> None:
    """The options each role needs, and, for a replica that may not wait, a whole snapshot
    at its source now: every mistake is one line before anything listens."""
    builds = config.role in ("all", "builder")
    for given, option in ((config.releases, "--releases"), (config.graph_data, "--graph-data")):
        if builds and not given:
            raise KupgradeError(f"--role {config.role} builds the graph: give {option}")
        if not builds and given:
            raise KupgradeError(
                f"a replica serves what the builder published and reads no {option}",
                field=option,
                hint="give it to the builder (--role builder), or drop it",
            )
    if config.role == "all":
        if config.snapshots:
            raise KupgradeError(
                "only --role builder and --role replica use snapshots", field="--snapshots"
            )
        return
    if not config.snapshots:
        raise KupgradeError(f"--role {config.role} needs --snapshots DIR or REGISTRY/REPO")
    store = open_store(config.snapshots, plain_http=config.plain_http)
    if config.role == "builder":
        if config.workers > 1:
            raise KupgradeError(
                "one builder process publishes the snapshots",
                field="--workers",
                hint="run replicas (--role replica) to serve on more cores",
            )
        if isinstance(store, DirectoryStore):
            try:
                store.root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise KupgradeError(
                    f"cannot create {store.root}: {exc.strerror or exc}",
                    field="--snapshots",
                    hint="give a writable directory",
                ) from None
    elif not wait_for_snapshot:
        newest(store)


def serve(config: ServeConfig, *, wait_for_snapshot: bool = False) -> None:
    """Run until interrupted (SIGINT/SIGTERM)."""
    if config.refresh <= 0:
        raise KupgradeError("must be a positive number of seconds", field="--refresh")
    check_role(config, wait_for_snapshot=wait_for_snapshot)
    check_port(config.host, config.port)
    shared = tempfile.mkdtemp(prefix="kupgrade-metrics-") if config.workers > 1 else ""
    config = ServeConfig(
        **{
            **asdict(config),
            "path_prefix": normalize_prefix(config.path_prefix),
            "metrics_dir": shared,
        }
    )
    os.environ[CONFIG_ENV] = config.to_env()
    try:
        _run(config)
    finally:
        if shared:
            shutil.rmtree(shared, ignore_errors=True)


def _run(config: ServeConfig) -> None:
    # Granian and its runtime load only when serving: every other command starts faster.
    from granian import Granian  # noqa: PLC0415
    from granian.constants import HTTPModes, Interfaces, Loops, TaskImpl  # noqa: PLC0415
    from granian.http import HTTP1Settings  # noqa: PLC0415

    server = Granian(
        f"{__name__}:create_app",
        factory=True,
        address=config.host,
        port=config.port,
        interface=Interfaces.ASGI,
        http=HTTPModes.http1,
        http1_settings=HTTP1Settings(header_read_timeout=round(config.read_timeout * 1000)),
        websockets=False,
        # Each worker serves the same port (SO_REUSEPORT) and refreshes its own graph;
        # their metrics are written to config.metrics_dir and added up by whichever answers.
        workers=config.workers,
        # uvloop serves ~10% more requests per second than asyncio on the graph route
        # (bench/). Granian's experimental Rust task implementation would add more but
        # breaks Starlette's futures ("Future object is not initialized").
        loop=Loops.uvloop,
        task_impl=TaskImpl.asyncio,
        respawn_failed_workers=True,
        log_dictconfig=logging_config(config.log_format),
    )
    sys.stderr.flush()
    server.serve()
