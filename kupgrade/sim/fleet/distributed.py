"""A fleet rehearsal carried out part by part on an engine (sim/fleet/parts.py for the
cut and the merge, install.py for putting the members back, engines.py for where the
parts run)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kupgrade.sim.fleet.engines import Engine
from kupgrade.sim.fleet.install import PENDING, put_in_place, stage
from kupgrade.sim.fleet.parts import all_completed, bins, jobs, merge, partition, rehearse_part
from kupgrade.sim.fleet.rehearsal import Rehearsal

# Tasks per CPU of the engine: a few, so that a part heavier than the rest does not
# leave the other CPUs idle at the end.
TASKS_PER_SLOT = 2


def rehearse_in_parts(
    rehearsal: Rehearsal,
    root: Path,
    clusters: Path,
    engine: Engine,
    said: Callable[[str], None],
) -> bool:
    """Rehearse the begun fleet in its parts on `engine`; True once the merged rehearsal
    is committed and its members are in place. False when a part did not complete: then
    nothing was written, and the caller runs the fleet in one process, which decides a
    stopped rehearsal exactly (a stop ends every part at its instant)."""
    cut = partition(rehearsal)
    sizes = ", ".join(str(len(p)) for p in cut.parts[:8]) + (" ..." if len(cut.parts) > 8 else "")
    said(
        f"{len(cut.parts)} part{'s' if len(cut.parts) != 1 else ''} no rule ties "
        f"(clusters: {sizes})" + (f"; one part: {cut.whole}" if cut.whole else "")
    )
    tasks = bins(rehearsal, cut, TASKS_PER_SLOT * engine.slots())
    results = engine.map(
        rehearse_part,
        jobs(rehearsal, tasks),
        lambda n, total: said(f"task {n} of {total} rehearsed on {engine.name}"),
    )
    if not all_completed(results):
        first = min(
            (r for r in results if r.state.get("status") != "completed"),
            key=lambda r: float(r.state.get("finishedAt") or r.meta["now"]),
        )
        kind = (first.state.get("stop") or {}).get("kind", first.state.get("status"))
        said(
            f"task {first.index + 1} did not complete ({kind}); the whole fleet is "
            "rehearsed in one process to decide where it stops"
        )
        return False
    tick = int(rehearsal.fleet.meta("tick", 0)) + 1
    now = max(float(r.meta["now"]) for r in results)
    stage(root, [m for r in results for m in r.members], tick, now)
    merge(rehearsal, results)
    rehearsal.fleet.set_meta("tick", tick)
    rehearsal.fleet.set_meta("window", {"decisions": [], "advances": {}})
    rehearsal.fleet.set_meta(PENDING, sorted(rehearsal.names))
    rehearsal.fleet.commit()
    put_in_place(root, rehearsal.fleet, clusters)
    return True
