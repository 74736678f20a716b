"""How far the update in progress is, runlevel by runlevel (SPEC D1), from the version
controller's own state as it publishes it: the live bars and the live view draw it."""

from __future__ import annotations

from kupgrade.cluster.backend import Backend
from kupgrade.controllers.protocol import Progress
from kupgrade.controllers.version.record import VersionState, version_state


def runlevel_rows(state: VersionState) -> list[tuple[str, int, int]]:
    """(label, applied, total) per runlevel of the update in progress (SPEC D1)."""
    done: dict[str, int] = {}
    total: dict[str, int] = {}
    for runs, cursor in zip(state.runlevels, state.cursor, strict=False):
        left = int(cursor)  # the node's first `cursor` manifests are applied
        for level, count in runs:
            done[level] = done.get(level, 0) + min(left, count)
            total[level] = total.get(level, 0) + count
            left = max(0, left - count)
    return [(f"runlevel {level}", done[level], total[level]) for level in sorted(total)]


def progress(api: Backend) -> list[Progress]:
    """The manifests applied of the release under way (or last applied), then runlevel by
    runlevel with the ClusterOperators each one waits for (SPEC D1, D4)."""
    state = version_state(api)
    by_level: dict[str, list[str]] = {}
    for level, name in state.operators:
        by_level.setdefault(f"runlevel {level}", []).append(name)
    rows = [Progress("manifests", state.done, state.total or 1)]
    rows += [
        Progress(label, done, total, items=tuple(by_level.get(label, [])))
        for label, done, total in runlevel_rows(state)
    ]
    return rows
