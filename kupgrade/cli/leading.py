"""`controller run --leader-elect`: the options, and the lease held around a run."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated

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
    main thread is interrupted too, so the run stops at once)."""
    if lead is None:
        yield None
        return
    identity = lead.identity or default_identity()
    where = f"{lead.namespace}/{lead.name}"
    http = api.session()
    # The audit log names the writer: kube-apiserver records each request's userAgent.
    http.headers["User-Agent"] = f"kupgrade-controller/{identity}"
    elector = Elector(ApiLease(http, lead.namespace, lead.name, api.where), identity, lead.timings)
    leadership = Leadership(elector, where, lambda line: stderr.print(line, highlight=False))

    def guard(request: httpx.Request) -> None:
        if request.method in WRITES and not request.url.path.startswith(LEASE_PATH):
            leadership.check()

    def lost() -> None:
        # A real SIGINT, not _thread.interrupt_main: it also ends a sleep (--speed).
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    leadership.on_lost = lost
    leadership.acquire()
    http.event_hooks["request"].append(guard)
    try:
        try:
            yield leadership
        finally:  # inside the outer try: an interrupt sent before stop() is caught too
            leadership.stop(release=leadership.lost is None)
    except KeyboardInterrupt:
        if leadership.lost is not None:
            raise LostLeaseError(
                f"{leadership.lost}; stopping", hint="another replica acts now"
            ) from None
        raise
