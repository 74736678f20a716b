"""Reading a file the user named: regular files only, bounded in size, errors in one line.

A FIFO, a socket or a device is refused before any read (opening with O_NONBLOCK so even
a FIFO with no writer cannot block us), and a file is never read past the size limit:
`/dev/zero` or a growing log cannot exhaust memory.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from kupgrade.errors import InputError
from kupgrade.intake.limits import BYTES

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def os_problem(exc: OSError) -> str:
    """An OSError as the words a user acts on (no errno numbers, no Python names)."""
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "the file system is read-only"
    if exc.errno == errno.ENOENT:
        return "no such file or directory"
    return exc.strerror or str(exc)


def require_regular(path: Path | str, what: str = "file") -> os.stat_result:
    """Stat `path` (following links) and refuse anything but a regular file."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {os_problem(exc)}", file=str(path)) from None
    kind = kind_of(info.st_mode)
    if kind is not None:
        raise InputError(f"is {kind}, not a regular {what}", file=str(path))
    return info


def open_regular(path: Path | str, what: str = "file") -> BinaryIO:
    """Open a regular file for reading, checked again on the open descriptor (no race)."""
    require_regular(path, what)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"cannot read {what}: {os_problem(exc)}", file=str(path)) from None
    try:
        kind = kind_of(os.fstat(fd).st_mode)
        if kind is not None:
            raise InputError(f"is {kind}, not a regular {what}", file=str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_file(path: Path | str, what: str = "file", max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file of at most `max_bytes` (default: KUPGRADE_MAX_INPUT_BYTES)."""
    limit = max_bytes if max_bytes is not None else BYTES.value()
    with open_regular(path, what) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise InputError(f"cannot read {what}: {os_problem(exc)}", file=str(path)) from None
    if len(data) > limit:
        if max_bytes is None:
            raise BYTES.exceeded(f"the {what}'s size", str(path))
        raise InputError(f"the {what} is larger than {limit:,} bytes", file=str(path))
    return data
