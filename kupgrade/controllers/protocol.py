"""What every reconciler is to the run loop (ARCHITECTURE.md): a `sync()` that reads and
writes only through `cluster.Backend` and says when it next wants to run.

`sync` returns the virtual time of its next wanted pass, or None when only a change of
what it watches should wake it (timers it needs are also queued with
`Backend.requeue_at`, so a restarted loop finds them in the store). The same controller
runs on the simulator and, where the platform allows, against a real API server.
"""

from __future__ import annotations

from typing import Protocol


class Controller(Protocol):
    def sync(self) -> float | None: ...
