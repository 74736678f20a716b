"""One controller per cluster at a time, and no controller outliving its parent.

Two `controller run` on one cluster would both write its store (and fail on the
schedule's keys, or worse, interleave their steps). The run holds an exclusive `flock`
on `controller.lock` in the cluster's home, with its PID written inside so a second run
can say who holds it. The lock belongs to the open file, which the parent passes to its
child: it is released only when both are gone, and the child is told by the kernel
(PR_SET_PDEATHSIG) to stop when its parent dies, so killing `controller run` stops the
work rather than leaving an orphan writing the store.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from kupgrade.errors import KupgradeError

LOCK_NAME = "controller.lock"
FD_ENV = "KUPGRADE_CONTROLLER_LOCK_FD"
_PR_SET_PDEATHSIG = 1
# How long a run waits for the lock a command holds while it writes (sim/inbox.py).
PATIENCE_SECONDS = 2.0
_HELD: set[Path] = set()  # the cluster roots whose lock this process holds


def held_here(root: Path) -> bool:
    """Whether this process holds the cluster's lock: it is the store's one writer."""
    return root.resolve() in _HELD


class ClusterBusyError(KupgradeError):
    """Another process runs this cluster's controllers."""


class ControllerLock:
    """The exclusive right to run one cluster's controllers."""

    def __init__(self, root: Path, fd: int) -> None:
        self.root = root
        self.fd = fd

    @classmethod
    def acquire(cls, root: Path) -> ControllerLock:
        """Take the lock, or say which process holds it. A command holds it only while it
        writes, so a busy lock is tried again for PATIENCE_SECONDS first."""
        deadline = time.monotonic() + PATIENCE_SECONDS
        while True:
            held = cls.try_hold(root)
            if held is not None:
                return held
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        path = root / LOCK_NAME
        try:
            holder = path.read_text(errors="replace").strip() or "unknown"
        except OSError:
            holder = "unknown"
        raise ClusterBusyError(
            f"the controllers of cluster {root.name} are already running (process {holder})",
            hint="wait for that `kupgrade controller run` to end, or stop it first",
        )

    @classmethod
    def try_hold(cls, root: Path) -> ControllerLock | None:
        """Take the lock if nobody holds it, None at once if somebody does."""
        path = root / LOCK_NAME
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            # Imported here: the store imports this module, and `get` must stay light.
            from kupgrade.intake.files import os_problem  # noqa: PLC0415

            raise KupgradeError(
                f"cannot open the controller lock: {os_problem(exc)}", file=str(path)
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _HELD.add(root.resolve())
        return cls(root, fd)

    @classmethod
    def inherited(cls, root: Path) -> ControllerLock | None:
        """The lock a parent `controller run` passed down, if any (see FD_ENV)."""
        raw = os.environ.get(FD_ENV, "")
        if not raw.isdigit():
            return None
        fd = int(raw)
        try:
            # The open file already holds the lock: flock on it again succeeds at once.
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None
        _HELD.add(root.resolve())
        return cls(root, fd)

    def child_env(self) -> dict[str, str]:
        os.set_inheritable(self.fd, True)
        return {**os.environ, FD_ENV: str(self.fd)}

    def release(self) -> None:
        _HELD.discard(self.root.resolve())
        with contextlib.suppress(OSError):
            os.close(self.fd)


def die_with_parent() -> Callable[[], None]:
    """A preexec_fn: the child gets SIGTERM when this process dies (Linux), and exits at
    once if it already has. libc is found here, in the parent: nothing between fork and
    exec may start a subprocess or take a lock."""
    parent = os.getpid()
    libc_name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        prctl = ctypes.CDLL(libc_name, use_errno=True).prctl
    except (OSError, AttributeError):
        prctl = None

    def hook() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return hook
