"""The members a distributed rehearsal gives back, put in place crash-safely.

SQLite commits one file at a time, so the fleet goes in three moves, each safe to kill:
1. every member's new database is staged whole beside the fleet (`.install/NAME.db`,
   written under a temporary name and renamed) — killed here, the fleet's store says
   nothing of it and the next run starts the parts again;
2. the fleet's store commits the merged rehearsal together with the list of members to
   install — from here the rehearsal is done, and the list says what is left;
3. each staged database is copied into its member's store with SQLite's backup (one
   transaction: the member is the old one or the new one), then its staged file goes;
   the list is cleared last. A run killed in this move finishes it when the fleet is
   next opened (`finish`), before any member is read.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from kupgrade.sim.fleet.rehearsal import TICK
from kupgrade.sim.fleet.shipping import Shipped, unpack_db
from kupgrade.sim.store import Store

PENDING = "install"  # fleet meta: the members whose staged databases are still to go in
STAGE = ".install"


def stage(root: Path, members: list[Shipped], tick: int, now: float) -> None:
    """Move 1: each member's database whole in the fleet's stage, at the fleet's tick
    and instant (as the single run's last commit leaves every member)."""
    where = root / STAGE
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir()
    for shipped in members:
        part = where / f"{shipped.name}.db.part"
        unpack_db(shipped.db, part)
        store = Store(part)
        try:
            store.set_meta(TICK, tick)  # the members are the fleet's, one tick as it
            store.set_meta("now", max(now, float(store.meta("now", 0))))
            store.commit()
        finally:
            store.close()
        _fsync(part)
        os.replace(part, where / f"{shipped.name}.db")


def put_in_place(root: Path, fleet: Store, clusters: Path) -> None:
    """Move 3 (and its end after a crash): every staged member into its store; the
    pending list cleared. Nothing to do when the list is empty."""
    pending = list(fleet.meta(PENDING) or [])
    if not pending:
        return
    where = root / STAGE
    for name in pending:
        staged = where / f"{name}.db"
        if not staged.exists():
            continue  # put in place before a crash
        source = sqlite3.connect(f"file:{staged}?mode=ro", uri=True)
        target = sqlite3.connect(clusters / name / "cluster.db")
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()
        staged.unlink()
    fleet.set_meta(PENDING, [])
    fleet.commit()
    shutil.rmtree(where, ignore_errors=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
