"""Where independent rehearsals run: in this process one after another (`local`), or as
Ray tasks (`ray`), on a Ray instance started on this machine or on the Ray cluster at
`--address` (a KubeRay cluster's head, say).

Ray is an optional extra (`pip install 'kupgrade[ray]'`): it is imported only when asked
for. Its own start-up cannot be bounded (given an address that is not a Ray head, its
client retries, then ends the process from its C++ core), so the address is first asked,
within a few seconds, whether it speaks gRPC at all, as a Ray head's GCS does; anything
else is refused in one line before Ray starts.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from kupgrade.errors import InputError, KupgradeError

T = TypeVar("T")
R = TypeVar("R")
PROBE_SECONDS = 5.0
# The HTTP/2 connection preface and an empty SETTINGS frame (RFC 9113 section 3.4): a
# gRPC server (a Ray head's GCS, a Ray client server) answers with its SETTINGS frame.
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
SETTINGS = 4
ENGINES = ("local", "ray")


class Engine(Protocol):
    name: str

    def slots(self) -> int:
        """How many tasks run at once."""

    def map(
        self,
        fn: Callable[..., R],
        items: list[T],
        done: Callable[[int, int], None] | None = None,
        shared: Any = None,
    ) -> list[R]:
        """fn over items, results in the items' order; `done(finished, total)` as each
        one ends. With `shared`, fn(shared, item): what every item needs, sent once."""


class LocalEngine:
    """One after another in this process."""

    name = "local"

    def slots(self) -> int:
        return 1

    def map(
        self,
        fn: Callable[..., R],
        items: list[T],
        done: Callable[[int, int], None] | None = None,
        shared: Any = None,
    ) -> list[R]:
        out = []
        for item in items:
            out.append(fn(item) if shared is None else fn(shared, item))
            if done is not None:
                done(len(out), len(items))
        return out


CHUNKS_PER_CPU = 2


def run_chunk(fn: Callable[..., R], shared: Any, items: list[Any]) -> list[R]:
    """fn over a chunk of items, in a Ray task."""
    return [fn(item) if shared is None else fn(shared, item) for item in items]


class RayEngine:
    """Ray tasks, a few per CPU of the Ray cluster, each running a chunk of the items."""

    name = "ray"

    def __init__(self, address: str | None = None) -> None:
        self.address = address
        self._ray: Any = None

    def start(self) -> Any:
        if self._ray is not None:
            return self._ray
        try:
            import ray  # noqa: PLC0415 (optional: only this engine needs it)
        except ImportError:
            raise InputError(
                "Ray is not installed",
                field="--engine",
                hint="install it with `pip install 'kupgrade[ray]'`, or use --engine local",
            ) from None
        if self.address not in (None, "auto", "local"):
            probe(self.address)
        os.environ.setdefault("RAY_DEDUP_LOGS", "0")
        try:
            ray.init(
                address=self.address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,
                ignore_reinit_error=True,
                configure_logging=True,
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise InputError(
                f"cannot start Ray at {self.address or 'this machine'}: {first}",
                field="--address",
                hint="start a Ray head with `ray start --head`, or leave --address out "
                "to run Ray on this machine",
            ) from None
        self._ray = ray
        return ray

    def slots(self) -> int:
        return max(1, int(self.start().cluster_resources().get("CPU", 1)))

    def map(
        self,
        fn: Callable[..., R],
        items: list[T],
        done: Callable[[int, int], None] | None = None,
        shared: Any = None,
    ) -> list[R]:
        ray = self.start()
        if not items:
            return []
        # Strided chunks, a few per CPU: a task start costs milliseconds and a worker's
        # first task its imports, so a thousand short runs go as a few tasks, and runs
        # alike (one setting's seeds) are spread over them rather than piled in one.
        count = min(len(items), CHUNKS_PER_CPU * self.slots())
        chunks = [items[i::count] for i in range(count)]
        task = ray.remote(run_chunk)
        once = ray.put(shared) if shared is not None else None  # sent once, not per task
        refs = [task.remote(fn, once, chunk) for chunk in chunks]
        size = {ref: len(chunk) for ref, chunk in zip(refs, chunks, strict=True)}
        left, finished = list(refs), 0
        while left:
            ready, left = ray.wait(left, num_returns=1)
            finished += sum(size[r] for r in ready)
            if done is not None:
                done(finished, len(items))
        try:
            results = ray.get(refs)
            return [results[i % count][i // count] for i in range(len(items))]
        except ray.exceptions.RayTaskError as exc:
            cause = exc.as_instanceof_cause()
            if isinstance(cause, KupgradeError):
                raise KupgradeError(cause.message, hint=cause.hint) from None
            raise KupgradeError(
                f"a Ray task failed: {str(exc.cause or exc).strip().splitlines()[-1]}",
                hint="run the same command with --engine local to see it in this process",
            ) from None

    def stop(self) -> None:
        if self._ray is not None:
            with contextlib.suppress(Exception):
                self._ray.shutdown()


def probe(address: str) -> None:
    """Refuse, within PROBE_SECONDS, an address where no gRPC server answers."""
    bare = address.removeprefix("ray://")
    host, sep, port = bare.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise InputError(
            f"--address {address!r} is not HOST:PORT",
            field="--address",
            hint="the Ray head's address, e.g. 10.0.0.5:6379 or ray://head:10001",
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), PROBE_SECONDS) as conn:
            conn.settimeout(PROBE_SECONDS)
            conn.sendall(PREFACE)
            header = _read(conn, 9)
    except OSError as exc:
        raise InputError(
            f"cannot reach a Ray head at {address}: {exc.strerror or exc}",
            field="--address",
            hint="start one with `ray start --head`, or leave --address out to run Ray "
            "on this machine",
        ) from None
    if len(header) < 9 or header[3] != SETTINGS:
        raise InputError(
            f"{address} answers, but not as a Ray head (no gRPC server there)",
            field="--address",
            hint="give the head's GCS port (6379 by default) or its client port (ray://HOST:10001)",
        )


def _read(conn: socket.socket, size: int) -> bytes:
    got = b""
    while len(got) < size:
        chunk = conn.recv(size - len(got))
        if not chunk:
            break
        got += chunk
    return got


def engine_named(name: str, address: str | None) -> Engine:
    if name not in ENGINES:
        raise InputError(
            f"unknown engine {name!r}", field="--engine", hint=f"one of {', '.join(ENGINES)}"
        )
    if name == "local":
        if address is not None:
            raise InputError(
                "--address names a Ray cluster: it goes with --engine ray",
                field="--address",
                hint="add --engine ray, or leave --address out",
            )
        return LocalEngine()
    return RayEngine(address)
