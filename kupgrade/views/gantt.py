"""A Gantt chart of a fleet's steps in plain text: one row per step, its bar from its
start to its end on a shared scale (what the console shows of a rollout's schedule)."""

from __future__ import annotations

from typing import Any

WIDTH = 60


def gantt_lines(steps: list[dict[str, Any]], width: int = WIDTH) -> list[str]:
    """`steps` with startedAt/finishedAt in seconds (None: not yet); ready-but-waiting
    time drawn as dots, the step itself as a bar, a step under way open-ended."""
    placed = [s for s in steps if s.get("startedAt") is not None]
    if not placed:
        return []
    ends = [s["finishedAt"] for s in placed if s.get("finishedAt") is not None]
    span = max([*ends, *(s["startedAt"] for s in placed)]) or 1.0
    label = max(len(f"{s['id']} {s['object']}") for s in placed)
    out = [f"{'':{label}}  0h{'':{width - 2 - len(_h(span))}}{_h(span)}"]
    for s in placed:
        ready = s.get("readyAt")
        start, end = s["startedAt"], s.get("finishedAt")
        a = _col(start, span, width)
        b = _col(end if end is not None else span, span, width)
        r = _col(ready, span, width) if ready is not None else a
        bar = " " * r + "." * (a - r) + ("=" if end is not None else ">") * max(1, b - a)
        out.append(
            f"{s['id'] + ' ' + s['object']:{label}}  {bar[:width]:{width}}  {s.get('stage') or ''}"
        )
    return out


def _col(seconds: float, span: float, width: int) -> int:
    return min(width - 1, max(0, int(seconds / span * (width - 1))))


def _h(seconds: float) -> str:
    return f"{seconds / 3600:.1f}h"
