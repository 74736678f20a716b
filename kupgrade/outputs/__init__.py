"""Writing what the user asked for, the way Unix tools do.

A new or regular file is written all or nothing (a temporary sibling, then a rename), with
the permissions the user's umask gives (or the old file's, when one is replaced), so a
graph written for another service can be read by it. Anything else the user names is
written to directly, never replaced: `-o /dev/null`, `-o /dev/stdout`, a FIFO or a
process substitution stay what they are. A directory is refused.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from kupgrade.errors import KupgradeError
from kupgrade.intake.files import kind_of, os_problem


def umask() -> int:
    """The process umask (read by setting it; set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def created_mode(directory: bool = False) -> int:
    return (0o777 if directory else 0o666) & ~umask()


def staging_dir(parent: Path, prefix: str) -> Path:
    """A temporary sibling directory that becomes the output: made with the umask's mode
    (mkdtemp's 0700 would survive the rename and hide the output from its readers)."""
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    staging.chmod(created_mode(directory=True))
    return staging


def write_output(path: Path, data: bytes) -> None:
    """Write `data` to `path` as described above; KupgradeError naming the path if not."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise KupgradeError(f"cannot write: {os_problem(exc)}", file=str(path)) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise KupgradeError("is a directory", file=str(path), hint="name a file to write")
    if info is not None and kind_of(info.st_mode) is not None:
        _write_through(path, data)
        return
    mode = stat.S_IMODE(info.st_mode) if info is not None else created_mode()
    _replace(path, data, mode)


def _write_through(path: Path, data: bytes) -> None:
    try:
        with open(path, "wb", buffering=0) as handle:
            view = memoryview(data)
            while view:
                view = view[handle.write(view) or 0 :]
    except OSError as exc:
        raise KupgradeError(f"cannot write: {os_problem(exc)}", file=str(path)) from None


def _replace(path: Path, data: bytes, mode: int) -> None:
    directory = path.parent if str(path.parent) else Path(".")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    except OSError as exc:
        raise KupgradeError(f"cannot write: {os_problem(exc)}", file=str(path)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise KupgradeError(f"cannot write: {os_problem(exc)}", file=str(path)) from None
