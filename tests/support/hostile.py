"""Hostile inputs and a bounded way to run the CLI on them (issue 17's property).

Each input is what a user or a server really hands kupgrade by mistake or malice: bytes
that are not UTF-8, documents nested past any stack, YAML alias bombs and recursive
aliases, duplicate keys, truncation, binary junk, and special files (a FIFO with no
writer, a character device, a directory). `run_bounded` runs the CLI in a subprocess
with a wall-clock and an address-space limit, so a hang or a runaway allocation fails
the test instead of the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_S = 30
MEMORY_BYTES = 3 * 1024**3


def _bomb() -> bytes:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return ("\n".join(lines) + "\n").encode()


DEEP = 100_000
CONTENTS: dict[str, bytes] = {
    "not-utf8": b"apiVersion: v1\nkind: \xff\xfe\xfa broken\n",
    "latin1": "name: caf\xe9\n".encode("latin-1"),
    "deep-json": b"[" * DEEP + b"]" * DEEP,
    "deep-json-object": b'{"a":' * DEEP + b"1" + b"}" * DEEP,
    "deep-yaml-flow": b"a: " + b"[" * DEEP + b"]" * DEEP + b"\n",
    "deep-yaml-block": b"".join(b"  " * i + b"- \n" for i in range(3000)),
    "alias-bomb": _bomb(),
    "recursive-alias": b"a: &r [*r]\nb: 1\n",
    "duplicate-keys": b"a: 1\nb: 2\na: 3\n",
    "empty": b"",
    "binary": bytes(range(256)) * 64,
    "nul-bytes": b"\x00" * 4096,
    "json-in-yaml-clothes": b'{"apiVersion": "v1", "kind": [1, 2, {"x": "\xff"}]}',
    "long-line": b"x" * (4 * 1024 * 1024),
    "bad-scalar-types": b"- [1, 2]: {? [a]: b}\n- !!binary AAAA\n- !!python/object:os.system [ls]\n",
}
SPECIAL = ("fifo", "char-device", "directory", "missing", "dangling-link")


def write_content(directory: Path, kind: str, name: str = "input.yaml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(CONTENTS[kind])
    return path


def special_path(directory: Path, kind: str, name: str = "input.yaml") -> Path:
    """A path of the given special kind (the caller's test cleans the directory)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "char-device":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "dangling-link":
        path.symlink_to(directory / "nowhere")
    return path


@dataclass
class Outcome:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def crashed(self) -> bool:
        """A traceback, a signal (segfault, MemoryError kill), a hang or an internal error."""
        return (
            self.timed_out
            or self.returncode is None
            or self.returncode < 0
            or "Traceback" in self.stderr
            or "internal error" in self.stderr
        )


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def run_bounded(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: int = TIMEOUT_S
) -> Outcome:
    """Run `kupgrade ARGS` with issue 17's bounds: 30 s and 3 GiB."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "kupgrade", *args],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            check=False,
            cwd=cwd,
            timeout=timeout,
            env={**os.environ, **(env or {})},
            preexec_fn=_limits,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode("utf-8", "replace") if exc.stdout else ""
        err = exc.stderr.decode("utf-8", "replace") if exc.stderr else ""
        return Outcome(None, out, err, timed_out=True)
    return Outcome(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )
