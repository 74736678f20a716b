"""What one commit of a cluster's store writes, and two ways of writing it (SPEC X3).

A commit is encoded on the run's own thread, because the run changes its objects in
place as soon as it goes on. The writing can then happen on another thread while the run
goes on (`Store.commit(behind=True)`): SQLite works without the GIL, but only inside one
call. `executemany` takes the GIL back for every row it binds, and a thread that wants
the GIL back from a busy one waits for the switch interval (5 ms) each time, so a
row-by-row writer beside a busy run finishes only after the run stops (measured: no
overlap at all). Each table's rows therefore go to SQLite as one JSON array of their
scalar columns, with every bytes column (an encoded object, a meta value, an action)
kept as a slice of one blob, and one INSERT … SELECT FROM json_each(?) writes them all in
a single call. Python's sqlite3 has no way to bind an array (SQLite's carray extension is
not in its build), which is why the rows travel as JSON.

SQLite's JSON functions end a text at an escaped NUL (`\\u0000`), so a batch whose text
holds one is written row by row instead; both ways write the same rows (tested).
"""

from __future__ import annotations

import itertools
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import msgspec

_plain = msgspec.json.Encoder().encode
# The bytes an object is kept as: a row of the file, a cold object in memory, an entry of
# the change log (keys sorted, so equal objects are equal bytes).
encode = msgspec.json.Encoder(order="sorted").encode
_NUL = b"\\u0000"

Row = tuple[Any, ...]


@dataclass
class Batch:
    """Every row one commit writes, in the order the statements run."""

    gone: list[Row]  # (kind, namespace, name) of objects deleted since the last commit
    objects: list[Row]  # (kind, namespace, name, body) written or rewritten
    meta: list[Row]  # (key, value)
    unscheduled: list[Row]  # (seq,) of actions fired since the last commit
    scheduled: list[Row]  # (seq, at, action) added since the last commit
    events: list[Row]  # (at, kind, object, reason, message)
    taken: list[Row] = field(default_factory=list)  # (seq,) of inbox entries applied


ROW_BY_ROW = {
    "gone": "DELETE FROM objects WHERE kind=? AND namespace=? AND name=?",
    "objects": "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?)",
    "meta": "INSERT OR REPLACE INTO meta VALUES (?, ?)",
    "unscheduled": "DELETE FROM schedule WHERE seq=?",
    "scheduled": "INSERT INTO schedule VALUES (?, ?, ?)",
    "events": "INSERT INTO events (at, kind, object, reason, message) VALUES (?, ?, ?, ?, ?)",
    "taken": "DELETE FROM inbox WHERE seq=?",
}

# ?1 is the rows' JSON array; in it, a bytes column is its [start, length] in the blob ?2.
AT_ONCE = {
    "gone": "DELETE FROM objects WHERE (kind, namespace, name) IN "
    "(SELECT value->>0, value->>1, value->>2 FROM json_each(?1))",
    # In key order, sorted by SQLite off the GIL: consecutive rows land on the same pages.
    "objects": "INSERT OR REPLACE INTO objects SELECT value->>0, value->>1, value->>2, "
    "substr(?2, value->>3, value->>4) FROM json_each(?1) ORDER BY 1, 2, 3",
    "meta": "INSERT OR REPLACE INTO meta SELECT value->>0, substr(?2, value->>1, value->>2) "
    "FROM json_each(?1)",
    "unscheduled": "DELETE FROM schedule WHERE seq IN (SELECT value->>0 FROM json_each(?1))",
    "scheduled": "INSERT INTO schedule SELECT value->>0, value->>1, "
    "substr(?2, value->>2, value->>3) FROM json_each(?1)",
    # In the array's order: the events' sequence numbers are their order.
    "events": "INSERT INTO events (at, kind, object, reason, message) SELECT value->>0, "
    "value->>1, value->>2, value->>3, value->>4 FROM json_each(?1) ORDER BY key",
    "taken": "DELETE FROM inbox WHERE seq IN (SELECT value->>0 FROM json_each(?1))",
}


def packed(rows: list[Row]) -> tuple[bytes, bytes | None]:
    """The rows as one JSON array, a last column of bytes replaced by its [start, length]
    (from 1, as SQL's substr counts) in one blob of them all (None: no such column)."""
    if not rows or not isinstance(rows[0][-1], bytes):
        return _plain(rows), None
    blobs = [row[-1] for row in rows]
    starts = itertools.accumulate((len(b) for b in blobs), initial=1)
    index = [
        (*row[:-1], start, len(blob)) for row, start, blob in zip(rows, starts, blobs, strict=False)
    ]
    # One byte more: SQLite's substr of a blob that is empty gives NULL, not an empty blob.
    return _plain(index), b"".join(blobs) + b"."


def write(db: sqlite3.Connection, batch: Batch, *, at_once: bool) -> None:
    """Every row of the batch, inside the caller's transaction. `at_once`: each table in
    one call (for a thread beside a busy one), row by row where its text holds a NUL;
    otherwise row by row, which is quicker when nothing else waits for the GIL."""
    for name, statement in AT_ONCE.items():
        rows = getattr(batch, name)
        if not rows:
            continue
        if at_once:
            text, blob = packed(rows)
            if _NUL not in text:
                db.execute(statement, (text,) if blob is None else (text, blob))
                continue
        db.executemany(ROW_BY_ROW[name], sorted(rows) if name == "objects" else rows)
