"""SQLite persistence for the embedded default: objects, the virtual clock, the schedule
of future events and the event log, written in transactions (SPEC X3).

Everything a controller knows lives here, so a controller killed at any point restarts
from the last committed step: one step of the run loop (world events due now plus every
controller's reaction) is one transaction. Objects are kept in memory between commits
and only the changed ones are written, so a step costs what it changes, not the size of
the cluster.

Pods are most of a big cluster and a step reads a few dozen of them: they (and the other
kinds a cluster holds by the thousand) are held as their encoded bytes, packed (about 42
bytes each in a big cluster, sim/packing.py, against 470 as JSON and 2.7 KB as dicts), and
decoded when read; a pod read stays a dict until it has gone unread for a thousand steps
and two simulated minutes and nobody holds it, then goes back to its bytes (`COLD_KINDS`,
`COOL_EVERY`, `COOL_AFTER`, `WARM_LIMIT`).
"""

from __future__ import annotations

import builtins
import heapq
import sqlite3
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from kupgrade.cluster.backend import Key, Watch
from kupgrade.cluster.fieldops import applied
from kupgrade.collector import paused
from kupgrade.sim import commits, inbox
from kupgrade.sim.changelog import ChangeLog
from kupgrade.sim.commits import Batch
from kupgrade.sim.lock import ControllerLock, held_here
from kupgrade.sim.packing import MAGIC, Packer
from kupgrade.sim.store_errors import store_error

SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, body BLOB NOT NULL,
    PRIMARY KEY (kind, namespace, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS schedule (
    seq INTEGER PRIMARY KEY, at REAL NOT NULL, action BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, kind TEXT NOT NULL,
    object TEXT NOT NULL, reason TEXT NOT NULL, message TEXT NOT NULL
);
"""

# A commit of a 5,000-node cluster rewrites thousands of pods spread over its whole
# objects table. Objects are kept WITHOUT ROWID (one B-tree by their key, not a table and
# an index both written: stores made before keep their table and work the same); up to
# 64 MiB of pages stay cached between commits instead of 2 MiB, and the WAL is copied back
# every 40 MiB instead of every 4: together 1.7x faster commits on 100,000 pods.
TUNING = ("PRAGMA cache_size=-65536", "PRAGMA wal_autocheckpoint=10000")

Obj = dict[str, Any]

ROW_DELETE = "DELETE FROM objects WHERE kind=? AND namespace=? AND name=?"
ROW_PUT = "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?)"

_NONE: dict[Key, Any] = {}  # no objects of a kind (read, never written)
_encode = commits.encode
_decode = msgspec.json.decode


def _same(body: bytes) -> bytes:
    """Bytes kept as they are (no packer: too few cold objects to train one)."""
    return body


# Kinds kept as encoded bytes while nobody reads them. A 20,000-node rehearsal holds
# 500,000 pods: as dicts 1.4 GB, as JSON 250 MB, packed 45 MB. A step touches few of them
# (no library keeps JSON documents decoded on demand behind a dict's identity, which the
# controllers rely on: a pod read twice in a step is one dict, changed in place and put).
COLD_KINDS = frozenset({"Pod", "ReplicaSet", "Deployment", "PodDisruptionBudget", "ConfigMap"})
# Steps between two returns of the objects read to their bytes: a draining node's pods
# are read at every step, and decoding them at every step cost more than it saved.
COOL_EVERY = 1024
# ... and simulated seconds: twice a drain's retry (controllers/nodes, one minute), so the
# pods of a node that drains stay dicts between two retries however many steps a minute
# takes (about 1,100 at 20,000 nodes, where cooling by steps alone decoded them again at
# every retry).
COOL_AFTER = 120.0
# Objects read (warm) before they are returned to their bytes within a step too: a
# controller's first look at every pod of a 20,000-node cluster would make them all dicts.
WARM_LIMIT = 65_536


class _Index:
    def __init__(self, fn: Callable[[Obj], Iterable[str]]) -> None:
        self.fn = fn
        # The keys by value as the keys of a dict, not a set: a node's 25 pods take
        # 1.1 KB so, 2 KB as a set (20,000 nodes: 22 MB against 40).
        self.keys: dict[str, dict[Key, None]] = {}
        self.values: dict[Key, tuple[str, ...]] = {}
        # One tuple per distinct value (a node's name), not one per object: 500,000 pods
        # on 20,000 nodes keep 20,000 tuples.
        self.shared: dict[tuple[str, ...], tuple[str, ...]] = {}

    def update(self, key: Key, obj: Obj | None) -> None:
        new = tuple(self.fn(obj)) if obj is not None else ()
        old = self.values.get(key, ())
        if new == old:
            return
        new = self.shared.setdefault(new, new)
        for value in old:
            self.keys[value].pop(key, None)
        for value in new:
            self.keys.setdefault(value, {})[key] = None
        if new:
            self.values[key] = new
        else:
            self.values.pop(key, None)


# References to a warm object from the store itself (its map), the caller's variable, the
# argument and getrefcount's own; to a container inside it, its parent's slot, the loop's
# variable and getrefcount's. CPython counts references exactly.
_STORE_REFS = 4
_PART_REFS = 3


def _held_whole(obj: Obj) -> bool:
    """Whether anyone but the store holds the object itself."""
    return sys.getrefcount(obj) > _STORE_REFS


def _held(obj: Obj) -> bool:
    """Whether anyone but the store holds the object, or a list or dict inside it two
    levels down (its metadata, labels, conditions): such a holder may still change it."""
    if sys.getrefcount(obj) > _STORE_REFS:
        return True
    for part in obj.values():
        if isinstance(part, dict | list):
            if sys.getrefcount(part) > _PART_REFS:
                return True
            for inner in part.values() if isinstance(part, dict) else part:
                if isinstance(inner, dict | list) and sys.getrefcount(inner) > _PART_REFS:
                    return True
    return False


def read_meta(path: Path, key: str) -> Any:
    """One meta value read from the file without loading the cluster (None when there is
    none): a command that only copies a big cluster need not load its 100,000 pods."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        finally:
            db.close()
        return _decode(row[0]) if row else None
    except (sqlite3.Error, msgspec.DecodeError, ValueError) as exc:
        raise store_error(exc, path, "open") from None


class Store:
    """One cluster's state in one SQLite file."""

    def __init__(self, path: Path, *, shared: bool = False) -> None:
        """`shared`: the cluster may have a writer in another process (a command opens
        it so): what was read is kept as a snapshot of the file until the first commit,
        which hands over field changes when this process is not the writer then
        (sim/inbox.py)."""
        self.path = path
        self._shared = shared
        try:
            # One connection, used by whichever thread holds `lock` (the run loop, or the
            # API server answering a request between two steps).
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise store_error(exc, path, "open") from None
        try:
            self._open()
        except (sqlite3.Error, msgspec.DecodeError, ValueError, KeyError) as exc:
            self._db.close()
            raise store_error(exc, path, "open") from None

    def _open(self) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        for pragma in TUNING:
            self._db.execute(pragma)
        self._db.executescript(SCHEMA + inbox.SCHEMA)
        if self._shared:
            self._db.execute("BEGIN")  # a read snapshot, from the load to the first commit
        self._load()
        self._sorted: dict[str, builtins.list[Key]] = {}
        # Weak references in plain lists: a WeakSet's iteration guard cost more than the
        # change it reports, and a pod change is reported to three watches.
        self._watches: dict[str, builtins.list[weakref.ref[Watch]]] = {}
        self._indexes: dict[str, dict[str, _Index]] = {}
        self._observers: dict[str, builtins.list[Callable[[Key, Obj | None], None]]] = {}
        heapq.heapify(self._schedule)
        self._next_seq = max((s for _, s, _ in self._schedule), default=0) + 1
        self._dirty: set[Key] = set()
        # Keys first written since the last commit: not in the file, so a pod created and
        # gone between two commits (most of a big rollout's replacements) costs no DELETE.
        self._born: set[Key] = set()
        self.writes = 0  # objects put or deleted by this process (a run tells motion by it)
        self._dirty_meta: set[str] = set()
        # Actions scheduled since the last commit, by number (one fired before the commit
        # is dropped from here and never written), and those fired that the file holds.
        self._added: dict[int, tuple[float, Any]] = {}
        self._removed: list[int] = []
        self._events: list[tuple[float, str, str, str, str]] = []
        self.lock = threading.RLock()
        self.changes: ChangeLog | None = None  # kept while an API server serves this store
        self._writer: threading.Thread | None = None  # a commit being written behind
        self._failed: BaseException | None = None  # why a commit written behind failed
        self._poll: sqlite3.Connection | None = None  # the writer's look at its inbox
        self._poll_version = -1
        self._taken: list[int] = []  # inbox entries taken, deleted by the next commit
        self._taken_upto = 0

    @paused()  # hundreds of thousands of documents, none of them a cycle
    def _load(self) -> None:
        """Objects, meta values and the schedule, from the file into memory."""
        # Objects by kind, then key (one map: a second one by key alone cost 40 MB for
        # 500,000 pods and a write more per change).
        self._by_kind: dict[str, dict[Key, Obj | bytes]] = {}
        # Objects of COLD_KINDS decoded (warm), with the bytes the file holds for them.
        self._warm: dict[Key, bytes] = {}
        self._read: set[Key] = set()  # warm objects read since the last cooling
        self._warm_limit = WARM_LIMIT
        self._steps = 0  # since the last cooling between two steps, and when it was
        self._cooled_at = float("-inf")
        # Cold objects are packed once a run starts (`cool`): a command that only reads
        # the cluster does not pay for the dictionary (0.4 s at 5,000 nodes).
        self._packer: Packer | None = None
        self._packing_checked = False
        for kind, namespace, name, body in self._db.execute(
            "SELECT kind, namespace, name, body FROM objects"
        ):
            # one string per kind and namespace, not one per row: 500,000 pods' keys
            key = (sys.intern(kind), sys.intern(namespace), name)
            cold = kind in COLD_KINDS and isinstance(body, bytes)
            self._by_kind.setdefault(key[0], {})[key] = body if cold else _decode(body)
        self._meta: dict[str, Any] = {
            k: _decode(v) for k, v in self._db.execute("SELECT key, value FROM meta")
        }
        self._schedule: list[tuple[float, int, Any]] = [
            (at, seq, _decode(action))
            for seq, at, action in self._db.execute("SELECT seq, at, action FROM schedule")
        ]

    def close(self) -> None:
        """Close the file once a commit written behind is on disk (its error, if any,
        was the caller's to take from `wait` or the next commit)."""
        if self._writer is not None:
            self._writer.join()
        if self._poll is not None:
            self._poll.close()
        self._db.close()

    # --- objects -----------------------------------------------------------------------

    def get(self, kind: str, name: str, namespace: str = "") -> Obj | None:
        key = (kind, namespace, name)
        found = self._by_kind.get(kind, _NONE).get(key)
        if isinstance(found, bytes):
            return self._warmed(key, found)
        if found is not None and kind in COLD_KINDS:
            self._read.add(key)
        return found

    def list(self, kind: str) -> builtins.list[Obj]:
        """Objects of one kind, in (namespace, name) order."""
        return self._dicts(kind, self.keys(kind))

    def _dicts(self, kind: str, keys: builtins.list[Key]) -> builtins.list[Obj]:
        """The objects at `keys` as the dicts every reader gets, marked as read."""
        objs = self._by_kind.get(kind, _NONE)
        out = []
        for key in keys:
            found = objs[key]
            out.append(self._warmed(key, found) if isinstance(found, bytes) else found)
        if kind in COLD_KINDS:
            self._read.update(keys)
        return out

    def scan(self, kind: str) -> Iterator[tuple[Key, Obj]]:
        """Objects of one kind with their keys, in (namespace, name) order, to be read
        and not kept: what an observer (`observe`) is given, for one that starts from
        what is there. A pod held as bytes is decoded for the look and left as bytes, so
        following 500,000 pods from the start does not make them all dicts."""
        objs = self._by_kind.get(kind, {})
        for key in self.keys(kind):
            found = objs[key]
            yield key, self._look(found)

    def _look(self, value: Obj | bytes) -> Obj:
        """An object as a dict to read and not keep: a cold one decoded for the look."""
        return self._decoded(value) if isinstance(value, bytes) else value

    def _json(self, cold: bytes) -> bytes:
        """The JSON of a cold object, unpacked if it was packed (sim/packing.py)."""
        if cold[:4] == MAGIC and self._packer is not None:
            return self._packer.unpack(cold)
        return cold

    def _decoded(self, cold: bytes) -> Obj:
        """A cold object as a dict. Its row is only decoded when first read, so a row
        damaged in the file is found here, and said as the load says it (StoreError)."""
        try:
            obj = _decode(self._json(cold))
        except ValueError as exc:  # not JSON, or packed bytes that do not unpack
            raise store_error(exc, self.path, "read") from None
        if not isinstance(obj, dict):
            raise store_error(ValueError("a row is not a JSON object"), self.path, "read")
        return obj

    def _warmed(self, key: Key, body: bytes) -> Obj:
        """A cold object decoded, kept as the one dict every reader gets until cooled
        (with its bytes, packed or not, for the cooling that turns it back)."""
        obj = self._decoded(body)
        self._by_kind[key[0]][key] = obj
        self._warm[key] = body
        self._read.add(key)
        if len(self._warm) > self._warm_limit:
            # a look at every pod at once (a controller's first pass): read or not,
            # whatever nobody holds goes back, so the look costs what it holds
            self._cool(held=_held, recent=False)
        return obj

    def cool(self) -> None:
        """Called between two steps of a run, when no reader holds an object it is still
        changing: once COOL_EVERY calls and COOL_AFTER simulated seconds have passed
        since the last time, the objects not read since then and not changed since the
        last commit go back to their bytes (the changed ones wait for the commit that
        encodes them)."""
        if not self._packing_checked:
            self._pack_cold()
        self._steps += 1
        if self._steps < COOL_EVERY:
            return
        now = float(self._meta.get("now", 0.0))
        if now - self._cooled_at >= COOL_AFTER:
            self._steps, self._cooled_at = 0, now
            self._cool(held=_held_whole, recent=True)

    def _pack_cold(self) -> None:
        """At the first step of a run: a dictionary trained on the cold objects when
        there are enough of them (sim/packing.py), and every cold object packed with it;
        those that go cold later are packed as they do."""
        self._packing_checked = True
        cold = [self._by_kind[kind] for kind in sorted(COLD_KINDS) if kind in self._by_kind]
        self._packer = Packer.for_bodies(v for objects in cold for v in objects.values())
        if self._packer is None:
            return
        for objects in cold:
            for key, value in objects.items():  # values replaced, the keys left as they are
                if isinstance(value, bytes):  # all: a damaged row unpacks to what it was
                    objects[key] = self._packer.pack(value)

    def _cool(self, held: Callable[[Obj], bool], *, recent: bool) -> None:
        """Objects unchanged since the last commit and held by nobody else back to
        their bytes; with `recent`, only those not read since the last cooling too (a
        clock's second chance: a draining node's pods, read at every step, stay dicts).
        One still held (a reader's variable, a list it made) stays a dict: a reader that
        changes it and puts it later must find the same dict, as every reader of it
        does. Between steps, readers hold whole objects if anything (a tracker's nodes):
        `held` looks at the object alone there, and two levels down within a step."""
        by_kind, warm = self._by_kind, self._warm
        pack = self._packer.pack if self._packer is not None else _same
        # the set differences run in C: only the objects that may go cold are visited
        stay = self._read | self._dirty if recent else self._dirty
        for key in warm.keys() - stay:
            objects = by_kind[key[0]]
            obj = objects[key]
            if not isinstance(obj, dict) or not held(obj):
                body = warm.pop(key)
                # what a commit wrote is JSON: packed now, as it goes cold
                objects[key] = pack(body) if body[:4] != MAGIC else body
        self._read = set()
        # those still kept (a list of every pod held) are not looked at again at once
        self._warm_limit = max(WARM_LIMIT, 2 * len(warm))

    def keys(self, kind: str) -> builtins.list[Key]:
        """The keys of one kind, in (namespace, name) order (sorted once per change of
        the set of keys; not to be changed by the caller)."""
        keys = self._sorted.get(kind)
        if keys is None:
            keys = self._sorted[kind] = sorted(self._by_kind.get(kind, {}))
        return keys

    def put(self, obj: Obj) -> Obj:
        meta = obj["metadata"]
        key = (str(obj["kind"]), str(meta.get("namespace", "")), str(meta["name"]))
        objects = self._by_kind.get(key[0])
        if objects is None:
            objects = self._by_kind[key[0]] = {}
        added = key not in objects
        if added:
            self._sorted.pop(key[0], None)
            if key not in self._dirty:  # nor deleted since the last commit
                self._born.add(key)
        objects[key] = obj
        self._dirty.add(key)
        if self.changes is not None:
            self.changes.record("ADDED" if added else "MODIFIED", obj)
        self._changed(key, obj)
        return obj

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        key = (kind, namespace, name)
        gone = self._by_kind.get(kind, _NONE).pop(key, None)
        if gone is not None:
            self._warm.pop(key, None)
            self._sorted.pop(kind, None)
            self._dirty.add(key)
            if self.changes is not None:
                self.changes.record("DELETED", self._look(gone))
            self._changed(key, None)

    def keep_changes(self, keep: int = 50_000) -> ChangeLog:
        """Number every change from here on (metadata.resourceVersion) and keep the last
        `keep` of them for watches to resume from, as the API server's watch cache does.
        The counter is stored, so versions only grow across restarts; the log opens one
        past it, so a version from an earlier process is older than anything kept (410)."""
        if self.changes is None:
            self.changes = ChangeLog(self, int(self.meta("resourceVersion", 1)) + 1, keep)
            self.set_meta("resourceVersion", self.changes.version)
        return self.changes

    def _changed(self, key: Key, obj: Obj | None) -> None:
        self.writes += 1
        for index in self._indexes.get(key[0], {}).values():
            index.update(key, obj)
        for observer in self._observers.get(key[0], ()):
            observer(key, obj)
        self.touch(key)

    def observe(self, kind: str, fn: Callable[[Key, Obj | None], None]) -> None:
        """Call `fn(key, object)` after every change of an object of `kind` (None when
        it is deleted), for what must follow the objects as they change."""
        self._observers.setdefault(kind, []).append(fn)

    def touch(self, key: Key) -> None:
        """Queue `key` for every watch of its kind, changed or not (a requeue)."""
        refs = self._watches.get(key[0], ())
        for ref in refs:
            watch = ref()
            if watch is None:  # its owner is gone: forget it
                self._watches[key[0]] = [r for r in refs if r() is not None]
            else:
                watch.add(key)

    def watch(self, *kinds: str) -> Watch:
        """A queue of changed keys of these kinds (see Watch); dropped with its owner."""
        watch = Watch(k for kind in kinds for k in self._by_kind.get(kind, {}))
        for kind in kinds:
            self._watches.setdefault(kind, []).append(weakref.ref(watch))
        return watch

    @paused()  # a set per value, a tuple per object: none of them a cycle
    def index(self, kind: str, name: str, fn: Callable[[Obj], Iterable[str]]) -> None:
        """Keep objects of `kind` findable by the values `fn` gives (a field or label selector)."""
        if name in self._indexes.get(kind, {}):
            return
        index = _Index(fn)
        for key, obj in self._by_kind.get(kind, {}).items():
            index.update(key, self._look(obj))
        self._indexes.setdefault(kind, {})[name] = index

    def lookup(self, kind: str, name: str, value: str) -> builtins.list[Obj]:
        """Objects whose index `name` holds `value`, in (namespace, name) order."""
        return self._dicts(kind, sorted(self._indexes[kind][name].keys.get(value, ())))

    # --- meta, schedule, events -----------------------------------------------------------

    def meta(self, key: str, default: Any = None) -> Any:
        return self._meta.get(key, default)

    def metas(self, prefix: str) -> dict[str, Any]:
        """Every meta value whose key starts with `prefix`, by the rest of the key."""
        return {
            k.removeprefix(prefix): v
            for k, v in sorted(self._meta.items())
            if k.startswith(prefix) and v is not None
        }

    def set_meta(self, key: str, value: Any) -> None:
        self._meta[key] = value
        self._dirty_meta.add(key)

    def schedule(self, at: float, action: Any) -> None:
        seq = self._next_seq
        self._next_seq += 1
        heapq.heappush(self._schedule, (at, seq, action))
        self._added[seq] = (at, action)

    def next_at(self) -> float | None:
        return self._schedule[0][0] if self._schedule else None

    def pop_due(self, now: float) -> builtins.list[Any]:
        """Actions due at or before `now`, in the order they were scheduled for."""
        due = []
        while self._schedule and self._schedule[0][0] <= now:
            _, seq, action = heapq.heappop(self._schedule)
            if self._added.pop(seq, None) is None:
                self._removed.append(seq)
            due.append(action)
        return due

    def pending(self) -> int:
        return len(self._schedule)

    def event(self, at: float, kind: str, obj: str, reason: str, message: str) -> None:
        self._events.append((at, kind, obj, reason, message))

    def events(self) -> builtins.list[dict[str, Any]]:
        self.wait()
        try:
            rows = self._db.execute(
                "SELECT at, kind, object, reason, message FROM events ORDER BY seq"
            ).fetchall()
        except sqlite3.Error as exc:
            raise store_error(exc, self.path, "read") from None
        rows += [tuple(e) for e in self._events]
        return [
            {"at": at, "kind": kind, "object": obj, "reason": reason, "message": message}
            for at, kind, obj, reason, message in rows
        ]

    # --- transactions -------------------------------------------------------------------

    def commit(self, *, behind: bool = False) -> None:
        """Write every change since the last commit in one transaction.

        `behind`: the changes are encoded now and written by a thread of their own while
        the caller goes on (see kupgrade/sim/commits.py); the next commit, `wait`,
        `events` and `close` wait for it first. A commit written behind that fails leaves
        the file at the commit before it, and every later commit raises its error: the
        changes it held are no longer kept in memory, so none may be written after it.
        """
        self.wait()
        if self._shared and self._db.in_transaction:
            if not held_here(self.path.parent):
                self._commit_as_guest()
                return
            self._db.execute("COMMIT")  # the writer after all: its memory is the truth
            self._shared = False
        batch = self._batch()
        if len(self._warm) > self._warm_limit:  # what was written goes back to bytes too
            self._cool(held=_held, recent=True)
        if not behind:
            self._write(batch)
            self._clear()
            return
        self._clear()
        self._writer = threading.Thread(
            target=self._write_behind, args=(batch,), name="store-commit", daemon=True
        )
        self._writer.start()

    def writing(self) -> bool:
        """Whether a commit is still being written behind the caller."""
        return self._writer is not None and self._writer.is_alive()

    def wait(self) -> None:
        """Return once a commit written behind is on disk; raise its error if it failed."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.join()
        if self._failed is not None:
            raise self._failed

    def _batch(self) -> Batch:
        """Every row the changes since the last commit write, encoded now: the objects
        change in place as soon as the caller goes on."""
        by_kind, born, warm = self._by_kind, self._born, self._warm
        written, gone = [], []
        for key in self._dirty:  # in no order: the writing sorts them (commits.AT_ONCE)
            obj = by_kind.get(key[0], _NONE).get(key)
            if obj is not None:
                body = self._json(obj) if isinstance(obj, bytes) else _encode(obj)
                written.append((*key, body))
                if key[0] in COLD_KINDS and isinstance(obj, dict):  # what cooling makes it
                    warm[key] = body
            elif key not in born:  # a key born since the last commit is not in the file
                gone.append(key)
        return Batch(
            gone=gone,
            objects=written,
            meta=[(name, _encode(self._meta[name])) for name in self._dirty_meta],
            unscheduled=[(seq,) for seq in self._removed],
            scheduled=[(seq, at, _encode(a)) for seq, (at, a) in self._added.items()],
            events=list(self._events),
            taken=[(seq,) for seq in self._taken],
        )

    def _write(self, batch: Batch, *, behind: bool = False) -> None:
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise store_error(exc, self.path, "write") from None
        try:
            commits.write(db, batch, at_once=behind)
            db.execute("COMMIT")
        except BaseException as exc:
            # SQLite may have rolled back itself (a full disk does): only roll back what
            # is still open, and report the cause, not the rollback's complaint.
            if db.in_transaction:
                db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise store_error(exc, self.path, "write") from None
            raise

    def _write_behind(self, batch: Batch) -> None:
        try:
            self._write(batch, behind=True)
        except BaseException as exc:  # raised in the caller's thread by the next wait
            self._failed = exc

    def _clear(self) -> None:
        self._taken.clear()
        self._dirty.clear()
        self._born.clear()
        self._dirty_meta.clear()
        self._added.clear()
        self._removed.clear()
        self._events.clear()

    # --- one writer (sim/inbox.py) --------------------------------------------------------

    def take_inbox(self) -> bool:
        """The writer: apply what other processes handed over since the last look, as
        changes of this process (watches and observers see them; the next commit writes
        them and deletes the entries). Cheap when nothing came: one PRAGMA."""
        if self._poll is None:
            self._poll = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            version = self._poll.execute("PRAGMA data_version").fetchone()[0]
            if version == self._poll_version:
                return False
            self._poll_version = version
            found = inbox.pending(self._poll, self._taken_upto)
        except sqlite3.Error as exc:
            raise store_error(exc, self.path, "read") from None
        for seq, change in found:
            self._take(change)
            self._taken.append(seq)
            self._taken_upto = seq
        return bool(found)

    def _take(self, change: inbox.Change) -> None:
        for item in change.objects:
            kind, namespace, name = item.key
            new = inbox.merged(item, self.get(kind, name, namespace))
            if new is None:
                self.delete(kind, name, namespace)
            else:
                self.put(new)
        for key, ops in change.meta:
            self.set_meta(key, applied(self._meta.get(key), ops))
        self._events.extend(change.events)
        for at, action in change.scheduled:
            self.schedule(at, action)

    def _commit_as_guest(self) -> None:
        """Hand this process's changes to the writer (its inbox) when one runs, or write
        them under the lock onto the rows as they are now when none does."""
        db = self._db
        lock: ControllerLock | None = None
        try:
            change = self._guest_change()
            db.execute("COMMIT")  # the end of the snapshot the changes were read against
            if not change.empty():
                lock = ControllerLock.try_hold(self.path.parent)
                db.execute("BEGIN IMMEDIATE")
                if lock is None:  # a writer runs: it takes the change at its next step
                    db.execute("INSERT INTO inbox (body) VALUES (?)", (inbox.encode(change),))
                else:  # none runs: what an earlier writer left untaken, then this change
                    for _, earlier in inbox.pending(db, 0):
                        self._write_change(earlier)
                    db.execute("DELETE FROM inbox")
                    self._write_change(change)
                db.execute("COMMIT")
            db.execute("BEGIN")  # the next commit's changes are read against the file again
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise store_error(exc, self.path, "write") from None
        finally:
            if lock is not None:
                lock.release()
        for key in self._dirty:  # the bytes kept for these are not what the file holds now
            self._warm.pop(key, None)
        self._clear()

    def _guest_change(self) -> inbox.Change:
        """This process's changes against the snapshot it read (objects, meta, events,
        scheduled actions)."""
        db = self._db
        out = inbox.Change(events=list(self._events))
        for key in sorted(self._dirty):
            row = db.execute(
                "SELECT body FROM objects WHERE kind=? AND namespace=? AND name=?", key
            ).fetchone()
            found = inbox.object_change(
                key, _decode(row[0]) if row else None, self.get(key[0], key[2], key[1])
            )
            if found is not None:
                out.objects.append(found)
        for name in sorted(self._dirty_meta):
            row = db.execute("SELECT value FROM meta WHERE key=?", (name,)).fetchone()
            ops = inbox.meta_ops(_decode(row[0]) if row else None, self._meta.get(name))
            if ops:
                out.meta.append((name, ops))
        out.scheduled = [self._added[seq] for seq in sorted(self._added)]
        return out

    def _write_change(self, change: inbox.Change) -> None:
        """A guest's change applied onto the file's rows, inside the caller's transaction."""
        db = self._db
        for item in change.objects:
            row = db.execute(
                "SELECT body FROM objects WHERE kind=? AND namespace=? AND name=?", item.key
            ).fetchone()
            new = inbox.merged(item, _decode(row[0]) if row else None)
            if new is None:
                db.execute(ROW_DELETE, item.key)
            else:
                db.execute(ROW_PUT, (*item.key, _encode(new)))
        for name, ops in change.meta:
            row = db.execute("SELECT value FROM meta WHERE key=?", (name,)).fetchone()
            value = applied(_decode(row[0]) if row else None, ops)
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, _encode(value)))
        db.executemany(commits.ROW_BY_ROW["events"], change.events)
        for at, action in change.scheduled:
            db.execute(
                "INSERT INTO schedule SELECT coalesce(max(seq), 0) + 1, ?, ? FROM schedule",
                (at, _encode(action)),
            )
