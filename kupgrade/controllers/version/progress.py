"""How far the update in progress is, runlevel by runlevel (SPEC D1), from the version
controller's own state: what the live view draws and the tests check."""

from __future__ import annotations

from typing import Any


def runlevel_rows(state: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(label, applied, total) per runlevel of the update in progress (SPEC D1)."""
    done: dict[str, int] = {}
    total: dict[str, int] = {}
    for runs, cursor in zip(state.get("runlevels") or [], state.get("cursor") or [], strict=False):
        left = int(cursor)  # the node's first `cursor` manifests are applied
        for level, count in runs:
            done[level] = done.get(level, 0) + min(left, count)
            total[level] = total.get(level, 0) + count
            left = max(0, left - count)
    return [(f"runlevel {level}", done[level], total[level]) for level in sorted(total)]
