"""`controller run --leader-elect`: the options, and the lease held around a run."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import httpx
import typer

from kupgrade.cli.output import stderr
from kupgrade.cluster.leader import (
    LEASE_PATH,
    ApiLease,
    Elector,
    Leadership,
    LostLeaseError,
    Timings,
    default_identity,
)
from kupgrade.errors import KupgradeError

if TYPE_CHECKING:  # lightkube's client: imported where a command reaches a server
    from kupgrade.cluster.remote import InformedBackend

LeaderElectOpt = Annotated[
    bool,
    typer.Option(
        "--leader-elect",
        help="Act only while holding a coordination.k8s.io Lease, so that of several "
        "replicas one acts (as every controller manager does).",
    ),
]
LeaseNamespaceOpt = Annotated[
    str,
    typer.Option("--lease-namespace", help="--leader-elect: the Lease's namespace."),
]
LeaseNameOpt = Annotated[
    str, typer.Option("--lease-name", help="--leader-elect: the Lease's name.")
]
IdentityOpt = Annotated[
    str | None,
    typer.Option(
        "--identity", help="--leader-elect: this replica's holder identity (default: host_uuid)."
    ),
]
LeaseDurationOpt = Annotated[
    float,
    typer.Option(
        "--lease-duration", help="--leader-elect: seconds others wait for an unrenewed lease."
    ),
]
RenewDeadlineOpt = Annotated[
    float,
    typer.Option(
        "--renew-deadline",
        help="--leader-elect: seconds the holder tries to renew before it stops.",
    ),
]
RetryPeriodOpt = Annotated[
    float,
    typer.Option("--retry-period", help="--leader-elect: seconds between tries."),
]
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class Lead:
    namespace: str
    name: str
    identity: str | None
    timings: Timings


@contextmanager
def leading(api: InformedBackend, lead: Lead | None) -> Iterator[Leadership | None]:
    """The lease taken before anything is written, renewed while the body runs, and
    released at its end; every write through `api` refused once the lease is lost (the
    main thread is interrupted too, so the run stops at once). SIGTERM (a pod deleted, a
    rollout) ends the run and releases the lease, so the other replica takes it at once
    rather than after the lease duration (client-go's ReleaseOnCancel)."""
    if lead is None:
        yield None
        return
    identity = lead.identity or default_identity()
    where = f"{lead.namespace}/{lead.name}"
    http = api.session()
    # The audit log names the writer: kube-apiserver records each request's userAgent.
    http.headers["User-Agent"] = f"kupgrade-controller/{identity}"
    store = ApiLease(http, lead.namespace, lead.name, api.where, lead.timings.renew_deadline)
    elector = Elector(store, identity, lead.timings)
    leadership = Leadership(elector, where, lambda line: stderr.print(line, highlight=False))
    terminated = threading.Event()

    def guard(request: httpx.Request) -> None:
        if request.method in WRITES and not request.url.path.startswith(LEASE_PATH):
            leadership.check()

    def lost() -> None:
        # A real SIGINT, not _thread.interrupt_main: it also ends a sleep (--speed).
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    def term(_signum: int, _frame: object) -> None:
        terminated.set()
        raise KeyboardInterrupt

    leadership.on_lost = lost
    previous = signal.signal(signal.SIGTERM, term)
    released = False
    try:
        try:
            leadership.acquire()
            http.event_hooks["request"].append(guard)
            yield leadership
        finally:  # inside the outer try: an interrupt sent before stop() is caught too
            released = leadership.stop(release=leadership.lost is None)
            signal.signal(signal.SIGTERM, previous)
    except KeyboardInterrupt:
        if leadership.lost is not None:
            raise LostLeaseError(f"{leadership.lost}; stopping") from None
        if terminated.is_set():
            said = "released the lease" if released else "did not hold the lease"
            raise TerminatedError(f"stopped by SIGTERM; {said} {where}") from None
        raise


class TerminatedError(KupgradeError):
    """SIGTERM ended the run (a pod deleted): not a failure, said in one line."""

    code = 128 + signal.SIGTERM  # as a shell reports a process SIGTERM ended
