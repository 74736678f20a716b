"""The Kubernetes API of a simulated cluster: what real clients send, answered from the
simulator's store (kube-apiserver semantics: discovery, get, list with label and field
selectors, watch from a resourceVersion, create, delete, patch, the status and eviction
subresources, server-side Table output, Status errors).

Writes go to the simulator (SPEC X2). Every request runs under the store's lock, between two steps of the run loop, so a write
through the API is a write to the store that the controllers see on their next pass.
"""

from __future__ import annotations

import hmac
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

from kupgrade.apiserver import openapi, openapi_v2, protobuf
from kupgrade.apiserver.clock import Stepper, step_since, step_target
from kupgrade.apiserver.dryrun import DryRunRefused, dry_run
from kupgrade.apiserver.patch import APPLY, PatchError, apply_patch
from kupgrade.apiserver.resources import (
    BY_KIND,
    BY_PATH,
    CREATED_SUBRESOURCES,
    READ_SUBRESOURCES,
    Resource,
    api_groups,
    api_versions,
    resource_list,
)
from kupgrade.apiserver.shown import Shown
from kupgrade.apiserver.validation import invalid_message, validate
from kupgrade.apiserver.version import version_info
from kupgrade.apiserver.virtual import Virtual
from kupgrade.cluster.gdc import BOOTSTRAP, in_bootstrap
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.store import Store
from kupgrade.versions.times import rfc3339

MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's request size limit
WATCH_SECONDS = 1800.0  # a watch without timeoutSeconds ends after this (real time)
BOOKMARK_SECONDS = 1.0  # a watch's bookmarks for other kinds' changes: at most one a second


