"""Simulated clusters as bytes, so that a rehearsal can run where the files are not: a Ray
worker on another machine of a Ray cluster gets a part of a fleet this way, and gives it
back the same way.

A cluster is its home's small files and its SQLite store, taken with SQLite's backup API
into memory and serialized (a store in WAL mode is not one file, and a copy of the file
alone can miss its last commits); on the other side the bytes are loaded into memory and
backed up into a file, so what arrives is always a whole database or nothing.
"""

from __future__ import annotations

import sqlite3
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from kupgrade.errors import KupgradeError
from kupgrade.sim.homes import spec_in
from kupgrade.sim.profile import Spec
from kupgrade.sim.store import Store

DB = "cluster.db"
SKIPPED = (".lock", "-wal", "-shm", "-journal")


@dataclass
class Shipped:
    """One cluster's home: its store's bytes and its other files, by relative path."""

    name: str
    db: bytes
    files: dict[str, bytes] = field(default_factory=dict)


def pack_db(path: Path) -> bytes:
    """The database at `path` as one consistent image (its WAL folded in)."""
    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    memory = sqlite3.connect(":memory:")
    try:
        source.backup(memory)
        image = bytearray(memory.serialize())
    finally:
        source.close()
        memory.close()
    # The backup keeps the source's header, which says WAL (file format 2 at offsets 18
    # and 19); an image loaded into memory cannot open a WAL database, so it is marked
    # a rollback-journal one (1), as `PRAGMA journal_mode=DELETE` would on disk.
    if image[18:20] == b"\x02\x02":
        image[18:20] = b"\x01\x01"
    return bytes(image)


def unpack_db(data: bytes, path: Path) -> None:
    """Write the image `data` to the database at `path` in one transaction (a database
    there is replaced whole, or left as it was)."""
    memory = sqlite3.connect(":memory:")
    target = sqlite3.connect(path)
    try:
        try:
            memory.deserialize(data)
            memory.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise KupgradeError(
                f"a shipped store for {path.parent.name} is not a database ({exc})",
                hint="run the rehearsal again; report it if it repeats",
            ) from None
        memory.backup(target)
    finally:
        memory.close()
        target.close()


def pack(name: str, root: Path, db: str = DB) -> Shipped:
    """The cluster at `root` (its store committed) as bytes."""
    files = {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and not p.name.startswith(db)
        and not p.name.endswith(SKIPPED)
        and "requests" not in p.relative_to(root).parts
    }
    return Shipped(name, pack_db(root / db), files)


def unpack(shipped: Shipped, root: Path, db: str = DB) -> Path:
    """The cluster's home made again at `root`."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in shipped.files.items():
        where = (root / rel).resolve()
        if root.resolve() not in where.parents:
            raise KupgradeError(
                f"a shipped file of {shipped.name} lies outside its home: {rel}",
                hint="run the rehearsal again; report it if it repeats",
            )
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_bytes(data)
    unpack_db(shipped.db, root / db)
    return root


def opened_members(
    members: list[Shipped], where: Path, stack: ExitStack
) -> dict[str, tuple[Path, Store, Spec]]:
    """Shipped members made again under `where/clusters`, their stores open until `stack`
    closes: what a fleet rehearsal takes as its members."""
    out: dict[str, tuple[Path, Store, Spec]] = {}
    for shipped in members:
        home = unpack(shipped, where / "clusters" / shipped.name)
        store = Store(home / DB)
        stack.callback(store.close)
        out[shipped.name] = (home, store, spec_in(home, store))
    return out
