"""`controller run --profile-run FILE`: where a run's time went, so that the next floor of
the simulator is visible on the user's own cluster, not only on the benches'.

cProfile (the standard library's deterministic profiler) is the one that needs nothing
installed and counts calls, which a sampling profiler does not; it slows the run about
1.6x, evenly enough that the shares hold. FILE gets a summary a person reads (the run's
time by part of kupgrade, then the functions that spent the most themselves); the raw
statistics go beside it as FILE.pstats, for `python -m pstats` or snakeviz. A run that
hands over to a new controllers' process adds its profile to the one before (pstats
merges them), so the summary covers the whole command.
"""

from __future__ import annotations

import cProfile
import io
import marshal
import pstats
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Annotated

import typer

from kupgrade.cli.output import atomic_write
from kupgrade.errors import InputError, KupgradeError
from kupgrade.resident import peak_mb

ProfileRunOpt = Annotated[
    Path | None,
    typer.Option(
        "--profile-run",
        help="Write where the run's time went to this file (raw cProfile data beside it "
        "as FILE.pstats).",
        dir_okay=False,
    ),
]

TOP = 30  # functions listed by their own time
PARTS = 20  # parts of kupgrade (and libraries) listed by their time


def raw_path(path: Path) -> Path:
    return path.with_name(path.name + ".pstats")


def check_profile_path(path: Path) -> None:
    """One line before anything runs when the summary cannot be written there."""
    if path.is_dir():
        raise InputError(f"--profile-run {path} is a directory", hint="name a file")
    if not path.parent.is_dir():
        raise InputError(
            f"--profile-run {path}: no such directory {path.parent}",
            hint="create the directory or name a file in an existing one",
        )


def forget_profile(path: Path) -> None:
    """A new command's profile starts empty (a handoff's child adds to what is there)."""
    raw_path(path).unlink(missing_ok=True)


@contextmanager
def profiled(path: Path | None, what: str) -> Iterator[None]:
    """Profile the block when `path` is given; on the way out (also on an error or an
    interrupt: the run so far is worth a look) write the summary and the raw data."""
    if path is None:
        yield
        return
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()
        _write(profiler, path, what, time.perf_counter() - started)


def _write(profiler: cProfile.Profile, path: Path, what: str, wall: float) -> None:
    stats = pstats.Stats(profiler)
    raw = raw_path(path)
    if raw.is_file():  # the process before a handoff
        # not ours or damaged: this process's profile alone
        with suppress(OSError, EOFError, TypeError, ValueError):
            stats.add(str(raw))
    try:
        # the bytes pstats' dump_stats writes (a marshalled table), through the writer
        # every command uses: all or nothing, with the umask's mode
        atomic_write(raw, marshal.dumps(stats.stats))  # type: ignore[attr-defined]
        atomic_write(path, summary(stats, what, wall, peak_mb()).encode())
    except KupgradeError as exc:
        raise InputError(
            f"cannot write the profile --profile-run {path}: {exc.message}",
            hint="name a file in a directory you can write to",
        ) from None


def summary(stats: pstats.Stats, what: str, wall: float, peak: float) -> str:
    """The profile in words: the share of each part of kupgrade, then the top functions
    by their own time (calls, own seconds, seconds with what they called). `peak`: the
    process's peak resident MB, the other floor of a big rehearsal (issue 46: 20,000
    nodes in under 1 GB)."""
    table = stats.stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in table.values()) or 1e-9
    parts: dict[str, float] = defaultdict(float)
    for (filename, _, _), row in table.items():
        if not filename.startswith("~") or not row[4]:
            parts[_part(filename)] += row[2]
            continue
        # A built-in's time (dict.get, json decode) is its callers': counted to them.
        for (caller, _, _), call in row[4].items():
            parts[_part(caller)] += call[2]
    out = io.StringIO()
    out.write(f"profile of {what}: {wall:.2f} s wall, {total:.2f} s profiled\n")
    out.write(f"peak resident memory of this process: {peak:,.1f} MB\n\n")
    out.write("time by part (own time of its functions and of the built-ins they called)\n")
    ranked = sorted(parts.items(), key=lambda kv: -kv[1])
    rest = sum(spent for _, spent in ranked[PARTS:])
    listed = [*ranked[:PARTS], *([("(the other parts)", rest)] if rest else [])]
    shares = tenths([spent for _, spent in listed])
    for (part, spent), share in zip(listed, shares, strict=True):
        out.write(f"  {share // 10:3d}.{share % 10}%  {spent:9.3f} s  {part}\n")
    out.write(f"\nfunctions by own time (top {TOP})\n")
    out.write(f"  {'calls':>10} {'own s':>9} {'cum s':>9}  function\n")
    rows = sorted(table.items(), key=lambda kv: -kv[1][2])[:TOP]
    for (filename, line, name), (_, calls, own, cum, _) in rows:
        out.write(f"  {calls:>10} {own:9.3f} {cum:9.3f}  {_where(filename, line, name)}\n")
    return out.getvalue()


def tenths(spent: list[float]) -> list[int]:
    """Each part's share in tenths of a percent, rounded so that together they make 1000:
    a table of 21 parts each rounded on its own can add up to 99.0 or 101.0%, which
    reads as a part missing. Largest remainder (Hamilton's method): floor every share,
    then give the tenths still missing to the largest remainders, the earlier part first
    on a tie. No parts (or no time at all) gives no tenths to share."""
    total = sum(spent)
    if not spent or total <= 0:
        return [0] * len(spent)
    exact = [1000 * s / total for s in spent]
    floors = [int(e) for e in exact]
    missing = 1000 - sum(floors)
    order = sorted(range(len(exact)), key=lambda i: (-(exact[i] - floors[i]), i))
    for i in order[:missing]:
        floors[i] += 1
    return floors


def _part(filename: str) -> str:
    """kupgrade/sim/store.py -> kupgrade.sim.store; a library's file -> its package; the
    standard library's -> python:module; the interpreter's built-ins -> (built-in)."""
    if filename.startswith("~") or filename.startswith("<"):
        return "(built-in)"
    parts = Path(filename).with_suffix("").parts
    if "kupgrade" in parts:
        at = len(parts) - 1 - parts[::-1].index("kupgrade")
        return ".".join(parts[at:])
    if "site-packages" in parts:
        at = parts.index("site-packages")
        return parts[at + 1] if at + 1 < len(parts) else filename
    return f"python:{parts[-1]}"


def _where(filename: str, line: int, name: str) -> str:
    if filename.startswith("~"):
        return name
    return f"{_part(filename)}:{line}({name})"
