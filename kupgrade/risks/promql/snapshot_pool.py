"""A large snapshot file read by two processes at once, taken in order by this one.

The snapshot is what the risks' matching rules are evaluated on (SPEC A4).

One process reads a 2-million-sample snapshot in about 1.5 s here, nearly all of it
turning text into numbers: work that needs no state, so each chunk of whole lines is read
by a worker of its own (`plain_chunk`, which also parses each new key's labels) and this
process takes the chunks in file order (`Reader.apply`), checking what spans chunks: a
series' times going on increasing, '# EOF' last, line numbers. A chunk that is not plain
is read line by line here, as in one process, so every error names the same line with
the same words either way.

Workers are new processes of this module alone, never forks: the CLI may run a progress
thread, the service its serving threads, and a fork copies their locks in whatever state
they are.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO

from kupgrade.risks.promql.snapshot import Plain, Reader, Series, plain_chunk

# Below this a file is read in this process: two workers cost about 0.1 s to start,
# which a file of this size (about 600,000 samples) repays.
PARALLEL_BYTES = 48 << 20
PIECE = 1 << 22  # bytes per piece: about 45,000 samples, a few ms to send back
# At most this many pieces (larger ones for a larger file): a worker's ranges travel in
# one argument, which Linux caps at 128 KiB.
MAX_PIECES = 2000
WORKERS = 2


# What a worker sends for a piece: its plain reading, or its text when it has none, or
# why it does not decode.
Piece = Plain | str | UnicodeDecodeError


class WorkerLost(Exception):  # noqa: N818 - a signal to read in one process instead
    """A worker ended before giving all its pieces (killed, out of memory, ...)."""


def parallel_wanted(size: int) -> bool:
    """Whether a file of `size` bytes is worth spreading over worker processes."""
    return size >= PARALLEL_BYTES and (os.cpu_count() or 1) > 1


def read_in_parallel(handle: BinaryIO, path: str, size: int) -> list[Series]:
    """The series of the file `handle` is open on (`path`, `size` bytes), read by workers
    in pieces of whole lines (piece i by worker i mod 2) and taken here in order. A piece
    that is not UTF-8 raises UnicodeDecodeError, which `load_snapshot` reports."""
    pieces = list(_pieces(handle, size, max(PIECE, -(-size // MAX_PIECES))))
    reader = Reader(path)
    workers = [_start(path, pieces[i::WORKERS]) for i in range(min(WORKERS, len(pieces)))]
    try:
        for index, (start, end) in enumerate(pieces):
            piece = _receive(workers[index % len(workers)])
            if isinstance(piece, UnicodeDecodeError):
                raise piece  # load_snapshot names the file, as for one process
            if isinstance(piece, Plain):
                if reader.apply(piece):
                    continue
                # Plain, but not a continuation of what came before: line by line here.
                piece = _decoded(handle, start, end)
            reader.lines(piece)
    finally:
        # An error stops the workers at once; each has at most one piece in hand.
        for worker in workers:
            worker.kill()
            worker.wait()
            assert worker.stdout is not None
            worker.stdout.close()
    return reader.finish()


def _start(path: str, ranges: list[tuple[int, int]]) -> subprocess.Popen[bytes]:
    """A worker: this module run by the same Python, finding kupgrade where this process
    found it, and nothing else imported (multiprocessing's spawn would import the
    caller's main module in each worker, and a fork would copy other threads' locks)."""
    root = str(Path(__file__).resolve().parents[3])
    paths = os.environ.get("PYTHONPATH", "")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, paths) if p)}
    return subprocess.Popen(
        [sys.executable, "-m", __name__, path, json.dumps(ranges)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def _receive(worker: subprocess.Popen[bytes]) -> Piece:
    """A worker's next piece, sent as a length and a pickle (of objects of this module's
    own types, from a process this one started)."""
    assert worker.stdout is not None
    head = _exactly(worker.stdout, 8)
    piece: Piece = pickle.loads(_exactly(worker.stdout, int.from_bytes(head)))
    return piece


def _exactly(stream: IO[bytes], count: int) -> bytes:
    data = stream.read(count)
    if len(data) != count:
        raise WorkerLost
    return data


def _work(path: str, ranges: list[list[int]]) -> None:
    """In a worker: each range's reading, in order, to stdout."""
    out = sys.stdout.buffer
    for start, end in ranges:
        data = pickle.dumps(_read_piece(path, start, end), protocol=pickle.HIGHEST_PROTOCOL)
        out.write(len(data).to_bytes(8))
        out.write(data)
        out.flush()


def _pieces(handle: BinaryIO, size: int, piece: int) -> Iterator[tuple[int, int]]:
    """(start, end) byte ranges of about `piece` bytes, each ending after a newline (the
    last at the end of the file): a newline byte is never inside a UTF-8 character."""
    start = 0
    while start < size:
        end = _line_end(handle, min(start + piece, size), size)
        yield start, end
        start = end


def _line_end(handle: BinaryIO, at: int, size: int) -> int:
    """The offset just past the first newline at or after `at` (the file's end if none)."""
    handle.seek(at)
    while at < size:
        block = handle.read(1 << 16)
        if not block:
            return at
        found = block.find(b"\n")
        if found >= 0:
            return at + found + 1
        at += len(block)
    return size


def _decoded(handle: BinaryIO, start: int, end: int) -> str:
    """A piece's text; UnicodeDecodeError as a text stream of the file would raise it."""
    handle.seek(start)
    return handle.read(end - start).decode("utf-8")


def _read_piece(path: str, start: int, end: int) -> Piece:
    """In a worker: one piece's plain reading, or its text when it has none, or why it
    does not decode."""
    with open(path, "rb") as handle:
        try:
            text = _decoded(handle, start, end)
        except UnicodeDecodeError as exc:
            return exc
    plain = plain_chunk(text, labels=True)
    return text if plain is None else plain


if __name__ == "__main__":
    _work(sys.argv[1], json.loads(sys.argv[2]))
