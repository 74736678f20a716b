"""One kind's objects, listed once and kept current by a watch, as client-go's shared
informers keep them: a controller acting over the API reads from memory and only its
writes travel (SPEC X2; client-go tools/cache reflector.go: list, then watch from the list's
resourceVersion with allowWatchBookmarks, relist on 410 Gone).

The watch runs in a thread that only queues what arrives; the controllers' thread
applies the queue when it asks for a version (`reach`), so the cache and the controllers'
watches change only between two reads, never under a controller's feet.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from kupgrade.cluster.backend import Key, Obj
from kupgrade.errors import InputError

WATCH_SECONDS = 300  # one watch request's timeoutSeconds; the thread opens the next
PATIENCE = 60.0  # wall seconds a watch may lag the server before the run gives up
RECONNECT_SECONDS = 30.0  # how long a cut watch is opened again before the run gives up


def key(obj: Obj) -> Key:
    meta = obj["metadata"]
    return (str(obj["kind"]), str(meta.get("namespace", "")), str(meta["name"]))


def number(version: Any) -> int:
    """A resourceVersion as a number (0 for what is not one: only decimal digits, what
    int() reads, so a hostile "²" is not one)."""
    text = str(version)
    return int(text) if text.isdecimal() else 0


def version_of(obj: Obj) -> int:
    return number(obj.get("metadata", {}).get("resourceVersion"))


class Informer:
    def __init__(self, http: httpx.Client, kind: str, path: str) -> None:
        self.http = http
        self.kind = kind
        self.path = path
        self.objects: dict[Key, Obj] = {}
        self.by_node: dict[str, set[Key]] = {}
        self._sorted: list[Key] | None = None
        self._queue: list[tuple[str, Any]] = []
        self._seen = 0  # the newest version the watch has delivered (events or bookmarks)
        self._failure = ""
        self._cond = threading.Condition()
        self._stop = threading.Event()
        items, self._seen = self._list()
        for obj in items:
            self.put(obj)
        self._thread = threading.Thread(target=self._watch, daemon=True, name=f"watch {kind}")
        self._thread.start()

    # --- the watch thread -----------------------------------------------------------------

    def _list(self) -> tuple[list[Obj], int]:
        response = self.http.get(self.path)
        response.raise_for_status()
        doc = response.json()
        kind = doc.get("kind", "").removesuffix("List") or self.kind
        items = [{**o, "kind": o.get("kind", kind)} for o in doc.get("items") or []]
        return items, version_of(doc)

    def _watch(self) -> None:
        """Watch, and watch again from the last version seen when a watch is cut (a
        server restart, a dropped connection), backing off as client-go's reflector does
        (its ListAndWatch loop with a backoff manager); a relist answers a 410. The run
        gives up only once the server has been unreachable for RECONNECT_SECONDS."""
        failing_since: float | None = None
        pause = 0.1
        while not self._stop.is_set():
            try:
                self._stream()
                failing_since, pause = None, 0.1
            except (httpx.HTTPError, ValueError) as exc:
                if self._stop.is_set():
                    return
                now = time.monotonic()
                failing_since = failing_since if failing_since is not None else now
                if now - failing_since > RECONNECT_SECONDS:
                    with self._cond:
                        self._failure = f"{type(exc).__name__}: {exc}"
                        self._cond.notify_all()
                    return
                self._stop.wait(pause)
                pause = min(pause * 2, 5.0)

    def _stream(self) -> None:
        params = {
            "watch": "1",
            "resourceVersion": str(self._seen),
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(WATCH_SECONDS),
        }
        with self.http.stream("GET", self.path, params=params, timeout=None) as response:
            if response.status_code == 410:
                self._relist()
                return
            response.raise_for_status()
            for line in response.iter_lines():
                if self._stop.is_set():
                    return
                if not line.strip():
                    continue
                event = json.loads(line)
                kind_of_change, obj = event.get("type"), event.get("object") or {}
                if kind_of_change == "ERROR":
                    if obj.get("code") == 410:
                        self._relist()
                    return
                with self._cond:
                    if kind_of_change != "BOOKMARK":
                        self._queue.append((str(kind_of_change), {**obj, "kind": self.kind}))
                    self._seen = max(self._seen, version_of(obj))
                    self._cond.notify_all()

    def _relist(self) -> None:
        """The watch fell behind what the server keeps (410): the whole list again."""
        items, version = self._list()
        with self._cond:
            self._queue.append(("RELIST", items))
            self._seen = version
            self._cond.notify_all()

    # --- the controllers' thread ----------------------------------------------------------

    def reach(self, version: int, touch: Callable[[Key], None]) -> None:
        """Wait until the watch has delivered everything up to `version`, then apply it:
        changed objects replace cached ones and their keys go to `touch` (a write of our
        own that the cache already holds is not a change)."""
        with self._cond:
            if not self._cond.wait_for(
                lambda: self._seen >= version or self._failure, timeout=PATIENCE
            ):
                self._failure = f"no event up to version {version} in {PATIENCE:.0f} s"
            if self._failure:
                raise InputError(
                    f"the watch of {self.kind} objects stopped: {self._failure}",
                    hint="is the API server still up? run `kupgrade controller run` again",
                )
            queue, self._queue = self._queue, []
        for kind_of_change, obj in queue:
            if kind_of_change == "RELIST":
                self._replace(obj, touch)
            elif kind_of_change == "DELETED":
                if key(obj) in self.objects:
                    self.drop(key(obj))
                    touch(key(obj))
            else:
                cached = self.objects.get(key(obj))
                if cached is None or version_of(obj) > version_of(cached):
                    self.put(obj)
                    touch(key(obj))

    def _replace(self, items: list[Obj], touch: Callable[[Key], None]) -> None:
        fresh = {key(o): o for o in items}
        for k in [k for k in self.objects if k not in fresh]:
            self.drop(k)
            touch(k)
        for k, obj in fresh.items():
            if version_of(obj) != version_of(self.objects.get(k, {})):
                self.put(obj)
                touch(k)

    def put(self, obj: Obj) -> None:
        k = key(obj)
        if k not in self.objects:
            self._sorted = None
        self._unindex(k)
        self.objects[k] = obj
        node = (obj.get("spec") or {}).get("nodeName")
        if node:
            self.by_node.setdefault(str(node), set()).add(k)

    def drop(self, k: Key) -> None:
        self._unindex(k)
        if self.objects.pop(k, None) is not None:
            self._sorted = None

    def _unindex(self, k: Key) -> None:
        old = self.objects.get(k)
        node = (old.get("spec") or {}).get("nodeName") if old else None
        if node:
            self.by_node.get(str(node), set()).discard(k)

    def listed(self) -> list[Obj]:
        """Every object, in (namespace, name) order as the simulator's store lists them."""
        if self._sorted is None:
            self._sorted = sorted(self.objects)
        return [self.objects[k] for k in self._sorted]

    def on_node(self, node: str) -> list[Obj]:
        return [self.objects[k] for k in sorted(self.by_node.get(node, ()))]

    def stop(self) -> None:
        self._stop.set()
