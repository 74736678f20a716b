"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does
(kubernetes/client-go tools/leaderelection/leaderelection.go, resourcelock/leaselock.go),
so that of several `controller run --leader-elect` replicas exactly one acts.

The rule (tryAcquireOrRenew): read the Lease; none, create it as ours. Otherwise note
when its record last changed by this process's own clock (observedTime: clocks of
different machines are never compared); a record held by another identity whose
leaseDurationSeconds have not passed since that observation is left alone. Else write
ours with the record's resourceVersion: the API server refuses the write with a 409 when
another candidate wrote first, so two never both win. A holder keeps acquireTime and the
transition count; a new holder counts one more transition.

The holder renews every retry period; when no renewal succeeded for the renew deadline
(shorter than the lease duration) it stops acting, before any other candidate can have
seen the lease expire. Timings as client-go's defaults (and kube-controller-manager's):
lease duration 15 s, renew deadline 10 s, retry period 2 s; NewLeaderElector's checks.
"""

from __future__ import annotations

import contextlib
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from kupgrade.errors import InputError, KupgradeError

JITTER = 1.2  # client-go's JitterFactor
LEASE_PATH = "/apis/coordination.k8s.io/v1"


@dataclass(frozen=True)
class Timings:
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def check(self) -> Timings:
        """NewLeaderElector's checks, each one line naming the flag."""
        if self.lease_duration <= self.renew_deadline:
            raise InputError(
                "--lease-duration must be greater than --renew-deadline",
                field="--lease-duration",
                hint="client-go's defaults are 15s, 10s and 2s",
            )
        if self.renew_deadline <= JITTER * self.retry_period:
            raise InputError(
                f"--renew-deadline must be greater than --retry-period × {JITTER}",
                field="--renew-deadline",
                hint="client-go's defaults are 15s, 10s and 2s",
            )
        if min(self.lease_duration, self.renew_deadline, self.retry_period) <= 0:
            raise InputError(
                "lease timings must be greater than zero",
                field="--retry-period",
                hint="client-go's defaults are 15s, 10s and 2s",
            )
        return self


@dataclass(frozen=True)
class Record:
    """LeaderElectionRecord, as a Lease's spec holds it."""

    holder: str
    duration: int
    acquire: str
    renew: str
    transitions: int

    @classmethod
    def of(cls, spec: dict[str, Any]) -> Record:
        return cls(
            str(spec.get("holderIdentity") or ""),
            int(spec.get("leaseDurationSeconds") or 0),
            str(spec.get("acquireTime") or ""),
            str(spec.get("renewTime") or ""),
            int(spec.get("leaseTransitions") or 0),
        )

    def spec(self) -> dict[str, Any]:
        return {
            "holderIdentity": self.holder,
            "leaseDurationSeconds": self.duration,
            "acquireTime": self.acquire,
            "renewTime": self.renew,
            "leaseTransitions": self.transitions,
        }


class LeaseStore(Protocol):
    """The Lease's reads and writes; a write returns False when another writer won (409)."""

    def get(self) -> tuple[Record, str] | None: ...

    def create(self, record: Record) -> bool: ...

    def update(self, record: Record, version: str) -> bool: ...


def micro_time(at: float) -> str:
    """metav1.MicroTime as the API writes it (RFC 3339 with microseconds, UTC)."""
    whole = time.gmtime(int(at))
    return time.strftime("%Y-%m-%dT%H:%M:%S", whole) + f".{int(at % 1 * 1e6):06d}Z"


def default_identity() -> str:
    """hostname_uuid, as controller-runtime's and kube-controller-manager's ids."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class Elector:
    """tryAcquireOrRenew over a LeaseStore; `clock` is this process's monotonic clock,
    `wall` the time written into the record."""

    def __init__(
        self,
        store: LeaseStore,
        identity: str,
        timings: Timings,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.identity = identity
        self.timings = timings
        self.clock = clock
        self.wall = wall
        self.observed: Record | None = None
        self.observed_at = 0.0
        self.renewed_at: float | None = None  # our last successful write (clock)

    def is_leader(self) -> bool:
        return self.observed is not None and self.observed.holder == self.identity

    def holder(self) -> str:
        return self.observed.holder if self.observed is not None else ""

    def valid(self) -> bool:
        """Whether this process may act now: it holds the lease and renewed it within
        the renew deadline (by its own clock)."""
        return (
            self.is_leader()
            and self.renewed_at is not None
            and self.clock() - self.renewed_at < self.timings.renew_deadline
        )

    def try_acquire_or_renew(self) -> bool:
        now = micro_time(self.wall())
        desired = Record(self.identity, round(self.timings.lease_duration), now, now, 0)
        found = self.store.get()
        if found is None:
            if not self.store.create(desired):
                return False
            return self._won(desired)
        old, version = found
        if old != self.observed:
            self.observed, self.observed_at = old, self.clock()
        if old.holder and self.observed_at + old.duration > self.clock() and not self.is_leader():
            return False  # held by another, not yet expired by our observation
        if self.is_leader():
            desired = replace(desired, acquire=old.acquire, transitions=old.transitions)
        else:
            desired = replace(desired, transitions=old.transitions + 1)
        if not self.store.update(desired, version):
            return False
        return self._won(desired)

    def _won(self, record: Record) -> bool:
        self.observed, self.observed_at = record, self.clock()
        self.renewed_at = self.observed_at
        return True

    def release(self) -> bool:
        """Give the lease up (ReleaseOnCancel): holder empty, a one-second duration."""
        if not self.valid():
            return False
        found = self.store.get()
        if found is None or found[0].holder != self.identity:
            return False
        now = micro_time(self.wall())
        gone = Record("", 1, now, now, found[0].transitions)
        if self.store.update(gone, found[1]):
            self.observed, self.observed_at, self.renewed_at = gone, self.clock(), None
            return True
        return False


class LostLeaseError(KupgradeError):
    """This process no longer holds the lease: it must not write."""


class Leadership:
    """An Elector driven in time: `acquire` blocks until the lease is ours; a thread
    renews it every retry period; `check` refuses a write once it is not valid."""

    def __init__(self, elector: Elector, where: str, said: Callable[[str], None]) -> None:
        self.elector = elector
        self.where = where
        self.said = said
        self.lost: str | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._stopping = False  # once set, losing the lease no longer interrupts anyone
        self._thread: threading.Thread | None = None
        self.on_lost: Callable[[], None] = lambda: None

    def _sleep(self, jitter: float = 0.0) -> bool:
        """One retry period (plus up to `jitter` times it, as wait.Jitter); True when
        asked to stop."""
        period = self.elector.timings.retry_period
        return self._stop.wait(period * (1 + random.random() * jitter))

    def acquire(self) -> None:
        told = ""
        while not self.elector.try_acquire_or_renew():
            holder = self.elector.holder()
            if holder and holder != told:
                self.said(f"waiting for lease {self.where} held by {holder}")
                told = holder
            if self._sleep(JITTER):  # acquire: wait.JitterUntil(RetryPeriod, JitterFactor)
                raise LostLeaseError(f"stopped before taking the lease {self.where}")
        self.said(f"took the lease {self.where} as {self.elector.identity}")
        self._thread = threading.Thread(target=self._renew, name="lease-renewal", daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        while not self._sleep():  # renew: wait.Until(RetryPeriod), no jitter
            try:
                renewed = self.elector.try_acquire_or_renew()
            except KupgradeError:
                renewed = False  # the API server unreachable: retried until the deadline
            if not renewed and not self.elector.valid():
                with self._lock:
                    if self.lost is None and not self._stopping:
                        self.lost = self._why()
                        self.on_lost()
                return

    def _why(self) -> str:
        holder = self.elector.holder()
        if holder and holder != self.elector.identity:
            return f"lost the lease {self.where} to {holder}"
        return (
            f"lost the lease {self.where}: not renewed within "
            f"{self.elector.timings.renew_deadline:g}s"
        )

    def check(self) -> None:
        """Before a write: refused unless the lease is ours and fresh."""
        with self._lock:
            if self.lost is None and not self.elector.valid():
                self.lost = self._why()
                self._stop.set()  # the renewals end too; the write below is refused
        if self.lost is not None:
            raise LostLeaseError(f"{self.lost}; stopping", hint="another replica acts now")

    def stop(self, release: bool = True) -> None:
        with self._lock:
            self._stopping = True
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if release and self.lost is None:
            with contextlib.suppress(KupgradeError):  # else it expires on its own
                self.elector.release()


class ApiLease:
    """The Lease NAMESPACE/NAME through a Kubernetes API (resourcelock/leaselock.go):
    GET, POST to create, PUT with the read resourceVersion to update; 409 is a lost race."""

    def __init__(self, http: Any, namespace: str, name: str, where: str) -> None:
        self.http = http
        self.namespace = namespace
        self.name = name
        self.where = where
        self.collection = f"{LEASE_PATH}/namespaces/{namespace}/leases"

    def _send(self, method: str, path: str, body: Any = None) -> Any:
        try:
            response = self.http.request(method, path, json=body)
        except Exception as exc:  # httpx's errors, and a lost connection
            raise KupgradeError(f"cannot reach the API server of {self.where}: {exc}") from None
        if response.status_code == 403:
            raise InputError(
                f"the API server of {self.where} forbids the Lease "
                f"{self.namespace}/{self.name}: {response.json().get('message', '')}",
                hint="grant get, create and update on leases.coordination.k8s.io in "
                f"namespace {self.namespace} (deploy/controller/rbac.yaml)",
            )
        return response

    def _body(self, record: Record, version: str | None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": self.name, "namespace": self.namespace}
        if version is not None:
            meta["resourceVersion"] = version
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": meta,
            "spec": record.spec(),
        }

    def get(self) -> tuple[Record, str] | None:
        response = self._send("GET", f"{self.collection}/{self.name}")
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise KupgradeError(
                f"cannot read the Lease: {response.status_code} {response.text[:200]}"
            )
        doc = response.json()
        return Record.of(doc.get("spec") or {}), str(doc["metadata"].get("resourceVersion", ""))

    def create(self, record: Record) -> bool:
        response = self._send("POST", self.collection, self._body(record, None))
        if response.status_code == 409:
            return False
        if response.status_code not in (200, 201):
            raise KupgradeError(
                f"cannot create the Lease: {response.status_code} {response.text[:200]}"
            )
        return True

    def update(self, record: Record, version: str) -> bool:
        response = self._send("PUT", f"{self.collection}/{self.name}", self._body(record, version))
        if response.status_code == 409:
            return False
        if response.status_code != 200:
            raise KupgradeError(
                f"cannot update the Lease: {response.status_code} {response.text[:200]}"
            )
        return True
