"""Writes to a simulated cluster from a process that does not run its controllers.

The process that runs a cluster's controllers (or serves its API) holds every object in
memory and writes them back at each step: a command that wrote the store's file beside
it (`kupgrade upgrade --to` during `controller run`) would be overwritten by the next
step, its request lost. So the store has one writer, the process holding the cluster's
controller lock (sim/lock.py). Every other process hands over *what it changed*, field
by field against what it read, not whole objects: as an entry of the store's `inbox`
table when a writer runs (the writer takes it at its next step and commits it with that
step), or, when none does, applied under the lock onto the rows as they are now. Either
way a change made meanwhile to another field of the same object is kept, as a merge
patch keeps it on a real API server (RFC 7386, with removals said explicitly so that a
field set to null survives).
"""

from __future__ import annotations

import sqlite3
from typing import Any

import msgspec

from kupgrade.cluster.fieldops import Op, applied, field_ops

# AUTOINCREMENT: a number is never used again once its entry is taken and deleted (the
# writer reads past the last number it took).
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS inbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, body BLOB NOT NULL);"
)
Key = tuple[str, str, str]


class ObjectChange(msgspec.Struct, array_like=True):
    key: Key
    ops: list[Op] | None = None  # field changes; None with `whole` unset: deleted
    whole: dict[str, Any] | None = None  # created (or replaced when it was not read)


class Change(msgspec.Struct):
    """One commit of a process that is not the writer."""

    objects: list[ObjectChange] = msgspec.field(default_factory=list)
    meta: list[tuple[str, list[Op]]] = msgspec.field(default_factory=list)
    events: list[tuple[float, str, str, str, str]] = msgspec.field(default_factory=list)
    scheduled: list[tuple[float, Any]] = msgspec.field(default_factory=list)

    def empty(self) -> bool:
        return not (self.objects or self.meta or self.events or self.scheduled)


encode = msgspec.msgpack.Encoder().encode
decode = msgspec.msgpack.Decoder(Change).decode


def object_change(key: Key, old: Any, new: Any) -> ObjectChange | None:
    """What happened to one object between what was read and what is written now."""
    if new is None:
        return None if old is None else ObjectChange(key)
    if old is None:
        return ObjectChange(key, whole=new)
    ops = field_ops(old, new)
    return ObjectChange(key, ops=ops) if ops else None


def meta_ops(old: Any, new: Any) -> list[Op]:
    return field_ops(old, new) if old is not None else [Op([], new)]


def merged(change: ObjectChange, current: Any) -> Any:
    """The object after the change, from what it is now (None: deleted or gone). A field
    change to an object deleted meanwhile is dropped, as a patch of a missing object is
    answered 404."""
    if change.whole is not None:
        return change.whole
    if change.ops is None or current is None:
        return None
    return applied(current, change.ops)


def pending(db: sqlite3.Connection, after: int) -> list[tuple[int, Change]]:
    """Inbox entries after sequence number `after`, oldest first."""
    rows = db.execute("SELECT seq, body FROM inbox WHERE seq > ? ORDER BY seq", (after,))
    return [(int(seq), decode(body)) for seq, body in rows]
