"""The backend the controllers act through over a simulated cluster's Kubernetes API:
reads from informer caches, writes as client-go's Update and UpdateStatus do (PUT of the
object, PUT of its status; a POST for a new one), the written object kept in the cache
with the resourceVersion the server gave it, time from the simulator's Clock (SPEC X2).

Between two steps of the stepped clock the server changes nothing on its own, so once
every informer has reached the version the clock reports, the caches are exactly the
server's state and the controllers decide what they would decide in process.
"""

from __future__ import annotations

import builtins
import heapq
import json
import weakref
from pathlib import Path
from typing import Any

import httpx
import msgspec

from kupgrade.cluster.apikinds import KINDS, STATE_CONFIGMAP, STATE_NAMESPACE
from kupgrade.cluster.backend import Key, Obj, Watch
from kupgrade.cluster.disruption import Answer
from kupgrade.cluster.fieldops import Op, applied, field_ops
from kupgrade.cluster.informer import Informer, key, number, version_of
from kupgrade.cluster.kube import KubeBackend, eviction_answer, eviction_request
from kupgrade.cluster.objects import applies_nothing
from kupgrade.cluster.wire import loopback_client
from kupgrade.errors import InputError

CLOCK = "/apis/sim.kupgrade.io/v1/clocks/virtual"
STATE = f"/api/v1/namespaces/{STATE_NAMESPACE}/configmaps/{STATE_CONFIGMAP}"


def path_of(
    kind: str,
    namespace: str = "",
    name: str = "",
    sub: str = "",
    known: dict[str, tuple[str, str, str, bool]] = KINDS,
) -> str:
    group, version, plural, namespaced = known[kind]
    out = f"/apis/{group}/{version}" if group else f"/api/{version}"
    if namespaced and namespace:
        out += f"/namespaces/{namespace}"
    out += f"/{plural}"
    if name:
        out += f"/{name}"
    return out + (f"/{sub}" if sub else "")


CONFLICT_RETRIES = 5  # client-go's retry.DefaultRetry steps


