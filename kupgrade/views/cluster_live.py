"""The live view of a cluster: its Kubernetes API looked at every so often, each look
published to the console's page. Apart from `live_server.py`, which a fleet's rehearsal
also serves from, because reading a cluster's API brings in lightkube and the
controllers' state readers, which only `controller run` and `serve-api` need."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx

from kupgrade.errors import KupgradeError
from kupgrade.views.live import snapshot
from kupgrade.views.live_server import LiveServer

POLL_SECONDS = 0.25  # how often a cluster's API is looked at (real time)


class Poller:
    """Look every `every` seconds of real time and publish what is seen; a look that
    fails is published as the error (the page says the cluster cannot be read) and the
    next look tries again."""

    def __init__(
        self, look: Callable[[], dict[str, Any]], server: LiveServer, every: float
    ) -> None:
        self.look = look
        self.server = server
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="console poller")

    def _run(self) -> None:
        while not self._stop.is_set():
            began = time.monotonic()
            try:
                doc = self.look()
            except (KupgradeError, httpx.HTTPError, OSError) as exc:
                doc = {"kind": "error", "error": str(getattr(exc, "message", exc))}
            self.server.publish(doc)
            self._stop.wait(max(self.every - (time.monotonic() - began), 0.05))

    def __enter__(self) -> Poller:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop looking, after one last look: the page keeps the state the run ended in."""
        self._stop.set()
        self._thread.join(timeout=5)
        with suppress(KupgradeError, httpx.HTTPError, OSError):
            self.server.publish(self.look())


@contextmanager
def cluster_console(kubeconfig: Path, port: int = 0, fd: int | None = None) -> Iterator[LiveServer]:
    """The live view of the cluster a kubeconfig reaches, read through its Kubernetes API
    (as kubectl reads it) every POLL_SECONDS."""
    # Imported here: a cluster served by this process needs no client of lightkube's
    # until its console is asked for.
    from kupgrade.cluster.kube import KubeBackend  # noqa: PLC0415

    reader = KubeBackend(kubeconfig)
    with LiveServer(port, fd) as live, Poller(lambda: snapshot(reader), live, POLL_SECONDS):
        yield live


@contextmanager
def maybe_cluster_console(
    kubeconfig: Path, port: int | None, fd: int | None = None
) -> Iterator[LiveServer | None]:
    """The console of the cluster a kubeconfig reaches, on `port` (or the listening socket
    `fd`); nothing when no port is asked for."""
    if port is None:
        yield None
        return
    with cluster_console(kubeconfig, port, fd) as live:
        yield live
