"""The live bars of a run: one per row of the controllers' progress (manifests and
runlevels, pools, stages or plan steps), on a terminal only, and the pacing of a run
asked to follow real time (`--speed`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from kupgrade.sim.loop import Loop


@contextmanager
def live_bars(console: Console, speed: float, started: float, wall: float) -> Iterator[Any]:
    """A step callback for `Loop.run` drawing the bars on `console` (a terminal), and
    sleeping so that simulated time runs at most `speed` times real time."""
    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
    tasks: dict[str, Any] = {}
    with bars:

        def on_step(r: Loop[Any]) -> None:
            for row in r.progress():
                if row.label not in tasks:
                    tasks[row.label] = bars.add_task(row.label, total=row.total)
                bars.update(tasks[row.label], completed=row.done, total=row.total)
            if speed > 0:
                # Wait for the real moment of the next step's event: a step may jump
                # minutes of simulated time, and the cluster must not show them early.
                due = r.next_at()
                target = r.now() if due is None else max(due, r.now())
                while (ahead := (target - started) / speed - (time.monotonic() - wall)) > 0:
                    time.sleep(min(ahead, 0.5))

        yield on_step
