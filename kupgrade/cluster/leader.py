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
import re
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


LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def check_lease_names(namespace: str, name: str) -> None:
    """The API server's own checks, before any request: a namespace is a DNS-1123 label,
    a Lease's name a DNS-1123 subdomain (apimachinery's validation)."""
    if len(namespace) > 63 or not LABEL.fullmatch(namespace):
        raise InputError(
            f"--lease-namespace {namespace!r} is not a namespace name",
            field="--lease-namespace",
            hint="lower-case letters, digits and '-', at most 63, as kube-system",
        )
    if len(name) > 253 or not all(LABEL.fullmatch(part) for part in name.split(".")):
        raise InputError(
            f"--lease-name {name!r} is not an object name",
            field="--lease-name",
            hint="lower-case letters, digits, '-' and '.', at most 253, as kupgrade-controller",
        )


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
    """The Lease's reads and writes, as resourcelock.Interface: `get` and `create` keep
    the object they saw, `update` writes over the one kept (its resourceVersion), so a
    write returns False when another writer came between (the API server's 409)."""

    def get(self) -> Record | None: ...

    def create(self, record: Record) -> bool: ...

    def update(self, record: Record) -> bool: ...


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

    def lease_valid(self, now: float) -> bool:
        """isLeaseValid: the observed record's leaseDurationSeconds have not passed since
        this process observed it."""
        return self.observed is not None and self.observed_at + self.observed.duration > now

    def try_acquire_or_renew(self) -> bool:
        """tryAcquireOrRenew, branch by branch. `start` is taken before any request: the
        holder counts its renew deadline from it, so that whatever the request took, the
        server's write (and so any other candidate's observation of it) came later."""
        start = self.clock()
        now = micro_time(self.wall())
        desired = Record(self.identity, int(self.timings.lease_duration), now, now, 0)
        # 1. Fast path: the leader updates the Lease it last wrote, assuming it is still
        # the current version (a 409 says it is not: the slow path reads it again).
        if self.is_leader() and self.lease_valid(start) and self.observed is not None:
            mine = replace(
                desired, acquire=self.observed.acquire, transitions=self.observed.transitions
            )
            if self.store.update(mine):
                return self._won(mine, start)
        # 2. Read the record, or create it when there is none.
        old = self.store.get()
        if old is None:
            if not self.store.create(desired):
                return False
            return self._won(desired, start)
        # 3. A record that changed since the last look is observed now, by our clock.
        if old != self.observed:
            self.observed, self.observed_at = old, self.clock()
        if old.holder and self.lease_valid(start) and not self.is_leader():
            return False  # held by another, not yet expired by our observation
        # 4. Ours: keep acquireTime and the count; another's (expired or released): one
        # more transition.
        if self.is_leader():
            desired = replace(desired, acquire=old.acquire, transitions=old.transitions)
        else:
            desired = replace(desired, transitions=old.transitions + 1)
        if not self.store.update(desired):
            return False
        return self._won(desired, start)

    def _won(self, record: Record, start: float) -> bool:
        self.observed, self.observed_at = record, self.clock()
        self.renewed_at = start
        return True

    def release(self) -> bool:
        """Give the lease up (release, with ReleaseOnCancel): holder empty, a one-second
        duration, written over the Lease last written. Only while the lease is valid: once
        it is not, this process writes nothing more, the Lease included (it expires)."""
        if not self.valid() or self.observed is None:
            return False
        now = micro_time(self.wall())
        gone = Record("", 1, now, now, self.observed.transitions)
        if not self.store.update(gone):
            return False
        self.observed, self.observed_at, self.renewed_at = gone, self.clock(), None
        return True


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
        self._failed = ""  # the last failure said while waiting (said once)

    def _sleep(self, jitter: float = 0.0) -> bool:
        """One retry period (plus up to `jitter` times it, as wait.Jitter); True when
        asked to stop."""
        period = self.elector.timings.retry_period
        return self._stop.wait(period * (1 + random.random() * jitter))

    def acquire(self) -> None:
        """acquire: try every retry period (jittered) until the lease is ours, saying once
        who holds it; a passing API failure is retried as client-go does, a refusal
        (403, InputError) ends the wait."""
        told = ""
        while not self._try_acquire():
            holder = self.elector.holder()
            if holder and holder != told:
                self.said(f"waiting for lease {self.where} held by {holder}")
                told = holder
            if self._sleep(JITTER):  # acquire: wait.JitterUntil(RetryPeriod, JitterFactor)
                raise LostLeaseError(f"stopped before taking the lease {self.where}")
        self.said(f"took the lease {self.where} as {self.elector.identity}")
        self._thread = threading.Thread(target=self._renew, name="lease-renewal", daemon=True)
        self._thread.start()

    def _try_acquire(self) -> bool:
        try:
            return self.elector.try_acquire_or_renew()
        except InputError:
            raise
        except KupgradeError as exc:
            line = f"cannot take the lease {self.where} yet: {exc}; retrying"
            if line != self._failed:
                self.said(line)
                self._failed = line
            return False

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
            raise LostLeaseError(f"{self.lost}; stopping")

    def stop(self, release: bool = True) -> bool:
        """End the renewals and (while the lease is still valid) release it; True when
        released."""
        with self._lock:
            self._stopping = True
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.elector.timings.renew_deadline)
        if release and self.lost is None:
            with contextlib.suppress(KupgradeError):  # else it expires on its own
                return self.elector.release()
        return False


