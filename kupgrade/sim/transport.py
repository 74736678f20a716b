"""The transport of a loop whose world is served behind a simulated cluster's Kubernetes
API (`kupgrade cluster serve-api NAME --no-controllers`): the controllers act through
informer caches and writes as on a real cluster, and the loop steps the server's clock
(SPEC X2).

A pass is: the world reacts (a ClockStep with no target), every controller syncs from
its informer caches; passes repeat until neither the world nor a controller changed
anything. A step moves the clock to the next event, the world's or a controller's timer,
whichever is first. That is the in-process loop's order (sim/loop.py), so a rehearsal
over the API ends where the in-process one does (tests/sim/test_golden_runs.py).
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from kupgrade.cluster.apikinds import event_rows
from kupgrade.errors import InputError
from kupgrade.sim.profile import Profile, Spec

if TYPE_CHECKING:  # lightkube's client: imported where a command reaches a server
    from kupgrade.cluster.remote import InformedBackend


def served_profile(api: InformedBackend) -> tuple[Path, Spec]:
    """The served cluster's home and profile: where its releases are kept (the simulated
    registry the controllers pull payloads from) and what its platform is. Read-only:
    the server process owns the store."""
    home = Path(str(api.clock["status"].get("home") or ""))
    db = home / "cluster.db"
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key='profile'").fetchone()
    except sqlite3.Error as exc:
        row, problem = None, str(exc)
    else:
        problem = "it has no profile"
    if row is None:
        raise InputError(
            f"cannot read the served cluster's profile in {db}: {problem}",
            hint="run the controllers on the machine that serves the cluster",
        )
    return home, msgspec.convert(msgspec.json.decode(row[0]), Profile).spec


class Served:
    """A served cluster's API, its world behind it; nothing is kept here but the loop's
    own bookkeeping, in memory (the server commits what it is sent)."""

    def __init__(self, api: InformedBackend) -> None:
        self.api = api
        self.memory: dict[str, Any] = {}

    def lock(self) -> AbstractContextManager[Any]:
        return nullcontext()

    def now(self) -> float:
        return self.api.now()

    def next_at(self) -> float | None:
        due = [a for a in (self.api.server_next_at(), self.api.next_timer()) if a is not None]
        return min(due) if due else None

    def advance(self, at: float) -> bool:
        return self.api.step(at)

    def react(self) -> bool:
        return self.api.step(None)

    def clear_changed(self) -> None:
        self.api.changed = False

    def changed(self) -> bool:
        return self.api.changed

    def commit(self, *, behind: bool = False) -> None:
        """The server commits what it is sent; nothing is kept here."""

    def writes(self) -> int:
        """The served store's resourceVersion, which every object write moves."""
        return int(self.api.clock["status"]["resourceVersion"])

    def writing(self) -> bool:
        return False

    def events(self) -> list[dict[str, Any]]:
        """The cluster's events, as the API lists them (the report's timeline)."""
        return event_rows(self.api.list_all("Event"))

    def recall(self, key: str, default: Any = None) -> Any:
        return self.memory.get(key, default)

    def remember(self, key: str, value: Any) -> None:
        self.memory[key] = value
