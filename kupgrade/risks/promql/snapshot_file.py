"""A metrics snapshot read from its file: streamed within the input limits, a large one by
worker processes at once (snapshot_pool.py), otherwise here (snapshot.py parses it)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import BinaryIO

from kupgrade.errors import InputError
from kupgrade.intake.files import open_regular, os_problem
from kupgrade.intake.limits import BYTES
from kupgrade.risks.promql import snapshot_pool
from kupgrade.risks.promql.snapshot import RULE, Series, Snapshot, parse_snapshot


def load_snapshot(path: Path) -> Snapshot:
    """Stream a snapshot file (it may hold millions of samples) within the input limits."""
    if not path.exists():
        raise InputError("no such file", file=str(path))
    if path.is_dir():
        raise InputError("is a directory, expected an OpenMetrics file", file=str(path))
    try:
        with open_regular(path, "metrics snapshot") as raw:
            size = os.fstat(raw.fileno()).st_size
            if size > BYTES.value():
                raise BYTES.exceeded("the snapshot's size", str(path))
            if (series := _in_parallel(raw, str(path), size)) is not None:
                return Snapshot(series, source=str(path))
            with io.TextIOWrapper(raw, encoding="utf-8", newline="\n") as handle:
                return parse_snapshot(handle, source=str(path))
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", file=str(path), rule=RULE) from None
    except OSError as exc:
        raise InputError(f"cannot read: {os_problem(exc)}", file=str(path)) from None


def _in_parallel(raw: BinaryIO, path: str, size: int) -> list[Series] | None:
    """A large file's series read by worker processes, or None to read it here: a small
    file, one core, or workers that could not start or died (their work is redone here,
    where an error, if there is one, is raised the usual way)."""
    if not snapshot_pool.parallel_wanted(size):
        return None
    try:
        return snapshot_pool.read_in_parallel(raw, path, size)
    except (snapshot_pool.WorkerLost, OSError):
        raw.seek(0)
        return None