@dataclass
class Reply:
    status: int
    body: Any = None
    stream: Iterator[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def status_error(code: int, reason: str, message: str, **details: Any) -> Reply:
    """A metav1.Status failure, as every API error is."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return Reply(code, body)


@dataclass(frozen=True)
class Target:
    resource: Resource
    namespace: str
    name: str
    sub: str
    # What an unknown field causes (the fieldValidation parameter; Warn when absent).
    fields: str = "Warn"
    # What a Table row carries (includeObject: None, Metadata, or the Object that
    # kubectl's --sort-by reads).
    include: str = "Metadata"


class KubeAPI:
    def __init__(
        self,
        sim: SimCluster,
        token: str,
        *,
        clock: Stepper | None = None,
        home: str = "",
    ) -> None:
        self.sim = sim
        self.store: Store = sim.store
        self.token = token
        self.changes = self.store.keep_changes()
        self.virtual = Virtual(sim, clock, home)
        self.shown = Shown(sim, self.changes)

    # --- entry ----------------------------------------------------------------------

    def handle(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: bytes
    ) -> Reply:
        if path in ("/healthz", "/livez", "/readyz"):
            return Reply(200, "ok")
        given = headers.get("authorization", "").encode()
        if not hmac.compare_digest(given, f"Bearer {self.token}".encode()):
            return status_error(401, "Unauthorized", "Unauthorized")
        if len(body) > MAX_BODY:
            return status_error(413, "RequestEntityTooLarge", "the request is too large")
        if body and "protobuf" in headers.get("content-type", ""):
            # kubectl 1.33's typed `create configmap|secret|namespace|serviceaccount`
            # sends protobuf and does not fall back to JSON: read into JSON here.
            try:
                body = json.dumps(protobuf.decoded(body)).encode()
            except protobuf.ProtobufError as exc:
                return status_error(
                    415,
                    "UnsupportedMediaType",
                    f"the body of the request was in an unknown format ({exc}) - accepted "
                    "media types include: application/json, application/merge-patch+json, "
                    "application/json-patch+json, application/strategic-merge-patch+json",
                )
            headers = {**headers, "content-type": "application/json"}
        found = self._discovery(path, headers.get("accept", ""))
        if found is not None:
            return (
                found
                if method == "GET"
                else status_error(405, "MethodNotAllowed", "discovery is read-only")
            )
        target = self._target(path)
        if target is None:
            return status_error(
                404, "NotFound", f"the server could not find the requested resource ({path})"
            )
        with self.store.lock:
            if self.store.take_inbox():  # a command's writes (sim/inbox.py), seen first
                self.store.commit()
            return self._dispatch(method, target, query, headers, body)

    def _discovery(self, path: str, accept: str) -> Reply | None:
        if path == "/version":
            with self.store.lock:
                return Reply(200, version_info(self.store))
        if path in ("/openapi/v2", "/swagger-2.0.0.pb-v1"):
            if "protobuf" in accept:
                reply = Reply(200, openapi_v2.protobuf())
                reply.headers["Content-Type"] = openapi_v2.PROTOBUF
                return reply
            return Reply(200, openapi_v2.document())
        if path == "/openapi/v3":
            return Reply(200, openapi.root())
        if path.startswith("/openapi/v3/"):
            doc = openapi.documents().get(path.removeprefix("/openapi/v3/"))
            return Reply(200, doc) if doc else status_error(404, "NotFound", f"no document {path}")
        if path == "/api":
            return Reply(200, api_versions())
        if path == "/apis":
            return Reply(200, api_groups())
        if path == "/api/v1" or re.fullmatch(r"/apis/[^/]+/[^/]+", path):
            listed = resource_list(path.removeprefix("/api/").removeprefix("/apis/"))
            return (
                Reply(200, listed)
                if listed
                else status_error(404, "NotFound", f"no group version {path}")
            )
        return None

    def _target(self, path: str) -> Target | None:
        parts = [p for p in path.split("/") if p]
        if parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        namespace = ""
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            return None
        resource = BY_PATH.get((group, version, rest[0]))
        if resource is None:
            return None
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if sub and sub not in resource.subresources:
            return None
        return Target(resource, namespace, name, sub)

    def _dispatch(
        self, method: str, t: Target, query: dict[str, str], headers: dict[str, str], body: bytes
    ) -> Reply:
        if method == "GET":
            return self._read(t, query, headers)
        dry = dry_run(method, t.sub, query, body)
        if isinstance(dry, DryRunRefused):
            return status_error(422, "Invalid", dry.message, **dry.details)
        fields = query.get("fieldValidation") or "Warn"
        if fields not in openapi.FIELD_VALIDATION:
            return status_error(
                400,
                "BadRequest",
                f"fieldValidation parameter unsupported: {fields} "
                f"(one of {', '.join(openapi.FIELD_VALIDATION)})",
            )
        t = replace(t, fields=fields)
        return self._write(method, t, headers, body, dry=dry)

    def _read(self, t: Target, query: dict[str, str], headers: dict[str, str]) -> Reply:
        t = replace(t, include=query.get("includeObject") or "Metadata")
        if t.sub in CREATED_SUBRESOURCES:
            return status_error(405, "MethodNotAllowed", f"a {t.sub} is created (POST)")
        if not t.name:
            if query.get("watch") in ("1", "true"):
                return self._watch(t, query, "as=Table" in headers.get("accept", ""))
            return self._list(t, query, headers)
        obj = self._get(t)
        if obj is None:
            return self._not_found(t)
        if t.sub == "log":
            return status_error(
                400,
                "BadRequest",
                f'pod "{t.name}" has no logs: the container of a simulated pod writes none; '
                "its cluster's events say what happened to it (kubectl get events)",
            )
        if "as=Table" in headers.get("accept", "") and not t.sub:
            return Reply(
                200, self.shown.table(t.resource, [obj], str(self.changes.version), t.include)
            )
        return Reply(200, self.shown.out(obj))

    def _write(
        self, method: str, t: Target, headers: dict[str, str], body: bytes, *, dry: bool
    ) -> Reply:
        """A write; with `dry` (dryRun=All) answered, validated and checked as the real
        one would be, but nothing stored and nobody woken (apiserver's dry-run contract:
        staging/src/k8s.io/apiserver/pkg/registry/generic/registry/dryrun.go)."""
        if not t.name:
            if method == "POST" and t.resource.writable:
                return self._create(t, body, dry)
            return status_error(
                405, "MethodNotAllowed", f"{method} is not allowed on {t.resource.plural}"
            )
        if t.sub in READ_SUBRESOURCES:
            return status_error(405, "MethodNotAllowed", f"a {t.sub} is only read (GET)")
        if t.sub in CREATED_SUBRESOURCES:
            if method != "POST":
                return status_error(405, "MethodNotAllowed", f"a {t.sub} is created (POST)")
            return self._evict(t, dry) if t.sub == "eviction" else self._step(t, body)
        if not t.resource.writable:
            return status_error(405, "MethodNotAllowed", f"{t.resource.plural} are read-only")
        if method == "DELETE":
            return self._delete(t, dry)
        if method == "PATCH":
            return self._patch(t, headers.get("content-type", ""), body, dry)
        if method == "PUT":
            return self._replace(t, body, dry)
        return status_error(405, "MethodNotAllowed", f"{method} is not allowed")

    # --- reads ----------------------------------------------------------------------

    def _objects(self, r: Resource) -> list[dict[str, Any]]:
        if r.kind == "Namespace":
            return self._namespaces()
        if r.kind == "Event":
            return self.virtual.events()
        if r.kind == "Clock":
            return self.virtual.clocks()
        # read, not kept: a list of every pod does not make the store's pods all dicts
        found = [o for _, o in self.store.scan(r.kind) if not in_bootstrap(o)]
        if r.kind == "ConfigMap":
            found.append(self.virtual.state())
        return found

    def _namespaces(self) -> list[dict[str, Any]]:
        """Namespaces: the stored ones, and one for every namespace an object lives in."""
        stored = {n["metadata"]["name"]: n for n in self.store.list("Namespace")}
        names = {  # from the keys: no object need be read (most are pods kept as bytes)
            key[1]
            for kind in {r.kind for r in BY_KIND.values() if r.namespaced}
            for key in self.store.keys(kind)
        } - {None, ""}
        out = dict(stored)
        for name in sorted(n for n in names if n and not n.startswith(BOOTSTRAP)):
            out.setdefault(
                name,
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": name},
                    "spec": {},
                    "status": {"phase": "Active"},
                },
            )
        return [out[k] for k in sorted(out)]

    def _get(self, t: Target) -> dict[str, Any] | None:
        kind = t.resource.kind
        if kind == "Namespace":
            return next((n for n in self._namespaces() if n["metadata"]["name"] == t.name), None)
        if kind == "Clock":
            return self.virtual.clock_named(t.name)
        if kind == "Event":
            return next(
                (
                    e
                    for e in self.virtual.events()
                    if e["metadata"]["name"] == t.name and e["metadata"]["namespace"] == t.namespace
                ),
                None,
            )
        if self.virtual.is_state(kind, t.namespace, t.name):
            return self.virtual.state()
        return self.store.get(kind, t.name, t.namespace)

    def _selected(self, t: Target, query: dict[str, str]) -> list[dict[str, Any]] | Reply:
        try:
            labels = _selector(query.get("labelSelector", ""), "label")
            fields = _selector(query.get("fieldSelector", ""), "field")
        except ValueError as exc:
            return status_error(400, "BadRequest", str(exc))
        return [o for o in self._objects(t.resource) if _wanted(t, o, labels, fields)]

    def _list(self, t: Target, query: dict[str, str], headers: dict[str, str]) -> Reply:
        found = self._selected(t, query)
        if isinstance(found, Reply):
            return found
        version = str(self.changes.version)
        if "as=Table" in headers.get("accept", ""):
            return Reply(200, self.shown.table(t.resource, found, version, t.include))
        return Reply(
            200,
            {
                "kind": f"{t.resource.kind}List",
                "apiVersion": t.resource.group_version,
                "metadata": {"resourceVersion": version},
                "items": [self.shown.out(o) for o in found],
            },
        )

    def _watch(self, t: Target, query: dict[str, str], table: bool) -> Reply:
        """A stream of {type, object} events from `resourceVersion` on (410 when older
        than what is kept); ends after timeoutSeconds of real time."""
        try:
            labels = _selector(query.get("labelSelector", ""), "label")
            fields = _selector(query.get("fieldSelector", ""), "field")
        except ValueError as exc:
            return status_error(400, "BadRequest", str(exc))
        start = query.get("resourceVersion") or ""
        since = int(start) if start.isdigit() and start != "0" else self.changes.version
        if self.changes.since(since) is None:
            return status_error(
                410, "Expired", f"too old resource version: {since} ({self.changes.oldest})"
            )
        seconds = min(float(query.get("timeoutSeconds") or WATCH_SECONDS), WATCH_SECONDS)
        initial: list[bytes] = []
        if not start or start == "0":  # no version: the current state first, as ADDED
            for obj in self._objects(t.resource):
                if _wanted(t, obj, labels, fields):
                    initial.append(self._event("ADDED", obj, t, table))
        bookmarks = query.get("allowWatchBookmarks") in ("1", "true")
        stream = self._events(
            t, (labels, fields, table), since, seconds, initial, bookmarks=bookmarks
        )
        return Reply(200, stream=stream)

    def _event(self, kind_of_change: str, obj: dict[str, Any], t: Target, table: bool) -> bytes:
        """One watch event; a one-row Table when the client prints server-side columns."""
        shown = (
            self.shown.table(
                t.resource, [obj], obj["metadata"].get("resourceVersion", ""), t.include
            )
            if table
            else self.shown.out(obj)
        )
        return _event(kind_of_change, shown)

    def _events(
        self,
        t: Target,
        selectors: tuple[list[Any], list[Any], bool],
        since: int,
        seconds: float,
        initial: list[bytes],
        *,
        bookmarks: bool = False,
    ) -> Iterator[bytes]:
        """The watch's events; with `bookmarks`, a BOOKMARK carrying the version reached
        once this watch has let changes of other kinds go by, so that a client knows it has
        seen everything up to that version (client-go's allowWatchBookmarks).

        At most one a BOOKMARK_SECONDS for other kinds' changes, as kube-apiserver sends
        them at its own pace (its cacher: about once a minute) and no client may count on
        an interval (API concepts, "Watch bookmarks"): one after every batch made a write
        of one kind send a bookmark down every other kind's watch, 24 for each eviction of
        a rehearsal over the API, which spent more of both processes than the writes did.
        A client that must know its watch has reached a version asks the stepped clock
        which kinds changed (`_step`). Changes of this watch's own kind that it does not
        send (bootstrap objects, a selector's) are told at once."""
        labels, fields, table = selectors
        yield from initial
        deadline = time.monotonic() + seconds
        told, marked = since, time.monotonic()
        changed = self.changes.changed(t.resource.kind)  # woken by its kind's changes only
        while time.monotonic() < deadline:
            with changed:
                pending = self.changes.since(since)
                if pending is None:
                    yield _event(
                        "ERROR", status_error(410, "Expired", "too old resource version").body
                    )
                    return
                if not pending:
                    # other kinds' changes are looked at (for a bookmark) once a second
                    changed.wait(timeout=min(1.0, deadline - time.monotonic()))
                    pending = self.changes.since(since) or []
            unsent = False  # a change of this kind not sent
            for version, kind_of_change, kind, encoded in pending:
                since = version
                if kind != t.resource.kind:
                    continue
                obj = msgspec.json.decode(encoded)
                if in_bootstrap(obj) or not _wanted(t, obj, labels, fields):
                    unsent = True
                    continue
                with self.store.lock:
                    shown = self._event(kind_of_change, obj, t, table)
                told = version
                yield shown
            due = unsent or time.monotonic() - marked >= BOOKMARK_SECONDS
            if bookmarks and told < since and due:
                mark = {
                    "kind": t.resource.kind,
                    "apiVersion": t.resource.group_version,
                    "metadata": {"resourceVersion": str(since)},
                }
                told, marked = since, time.monotonic()
                yield _event("BOOKMARK", mark)

    # --- writes ---------------------------------------------------------------------

    def _decode(self, body: bytes) -> Any:
        try:
            return json.loads(body or b"null")
        except (ValueError, UnicodeDecodeError) as exc:
            raise PatchError(f"the request body is not JSON: {exc}") from None
        except RecursionError:  # found by make test's fuzzing: a 500 before
            raise PatchError("the request body is not JSON: it is nested too deeply") from None

    def _object(self, t: Target, body: bytes) -> dict[str, Any] | Reply:
        """The request's object, or the Status saying why it is not one (400, 422)."""
        try:
            obj = self._decode(body)
        except PatchError as exc:
            return status_error(400, "BadRequest", str(exc))
        problem = self._check_object(t, obj)
        return status_error(422, "Invalid", problem) if problem else dict(obj)

    def _invalid(self, t: Target, obj: dict[str, Any]) -> Reply | None:
        """422 Invalid with a cause per field when kube-apiserver would refuse `obj`."""
        errors = validate(t.resource.kind, obj)
        if not errors:
            return None
        name = str((obj.get("metadata") or {}).get("name") or t.name)
        return status_error(
            422,
            "Invalid",
            invalid_message(t.resource.kind, t.resource.group, name, errors),
            name=name,
            group=t.resource.group,
            kind=t.resource.kind,
            causes=[e.cause() for e in errors],
        )

    def _create(self, t: Target, body: bytes, dry: bool) -> Reply:
        obj = self._object(t, body)
        if isinstance(obj, Reply):
            return obj
        refused = self._invalid(t, obj)  # before the name is read: it may be none
        if refused is not None:
            return refused
        warnings = openapi.unknown_fields(t.resource.kind, obj, {}, prune=t.fields != "Strict")
        if warnings and t.fields == "Strict":
            return self._strict(t, warnings)
        name = obj["metadata"]["name"]
        if t.resource.namespaced:
            obj["metadata"]["namespace"] = (
                t.namespace or obj["metadata"].get("namespace") or "default"
            )
        if t.resource.kind == "Event" or self.virtual.is_state(
            t.resource.kind, obj["metadata"].get("namespace", ""), name
        ):
            return self._virtual_write(t, obj, 201, dry)
        if self.store.get(t.resource.kind, name, obj["metadata"].get("namespace", "")) is not None:
            return status_error(
                409,
                "AlreadyExists",
                f'{t.resource.plural} "{name}" already exists',
                name=name,
                kind=t.resource.plural,
            )
        obj["metadata"].setdefault("creationTimestamp", rfc3339(self.sim.now()))
        obj.setdefault("kind", t.resource.kind)
        obj.setdefault("apiVersion", t.resource.group_version)
        if not dry:
            self.sim.write(obj)
            self.store.commit()
        return self._answer(t, 201, obj, warnings)

    def _check_object(self, t: Target, obj: Any) -> str:
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            return "the object has no metadata"
        if obj.get("kind", t.resource.kind) != t.resource.kind:
            return f"kind {obj.get('kind')!r} does not match {t.resource.plural}"
        return ""  # the name and the rest: validation.py, on what would be stored

    def _delete(self, t: Target, dry: bool) -> Reply:
        obj = self._get(t)
        if obj is None or t.resource.kind in ("Namespace", "Event"):
            return self._not_found(t)
        if self.virtual.is_state(t.resource.kind, t.namespace, t.name):
            return status_error(405, "MethodNotAllowed", "the controllers' state is not deleted")
        if not dry:
            self.sim.delete(t.resource.kind, t.name, t.namespace)
            self.store.commit()
        return Reply(
            200,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": {"name": t.name, "kind": t.resource.plural},
            },
        )

    def _patch(self, t: Target, content_type: str, body: bytes, dry: bool) -> Reply:
        obj = self._get(t)
        if obj is None and content_type.startswith(APPLY):
            return self._create(t, body, dry)  # server-side apply creates what is missing
        if obj is None:
            return self._not_found(t)
        try:
            patched = apply_patch(content_type, obj, self._decode(body))
        except PatchError as exc:
            code = 415 if "is not one of" in str(exc) else 422
            return status_error(
                code, "UnsupportedMediaType" if code == 415 else "Invalid", str(exc)
            )
        return self._store_update(t, obj, patched, dry)

    def _replace(self, t: Target, body: bytes, dry: bool) -> Reply:
        obj = self._get(t)
        if obj is None:
            return self._not_found(t)
        new = self._object(t, body)
        if isinstance(new, Reply):
            return new
        wanted = new["metadata"].get("resourceVersion")
        if wanted and wanted != self.shown.out(obj)["metadata"]["resourceVersion"]:
            return status_error(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {t.resource.plural} "{t.name}": '
                "the object has been modified; please apply your changes to the latest version and try again",
            )
        return self._store_update(t, obj, new, dry)

    def _store_update(
        self, t: Target, old: dict[str, Any], new: dict[str, Any], dry: bool
    ) -> Reply:
        """The main resource keeps its status; the status subresource changes only status
        (kube-apiserver's PrepareForUpdate). Identity fields cannot change."""
        if not isinstance(new, dict) or not isinstance(new.get("metadata"), dict):
            return status_error(422, "Invalid", "the result has no metadata")
        if (
            new["metadata"].get("name") != t.name
            or new.get("kind", t.resource.kind) != t.resource.kind
        ):
            return status_error(422, "Invalid", "metadata.name and kind cannot change")
        # A patch that removes kind or apiVersion (a merge patch's null) leaves the path's.
        new = {"kind": t.resource.kind, "apiVersion": t.resource.group_version, **new}
        if t.resource.subresources and "status" in t.resource.subresources:
            if t.sub == "status":
                new = {**old, "status": new.get("status", old.get("status"))}
            else:
                # The status a client sends is dropped, even on an object that has none
                # (a workload's, shown counted from its pods, is never stored).
                new = {k: v for k, v in new.items() if k != "status"}
                if "status" in old:
                    new["status"] = old["status"]
        new["metadata"] = {
            **old["metadata"],
            **new["metadata"],
            "namespace": old["metadata"].get("namespace"),
        }
        if not new["metadata"]["namespace"]:
            new["metadata"].pop("namespace")
        refused = self._invalid(t, new)
        if refused is not None:
            return refused
        warnings = openapi.unknown_fields(t.resource.kind, new, old, prune=t.fields != "Strict")
        if warnings and t.fields == "Strict":
            return self._strict(t, warnings)
        if (
            self.virtual.is_state(t.resource.kind, t.namespace, t.name)
            or t.resource.kind == "Event"
        ):
            return self._virtual_write(t, new, 200, dry)
        if not dry:
            self.sim.write(new)
            self.store.commit()
        return self._answer(t, 200, new, warnings)

    def _answer(self, t: Target, code: int, obj: dict[str, Any], unknown: list[str]) -> Reply:
        """The written object, with a warning per unknown field unless told to ignore
        them (kube-apiserver's Warning headers, which kubectl prints as `Warning: ...`)."""
        reply = Reply(code, self.shown.out(obj))
        if unknown and t.fields == "Warn":
            reply.headers["Warning"] = ", ".join(
                f'299 - "unknown field \\"{path}\\""' for path in unknown
            )
        return reply

    def _strict(self, t: Target, unknown: list[str]) -> Reply:
        """fieldValidation=Strict: 400 naming every unknown field (kube-apiserver's strict
        decoding error, apimachinery pkg/runtime/serializer/json)."""
        kind, version = t.resource.kind, t.resource.group_version
        fields = ", ".join(f'unknown field "{path}"' for path in unknown)
        return status_error(
            400,
            "BadRequest",
            f'{kind} in version "{version}" cannot be handled as a {kind}: '
            f"strict decoding error: {fields}",
        )

    def _virtual_write(self, t: Target, obj: dict[str, Any], code: int, dry: bool) -> Reply:
        """An Event (logged) or the controllers' state (kept in the store's meta)."""
        # As _create: a body may leave kind and apiVersion to the path (an Event echoed
        # back without them answered 500).
        obj.setdefault("kind", t.resource.kind)
        obj.setdefault("apiVersion", t.resource.group_version)
        if t.resource.kind == "Event":
            problem = self.virtual.record_event(obj, dry=dry)
            shown = obj
        else:
            problem = self.virtual.put_state(obj, dry=dry)
            shown = obj if dry else self.virtual.state()
        if problem:
            return status_error(422, "Invalid", problem)
        if not dry:
            self.store.commit()
        return Reply(code, self.shown.out(shown))

    def _step(self, t: Target, body: bytes) -> Reply:
        """POST clocks/virtual/step: the remote controllers move the stepped clock."""
        clock = self.virtual.clock
        if clock is None or self.virtual.clock_named(t.name) is None:
            return self._not_found(t)
        if clock.mode != "stepped":
            return status_error(
                409,
                "Conflict",
                "the clock follows real time while the "
                "cluster's own controllers run; serve it with --no-controllers "
                "to step it",
            )
        try:
            asked = self._decode(body)
            to, since = step_target(asked), step_since(asked)
        except (PatchError, ValueError) as exc:
            return status_error(400, "BadRequest", str(exc))
        changed = clock.clock_step(to)
        out = self.virtual.clock_named(t.name)
        assert out is not None
        out["status"]["changed"] = changed
        out["status"]["stateDigest"] = self.virtual.state_digest()
        if since is not None:
            kinds = self._changed_kinds(since)
            if kinds is not None:
                out["status"]["changedKinds"] = kinds
        return Reply(201, out)

    def _changed_kinds(self, since: int) -> dict[str, str] | None:
        """Each kind changed after version `since`, with the version of its last change:
        the watches a client must see reach those versions before it acts, and no other
        (None when the changes are no longer kept: then every watch must reach the step's
        version)."""
        with self.store.lock:
            pending = self.changes.since(since)
        if pending is None:
            return None
        return {kind: str(version) for version, _, kind, _ in pending}

    def _evict(self, t: Target, dry: bool) -> Reply:
        """policy/v1 Eviction: 201 when the pod may go, 429 naming the budget when a
        PodDisruptionBudget forbids it, 500 for a pod under two budgets (SPEC E3, G11)."""
        pod = self.store.get("Pod", t.name, t.namespace)
        if pod is None:
            return self._not_found(t)
        answer = self.sim.evict(pod, dry=dry)
        if not dry:
            self.store.commit()
        if answer.code == 200:
            # The pod's version as the eviction left it, in the Status's ListMeta (where
            # kube-apiserver leaves it empty): a client whose informer follows pods waits
            # for that version there instead of reading the pod again. (The store's own
            # version could be another kind's change, which a pod watch is not sent.)
            left = None if dry else self.store.get("Pod", t.name, t.namespace)
            version = (left or {}).get("metadata", {}).get("resourceVersion")
            done = {"resourceVersion": str(version)} if version else {}
            return Reply(
                201, {"kind": "Status", "apiVersion": "v1", "metadata": done, "status": "Success"}
            )
        if answer.code == 429:
            return status_error(
                429,
                "TooManyRequests",
                answer.message,
                causes=[{"reason": "DisruptionBudget", "message": answer.cause}],
            )
        return status_error(500, "InternalError", answer.message)

    # --- shapes ---------------------------------------------------------------------

    def _not_found(self, t: Target) -> Reply:
        what = f"{t.resource.plural}.{t.resource.group}" if t.resource.group else t.resource.plural
        return status_error(
            404, "NotFound", f'{what} "{t.name}" not found', name=t.name, kind=t.resource.plural
        )


def _wanted(
    t: Target,
    obj: dict[str, Any],
    labels: list[tuple[str, str, str]],
    fields: list[tuple[str, str, str]],
) -> bool:
    """In the request's namespace (if it names one) and matching its selectors."""
    if t.namespace and obj["metadata"].get("namespace", "") != t.namespace:
        return False
    return _matches(obj, labels, fields)


def _event(kind_of_change: str, obj: Any) -> bytes:
    return json.dumps({"type": kind_of_change, "object": obj}).encode() + b"\n"


def _selector(text: str, what: str) -> list[tuple[str, str, str]]:
    """`a=b,c!=d,e` (label selectors also `!e`): (key, operator, value) triples."""
    out = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        found = re.fullmatch(r"([^!=\s]+)\s*(==|=|!=)\s*(\S*)", term)
        if found:
            key, op, value = found.groups()
            out.append((key, "!=" if op == "!=" else "=", value))
        elif what == "label" and re.fullmatch(r"!?[A-Za-z0-9./_-]+", term):
            out.append((term.lstrip("!"), "!exists" if term.startswith("!") else "exists", ""))
        else:
            raise ValueError(f"unable to parse requirement: {term!r}")
    return out


def _field(obj: dict[str, Any], path: str) -> str:
    value: Any = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _matches(
    obj: dict[str, Any], labels: list[tuple[str, str, str]], fields: list[tuple[str, str, str]]
) -> bool:
    own = obj["metadata"].get("labels") or {}
    for key, op, value in labels:
        if (op == "exists" and key not in own) or (op == "!exists" and key in own):
            return False
        if (op == "=" and own.get(key) != value) or (op == "!=" and own.get(key) == value):
            return False
    for key, op, value in fields:
        got = _field(obj, key)
        if (op == "=") != (got == value):
            return False
    return True
