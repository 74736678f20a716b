"""The simulated cluster's virtual clock as an API object, `clocks.sim.kupgrade.io/v1`
named `virtual`: what a controller acting over the API reads its time from (SPEC X2).

On a real cluster time is the wall clock; on the simulator it is the store's virtual
time, which a client cannot infer. With the server's own controllers running the clock
follows real time (`live`); served without them (`serve-api --no-controllers`) it is
`stepped`: it moves only when the remote controllers POST a ClockStep, so a rehearsal
over the API runs as fast as it can and takes the same steps as one in process.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from kupgrade.versions.times import rfc3339

NAME = "virtual"


class Stepper(Protocol):
    """The world side of the run loop, as the API drives it."""

    @property
    def mode(self) -> str:
        """`live` (the server's loop moves the clock) or `stepped` (clients move it)."""
        ...

    def now(self) -> float: ...

    def next_at(self) -> float | None:
        """When the world's next event is due (None: nothing is scheduled)."""
        ...

    def clock_step(self, to: float | None) -> bool:
        """Move the clock to `to` (None: stay), fire the world's events due by then and
        let the world react; True when it changed anything."""
        ...


def clock_object(stepper: Stepper, resource_version: int, home: str) -> dict[str, Any]:
    """The Clock as served; `status.resourceVersion` is the store's version at this
    instant, which a client's watches must reach before it acts on what it sees."""
    now = stepper.now()
    return {
        "apiVersion": "sim.kupgrade.io/v1",
        "kind": "Clock",
        "metadata": {"name": NAME, "resourceVersion": str(resource_version)},
        "spec": {"mode": stepper.mode},
        "status": {
            "now": now,
            "time": rfc3339(now),
            "nextEventAt": stepper.next_at(),
            "resourceVersion": str(resource_version),
            "home": home,
        },
    }


def step_target(body: Any) -> float | None:
    """The `to` of a ClockStep body: a number of virtual seconds, or absent."""
    if not isinstance(body, dict) or body.get("kind", "ClockStep") != "ClockStep":
        raise ValueError("the body is not a ClockStep")
    to = body.get("to")
    if to is None:
        return None
    if isinstance(to, bool) or not isinstance(to, (int, float)) or math.isnan(to):
        raise ValueError(f"ClockStep.to must be a number of seconds, not {to!r}")
    return float(to)


def step_since(body: Any) -> int | None:
    """The `since` of a ClockStep body: the resourceVersion the client's watches have
    reached, after which the answer's `status.changedKinds` names the kinds changed (and
    the version of each one's last change). Absent: no such list."""
    since = body.get("since") if isinstance(body, dict) else None
    if since is None:
        return None
    text = str(since)
    if isinstance(since, bool) or not text.isdecimal() or len(text) > 19:
        raise ValueError(f"ClockStep.since must be a resourceVersion, not {since!r}")
    return int(text)
