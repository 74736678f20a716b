"""A directory written all or nothing, while what goes into it is still being read.

`release extract` must write nothing unless every check passes (SPEC B2), and it
should cost no more than `tar -xzf`, which writes each entry as soon as it is read while
gzip inflates in a process of its own. So the files go into a hidden sibling directory
from a thread of their own as the layers are read; the directory is renamed into place
only when the reading ended without error and every write succeeded, and removed
otherwise. One thread, fed in order, keeps the writes in the reader's order: a later
layer's file replaces an earlier one, a whiteout removes it, as they would in memory.
"""

from __future__ import annotations

import os
import posixpath
import queue
import shutil
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from kupgrade.errors import InputError
from kupgrade.intake.files import os_problem
from kupgrade.outputs import staging_dir

# O_NOFOLLOW: a name is never followed out of the staging directory, even where a
# reader's name checks had missed a link (tar links are copies here, SPEC B2).
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
_STOP: tuple[str, bytes | None] = ("", None)  # told apart by identity


class TreeWriter:
    """Files written under `target` in the order given, all or nothing.

    `put` and `remove` return at once; the writing thread does the work. The first
    failed write is raised by the next `put` or by leaving the `with` block, which also
    waits for the last write, then renames the staging directory into place. Leaving it
    with an exception stops the writes and removes the staging directory.
    """

    def __init__(self, target: Path, directories: Iterable[str] = ()) -> None:
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise InputError(
                "already exists and is not empty; choose a new directory", file=str(target)
            )
        self.target = target
        self.directories = {d for d in directories if d}
        self._root = ""
        self._staging: Path | None = None
        self._queue: queue.SimpleQueue[tuple[str, bytes | None]] = queue.SimpleQueue()
        self._error: OSError | None = None
        self._abort = False
        self._made: set[str] = {""}
        self._files: set[str] = set()
        self._removed = False
        self._thread = threading.Thread(target=self._run, name="tree-writer", daemon=True)

    def __enter__(self) -> TreeWriter:
        try:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            self._staging = staging_dir(self.target.parent, f".{self.target.name}.")
        except OSError as exc:
            raise self._problem(exc) from None
        self._root = os.fspath(self._staging) + "/"
        for directory in sorted(self.directories):
            self._queue.put((directory + "/", None))
        self._thread.start()
        return self

    def put(self, relative: str, data: bytes) -> None:
        """Write (or replace) one file, named relative to the target."""
        self._raise_failed()
        self._queue.put((relative, data))

    def remove(self, relative: str) -> None:
        """Remove a file put before (a later layer's whiteout)."""
        self._raise_failed()
        self._queue.put((relative, None))

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._abort = error is not None
        self._queue.put(_STOP)
        self._thread.join()
        assert self._staging is not None
        if error is None and self._error is None:
            try:
                self._prune()
                if self.target.exists():
                    self.target.rmdir()
                os.replace(self._staging, self.target)
                return
            except OSError as exc:
                self._error = exc
        shutil.rmtree(self._staging, ignore_errors=True)
        if error is None and self._error is not None:
            raise self._problem(self._error) from None

    def _raise_failed(self) -> None:
        if self._error is not None:
            raise self._problem(self._error)

    def _problem(self, exc: OSError) -> InputError:
        return InputError(f"cannot write: {os_problem(exc)}", file=str(self.target))

    def _run(self) -> None:
        """Take writes in order until the stop; after a failure or an abort, only drain."""
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            relative, data = item
            if self._error is not None or self._abort:
                continue
            try:
                self._apply(relative, data)
            except OSError as exc:
                self._error = exc

    def _apply(self, relative: str, data: bytes | None) -> None:
        if relative.endswith("/"):
            self._mkdirs(relative[:-1])
        elif data is None:
            self._files.discard(relative)
            self._removed = True
            os.unlink(self._root + relative)
        else:
            self._mkdirs(posixpath.dirname(relative))
            self._files.add(relative)
            _write(self._root + relative, data)

    def _mkdirs(self, directory: str) -> None:
        if directory in self._made:
            return
        self._mkdirs(posixpath.dirname(directory))
        os.mkdir(self._root + directory)
        self._made.add(directory)

    def _prune(self) -> None:
        """Directories made only for files removed later go too: the result holds what
        writing the final files alone would have made."""
        if not self._removed:
            return
        kept = {""}
        for path in (*self._files, *(d + "/x" for d in self.directories)):
            parent = posixpath.dirname(path)
            while parent:
                kept.add(parent)
                parent = posixpath.dirname(parent)
        for directory in sorted(self._made - kept - {""}, key=len, reverse=True):
            os.rmdir(self._root + directory)


def _write(path: str, data: bytes) -> None:
    """One file with one system call where the data allows: Path.write_bytes' buffered
    file object costs as much as the write itself for the small files a payload has."""
    fd = os.open(path, _CREATE, 0o644)
    try:
        written = os.write(fd, data)
        if written < len(data):
            view = memoryview(data)[written:]
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