def _is_time(value: Any) -> bool:
    """Whether a Clock's time is one: a number (JSON's true is not one, though Python's
    bool is an int)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _parts(obj: Obj) -> tuple[bytes, bytes]:
    """The object without its status, and its status, encoded (what a write changes)."""
    rest = {k: v for k, v in obj.items() if k != "status"}
    return msgspec.json.encode(rest), msgspec.json.encode(obj.get("status"))


def _own_changes(obj: Obj, served: bytes, sub: str) -> list[Op]:
    """The fields a write changes: against the part of the object last served to this
    backend (`_parts`), or all of that part when none was (an object only listed)."""
    base = msgspec.json.decode(served) if served else None
    if sub:
        return [
            Op(["status", *op.path], op.value, op.remove)
            for op in field_ops(base, obj.get("status"))
        ]
    mine = {k: v for k, v in obj.items() if k != "status"}
    if base is None:
        return [Op([k], v) for k, v in mine.items()]
    return field_ops(base, mine)


class InformedBackend(KubeBackend):
    """`cluster.Backend` for controllers over a simulated cluster's API (stepped clock)."""

    def __init__(self, kubeconfig: Path | None = None, context: str | None = None) -> None:
        super().__init__(kubeconfig, context)
        self.http = loopback_client(self._http())
        clock = self._request(
            "GET", CLOCK, what="read the simulated cluster's clock", missing_ok=True
        )
        if clock is None:
            raise InputError(
                f"the API server of {self.where} is not a simulated cluster's (it has no "
                "clocks.sim.kupgrade.io)",
                hint="on a real cluster its own operators carry an upgrade out: ask them with "
                "`kupgrade upgrade --kubeconfig ... --to VERSION`",
            )
        self.clock: dict[str, Any] = self._checked(clock)
        # The version every cache has seen up to: the clock's as read, then each step's.
        self._reached = number(self.clock["status"]["resourceVersion"])
        spec = self.clock.get("spec")
        if not isinstance(spec, dict) or spec.get("mode") != "stepped":
            raise InputError(
                f"the cluster behind {self.where} runs its own controllers",
                hint="serve it with `kupgrade cluster serve-api NAME --no-controllers`, "
                "then run the controllers here",
            )
        self.kinds = dict(KINDS)
        self.informers: dict[str, Informer] = {}
        self.watches: dict[str, weakref.WeakSet[Watch]] = {}
        self.served: dict[Key, tuple[bytes, bytes]] = {}
        self.timers: list[tuple[float, int, Key]] = []
        self._timer_seq = 0
        self._state: dict[str, Any] | None = None
        self._state_digest: str | None = None
        self.changed = False

    # --- HTTP ---------------------------------------------------------------------------

    def _request(
        self, method: str, path: str, body: Any = None, *, what: str, missing_ok: bool = False
    ) -> Any:
        return self._answer(self._send(method, path, body, what=what), what, missing_ok=missing_ok)

    def _send(self, method: str, path: str, body: Any = None, *, what: str) -> httpx.Response:
        try:
            return self.http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise InputError(
                f"cannot {what}: {exc}", hint=f"is the API server of {self.where} still up?"
            ) from None

    def _answer(self, response: httpx.Response, what: str, *, missing_ok: bool) -> Any:
        if response.status_code == 404 and missing_ok:
            return None
        if response.status_code >= 400:
            try:
                message = response.json().get("message", response.text)
            except ValueError:
                message = response.text[:200]
            raise InputError(
                f"cannot {what}: {response.status_code} {message}",
                hint=f"the API server of {self.where}",
            )
        try:
            return response.json()
        except ValueError:
            raise InputError(
                f"cannot {what}: the answer is not JSON ({response.text[:80]!r})",
                hint=f"is {self.where} a Kubernetes API server?",
            ) from None

    # --- the clock ----------------------------------------------------------------------

    def _checked(self, clock: Any) -> dict[str, Any]:
        """The Clock as the server answered it, if it is one: a time and a version, both
        numbers (else one line naming the server, not a traceback later)."""
        status = clock.get("status") if isinstance(clock, dict) else None
        if not isinstance(status, dict):
            status = {}
        at = status.get("nextEventAt")
        if (
            not _is_time(status.get("now"))
            or not str(status.get("resourceVersion")).isdecimal()
            or (at is not None and not _is_time(at))
        ):
            raise InputError(
                f"the API server of {self.where} answered a Clock without a time and a "
                "resourceVersion",
                hint="serve the cluster with `kupgrade cluster serve-api NAME --no-controllers`",
            )
        return clock  # type: ignore[no-any-return]

    def now(self) -> float:
        return float(self.clock["status"]["now"])

    def server_next_at(self) -> float | None:
        at = self.clock["status"].get("nextEventAt")
        return None if at is None else float(at)

    def step(self, to: float | None) -> bool:
        """Step the server's clock (to `to`, or only let the world react), then catch every
        cache up with what that changed; True when the world changed anything."""
        body = {
            "apiVersion": "sim.kupgrade.io/v1",
            "kind": "ClockStep",
            "to": to,
            "since": str(self._reached),
        }
        self.clock = self._checked(
            self._request("POST", CLOCK + "/step", body, what="step the clock")
        )
        status = self.clock["status"]
        version = number(status["resourceVersion"])
        # The kinds changed since the last step, each to the version of its last change;
        # no other watch has anything to deliver (a server that does not say: all of them,
        # to the step's version).
        changed = status.get("changedKinds")
        for kind, informer in self.informers.items():
            if not isinstance(changed, dict):
                informer.reach(version, self._touch)
            elif kind in changed:
                informer.reach(number(changed[kind]) or version, self._touch)
        self._reached = version
        self._fire_timers()
        # The state is read again when it changed (`kupgrade upgrade` may have written it
        # meanwhile, or this process did): the server says a digest of it at each step.
        digest = status.get("stateDigest")
        if digest is None or digest != self._state_digest:
            self._state = None
        self._state_digest = digest
        return bool(self.clock["status"].get("changed"))

    def next_timer(self) -> float | None:
        return self.timers[0][0] if self.timers else None

    def _fire_timers(self) -> None:
        while self.timers and self.timers[0][0] <= self.now():
            _, _, k = heapq.heappop(self.timers)
            self._touch(k)

    # --- resources ------------------------------------------------------------------------

    def _path(self, kind: str, namespace: str = "", name: str = "", sub: str = "") -> str:
        if kind not in self.kinds:
            self._discover(kind)
        return path_of(kind, namespace, name, sub, self.kinds)

    def _discover(self, kind: str) -> None:
        """Find `kind`'s resource in the server's discovery documents, as kubectl's
        RESTMapper does, for a kind outside the table (what a release's manifests carry)."""
        groups = self._request("GET", "/apis", what="read the API's groups") or {}
        versions = ["/api/v1"] + [
            f"/apis/{v['groupVersion']}"
            for g in groups.get("groups") or []
            for v in g.get("versions") or []
        ]
        for path in versions:
            listed = self._request("GET", path, what=f"read {path}", missing_ok=True) or {}
            for r in listed.get("resources") or []:
                if r.get("kind") == kind and "/" not in r.get("name", ""):
                    group_version = path.removeprefix("/api/").removeprefix("/apis/")
                    group, _, version = group_version.rpartition("/")
                    self.kinds[kind] = (group, version, r["name"], bool(r.get("namespaced")))
                    return
        raise InputError(
            f"the API server of {self.where} serves no {kind} objects",
            hint="a release manifest of this kind cannot be applied there",
        )

    # --- informers ------------------------------------------------------------------------

    def _informer(self, kind: str) -> Informer:
        found = self.informers.get(kind)
        if found is None:
            try:
                found = self.informers[kind] = Informer(self.http, kind, self._path(kind))
            except (httpx.HTTPError, ValueError) as exc:
                raise InputError(
                    f"cannot list {kind} objects: {exc}", hint=f"the API server of {self.where}"
                ) from None
            for obj in found.objects.values():
                self.served[key(obj)] = _parts(obj)
        return found

    def _touch(self, k: Key) -> None:
        for watch in self.watches.get(k[0], ()):
            watch.add(k)

    def _cache(self, obj: Obj) -> Obj:
        """Keep an object as the server answered a write (the informer's echo of it is
        then no change), and queue it to the watches as the store does."""
        informer = self._informer(obj["kind"])
        informer.put(obj)
        self.served[key(obj)] = _parts(obj)
        self._touch(key(obj))
        self.changed = True
        return obj

    def _refresh(self, kind: str, name: str, namespace: str) -> None:
        """Read one object again after a request that changed it on the server."""
        found = self._request(
            "GET", self._path(kind, namespace, name), what=f"read {kind} {name}", missing_ok=True
        )
        self._settle((kind, namespace, name), None if found is None else {**found, "kind": kind})

    def _settle(self, k: Key, found: Obj | None) -> None:
        """Keep an object as a request left it on the server (None: gone)."""
        if found is not None:
            self._cache(found)
            return
        self._informer(k[0]).drop(k)
        self.served.pop(k, None)
        self._touch(k)
        self.changed = True

    def list_all(self, kind: str) -> builtins.list[Obj]:
        """A list read straight from the server (kinds no informer follows: Events)."""
        found = self._request("GET", self._path(kind), what=f"list {kind} objects") or {}
        return builtins.list(found.get("items") or [])

    def session(self) -> httpx.Client:
        """The client every request of this backend goes through (the leader's guard
        and user agent are set on it)."""
        return self.http

    def close(self) -> None:
        for informer in self.informers.values():
            informer.stop()
        if self.http is not self._http():
            self.http.close()

    # --- Backend ------------------------------------------------------------------------

    def get(self, kind: str, name: str, namespace: str = "") -> Obj | None:
        return self._informer(kind).objects.get((kind, namespace, name))

    def list(self, kind: str, **selectors: Any) -> builtins.list[Obj]:
        return self._informer(kind).listed()

    def watch(self, *kinds: str) -> Watch:
        watch = Watch(k for kind in kinds for k in self._informer(kind).objects)
        for kind in kinds:
            self.watches.setdefault(kind, weakref.WeakSet()).add(watch)
        return watch

    def pods_on(self, node: str) -> builtins.list[Obj]:
        return self._informer("Pod").on_node(node)

    def apply(self, obj: Obj) -> Obj:
        meta = obj["metadata"]
        existing = self.get(obj["kind"], meta["name"], meta.get("namespace", ""))
        if existing is None:
            created = self._request(
                "POST",
                self._path(obj["kind"], meta.get("namespace", "")),
                obj,
                what=f"create {obj['kind']} {meta['name']}",
            )
            return self._cache({**created, "kind": obj["kind"]})
        merged = {**obj, "status": existing["status"]} if "status" in existing else dict(obj)
        if applies_nothing(existing, merged):
            return existing
        merged["metadata"] = {**existing["metadata"], **meta}
        self.write(merged)
        return self.get(obj["kind"], meta["name"], meta.get("namespace", "")) or merged

    def write(self, obj: Obj) -> None:
        """PUT what changed: the object (its status is the server's to keep), then its
        status through the status subresource (client-go's Update, UpdateStatus).

        The caller's object becomes the cached one, stamped with the new resourceVersion,
        as the simulator's store keeps the very object written: a controller that
        changes it again and writes it again sends the version it holds."""
        k = key(obj)
        kind, namespace, name = k
        if k not in self.served and self.get(kind, name, namespace) is None:
            # A new object (the store takes it as it is, status and all: so does create).
            done = self._request(
                "POST", self._path(kind, namespace), obj, what=f"create {kind} {name}"
            )
            obj["metadata"]["resourceVersion"] = str(version_of(done))
            self._cache(obj)
            return
        main, status = _parts(obj)
        served = self.served.get(k, (b"", b""))
        if main != served[0]:
            done = self._update(k, obj, served[0], "", f"update {kind} {name}")
            obj["metadata"]["resourceVersion"] = str(version_of(done))
        if "status" in obj and status != served[1]:
            done = self._update(k, obj, served[1], "status", f"update the status of {kind} {name}")
            obj["metadata"]["resourceVersion"] = str(version_of(done))
        self._cache(obj)

    def _update(self, k: Key, obj: Obj, served: bytes, sub: str, what: str) -> Any:
        """PUT with the version held; on a 409 Conflict, read the object again, make this
        write's own field changes (against what was last served to it) on the fresh one
        and PUT that, as client-go's RetryOnConflict retries (DefaultRetry: five tries):
        a change someone else made meanwhile to another field is kept."""
        kind, namespace, name = k
        path = self._path(kind, namespace, name, sub) if sub else self._path(kind, namespace, name)
        body = obj
        for _ in range(CONFLICT_RETRIES):
            response = self._send("PUT", path, body, what=what)
            if response.status_code != 409:
                return self._answer(response, what, missing_ok=False)
            fresh = self._request(
                "GET", self._path(kind, namespace, name), what=f"read {kind} {name}"
            )
            body = applied(fresh, _own_changes(obj, served, sub))
            body["metadata"]["resourceVersion"] = fresh["metadata"]["resourceVersion"]
        raise InputError(
            f"cannot {what}: 409 the object kept changing ({CONFLICT_RETRIES} tries)",
            hint=f"the API server of {self.where}: run `kupgrade controller run` again",
        )

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        self._request(
            "DELETE",
            self._path(kind, namespace, name),
            what=f"delete {kind} {name}",
            missing_ok=True,
        )
        self._refresh(kind, name, namespace)

    def evict(self, pod: Obj) -> Answer:
        """POST the Eviction; once it is granted, the pod as the server left it. The
        simulated API server says at which version (its Status's metadata), so the pod's
        watch delivers it and no GET is sent; without that version, a GET."""
        path, eviction = eviction_request(pod)
        try:
            response = self.http.post(path, json=eviction)
        except httpx.HTTPError as exc:
            return Answer(500, f"cannot reach the API server: {exc}")
        answer = eviction_answer(response)
        if answer.code != 200:
            return answer
        meta = pod["metadata"]
        k = ("Pod", meta.get("namespace", ""), meta["name"])
        try:
            version = number((response.json().get("metadata") or {}).get("resourceVersion"))
        except (ValueError, AttributeError):
            version = 0
        if not version:
            self._refresh("Pod", meta["name"], meta.get("namespace", ""))
            return answer
        informer = self._informer("Pod")
        informer.reach(version, self._touch)
        self._settle(k, informer.objects.get(k))
        return answer

    def requeue_at(self, at: float, kind: str, name: str, namespace: str = "") -> None:
        self._timer_seq += 1
        heapq.heappush(self.timers, (at, self._timer_seq, (kind, namespace, name)))

    def record(self, obj: str, reason: str, message: str) -> None:
        """An Event on the cluster, as a controller on a real one records it; the
        simulator logs it in the rehearsal's timeline."""
        kind, _, rest = obj.partition("/")
        namespace, _, name = rest.rpartition("/")
        name = name or kind
        self._request(
            "POST",
            self._path("Event", namespace or "default"),
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "name": f"{name}.{self._timer_seq:x}{len(self.timers):x}",
                    "namespace": namespace or "default",
                },
                "involvedObject": {
                    "kind": kind,
                    "name": name,
                    **({"namespace": namespace} if namespace else {}),
                },
                "reason": reason,
                "message": message,
                "type": "Normal",
                "source": {"component": "kupgrade"},
            },
            what=f"record an event on {obj}",
        )

    def _states(self) -> dict[str, Any]:
        if self._state is None:
            found = (
                self._request("GET", STATE, what="read the controllers' state", missing_ok=True)
                or {}
            )
            try:
                self._state = {k: json.loads(v) for k, v in (found.get("data") or {}).items()}
            except (ValueError, TypeError) as exc:
                raise InputError(
                    f"the controllers' state in {STATE} is not JSON: {exc}",
                    hint="fix or delete that ConfigMap's data",
                ) from None
        return self._state

    def state(self, key: str, default: Any = None) -> Any:
        value = self._states().get(key)
        return default if value is None else value

    def set_state(self, key: str, value: Any) -> None:
        states = self._states()
        if states.get(key) == value:
            return
        patch = json.dumps({"data": {key: json.dumps(value)}}).encode()
        try:
            response = self.http.patch(
                STATE, content=patch, headers={"Content-Type": "application/merge-patch+json"}
            )
        except httpx.HTTPError as exc:
            raise InputError(
                f"cannot keep the controllers' state: {exc}",
                hint=f"is the API server of {self.where} still up?",
            ) from None
        if response.status_code >= 400:
            raise InputError(
                f"cannot keep the controllers' state: {response.text[:200]}",
                hint=f"the API server of {self.where}",
            )
        states[key] = json.loads(json.dumps(value))
        self.changed = True