class ApiLease:
    """The Lease NAMESPACE/NAME through a Kubernetes API, as resourcelock/leaselock.go's
    LeaseLock: Get and Create keep the object the server answered; Update writes that
    object back (its metadata, resourceVersion included) with the new spec, and keeps
    the answer. A 409 is a lost race; the requests end within `timeout` (client-go bounds
    a renewal by the renew deadline's context)."""

    def __init__(
        self, http: Any, namespace: str, name: str, where: str, timeout: float = 10.0
    ) -> None:
        self.http = http
        self.namespace = namespace
        self.name = name
        self.where = where
        self.timeout = timeout
        self.collection = f"{LEASE_PATH}/namespaces/{namespace}/leases"
        self.lease: dict[str, Any] | None = None

    def _send(self, method: str, path: str, body: Any = None) -> Any:
        try:
            response = self.http.request(method, path, json=body, timeout=self.timeout)
        except Exception as exc:  # httpx's errors, and a lost connection
            raise KupgradeError(f"cannot reach the API server of {self.where}: {exc}") from None
        if response.status_code == 403:
            raise InputError(
                f"the API server of {self.where} forbids the Lease "
                f"{self.namespace}/{self.name}: {_message(response)}",
                hint="grant get, create and update on leases.coordination.k8s.io in "
                f"namespace {self.namespace} (deploy/controller/rbac.yaml)",
            )
        return response

    def _kept(self, response: Any, what: str) -> None:
        code = response.status_code
        if code in (200, 201):
            self.lease = response.json()
            return
        line = f"cannot {what} the Lease {self.namespace}/{self.name}: {code} {_message(response)}"
        if 400 <= code < 500 and code != 429:  # refused as asked: asking again changes nothing
            raise InputError(line, hint=f"the API server of {self.where}")
        raise KupgradeError(line)  # the server's trouble (5xx, 429): tried again

    def get(self) -> Record | None:
        response = self._send("GET", f"{self.collection}/{self.name}")
        if response.status_code == 404:
            return None
        self._kept(response, "read")
        return Record.of((self.lease or {}).get("spec") or {})

    def create(self, record: Record) -> bool:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.spec(),
        }
        response = self._send("POST", self.collection, body)
        if response.status_code == 409:
            return False  # another candidate created it first
        self._kept(response, "create")
        return True

    def update(self, record: Record) -> bool:
        if self.lease is None:
            return False  # "lease not initialized, call get or create first"
        body = {**self.lease, "spec": record.spec()}
        response = self._send("PUT", f"{self.collection}/{self.name}", body)
        if response.status_code in (404, 409):
            return False  # written (or deleted) by another since this process last saw it
        self._kept(response, "update")
        return True


def _message(response: Any) -> str:
    """The Status message of an error answer, else the start of its text."""
    try:
        return str(response.json().get("message", ""))
    except ValueError:
        return str(response.text[:200])
