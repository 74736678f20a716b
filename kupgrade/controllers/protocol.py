"""What every reconciler is to the run loop (ARCHITECTURE.md): a `sync()` that reads and
writes only through `cluster.Backend`, and a `progress()` that says how far the work it
carries out has come (the live bars and views read it, never the controller's state).

`sync` returns nothing. A timer a controller needs it queues with
`Backend.requeue_at`, so a restarted loop finds it in the store; a wake time handed back
to the loop would live only in the loop's memory (lost in a crash) and, for the update
service's periodic check, would keep stepping a cluster that has nothing else to do.
The same controller runs on the simulator and, where the platform allows, against a real
API server.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol


class Progress(NamedTuple):
    """How far one part of the work has come: `done` of `total`; `state` says why it waits
    (a plan step's), `items` what it is made of (the operators of a runlevel)."""

    label: str
    done: int
    total: int
    state: str = ""
    items: tuple[str, ...] = ()


class Controller(Protocol):
    def sync(self) -> None: ...

    def progress(self) -> list[Progress]: ...
