"""A cluster store's SQLite failures in words that say what to do: damaged, full,
read-only or busy (SPEC X3: a failed write leaves the file at the last commit)."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from kupgrade.errors import KupgradeError


class StoreError(KupgradeError):
    """The store cannot be read or written: damaged, full, read-only or busy."""


_CORRUPT = ("SQLITE_CORRUPT", "SQLITE_NOTADB")
_FULL = ("SQLITE_FULL",)
_READ_ONLY = ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")


def store_error(exc: Exception, path: Path, doing: str) -> StoreError:
    """What went wrong with a cluster's store, in words that say what to do."""
    name = path.parent.name
    code = str(getattr(exc, "sqlite_errorname", ""))
    if code.startswith(_FULL) or (code.startswith("SQLITE_IOERR") and _no_room(path)):
        return StoreError(
            f"cannot {doing} the store of cluster {name}: no space left on the device",
            file=str(path),
            hint="free some space and run the command again; nothing of the unfinished "
            "step was written",
        )
    if code.startswith(_READ_ONLY) or "readonly" in str(exc):
        return StoreError(
            f"cannot {doing} the store of cluster {name}: its home is read-only or not writable",
            file=str(path),
            hint="make the kupgrade home writable (or point KUPGRADE_HOME elsewhere)",
        )
    if code.startswith("SQLITE_BUSY") or code.startswith("SQLITE_LOCKED"):
        return StoreError(
            f"cannot {doing} the store of cluster {name}: another process holds it",
            file=str(path),
            hint="wait for the other kupgrade command to finish",
        )
    if code.startswith(_CORRUPT) or isinstance(exc, msgspec.DecodeError | ValueError | KeyError):
        return StoreError(
            f"the store of cluster {name} is damaged ({' '.join(str(exc).split())})",
            file=str(path),
            hint=f"delete the cluster with `kupgrade cluster delete {name}` and create it again",
        )
    return StoreError(
        f"cannot {doing} the store of cluster {name}: {' '.join(str(exc).split())}",
        file=str(path),
    )


def _no_room(path: Path) -> bool:
    """Whether the store's file system is (nearly) full: SQLite reports a write into a full
    disk as an I/O error when it happens in its WAL index or journal, not as SQLITE_FULL."""
    try:
        info = os.statvfs(path.parent)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < 256 * 1024
