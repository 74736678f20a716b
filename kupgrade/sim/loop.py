"""The one run loop of a simulated cluster, whatever its platform and wherever its world
runs (SPEC X2, X3): advance the virtual clock to the next event, let the world and every
controller react until nothing changes, commit.

A loop is built from a platform (sim/platform.py: its world, controllers and
predicates) and a transport: the cluster's own store with its world in this process
(`Local`), or a simulated cluster's Kubernetes API whose server runs the world and whose
clock this loop steps (`Served`, sim/transport.py). Both take the same steps in the same
order, so a rehearsal over the API ends where the in-process one does.

In this process, a transaction always ends on a step boundary, and everything a step
decides comes from the store and the seeded random source saved with it, so a run killed
at any moment and started again replays the steps since the last commit and goes on
exactly as if it had not stopped. Steps are committed together at most every
COMMIT_EVERY wall seconds: a commit costs a WAL write, and a 5,000-node rollout takes
tens of thousands of steps. A commit of a big cluster writes thousands of pods; the next
one waits long enough that committing stays a small share of the run (CommitPace).
Inside the loop a commit is only encoded on the run's thread and then written by a
thread of its own while the run goes on (Store.commit behind, kupgrade/sim/commits.py);
the next starts once it is on disk, so the file always holds whole steps, and the run's
end waits for its last commit.

A controller's `sync()` returns nothing: what it wants to be woken for it queues with
`Backend.requeue_at`, which the store keeps (a timer the loop held in memory would be
lost in a crash), and a wake the loop made from a return value would step an idle
cluster forever.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from kupgrade.cluster.backend import Backend
from kupgrade.controllers.protocol import Controller, Progress
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.collector import few_collections
from kupgrade.sim.platform import Crew, Memory, Platform
from kupgrade.sim.profile import Spec
from kupgrade.sim.store import Store
from kupgrade.sim.world import World

COMMIT_EVERY = 0.5  # wall seconds between commits (always on a step boundary)
COMMIT_SHARE = 8.0  # ... and at least this many times the last commit's own duration
MAX_PASSES = 100
# A release refused this many times in one run stops the run as failing: the controller
# would retry forever (and a retry is always due, so the run is never idle); a command
# must come back and say why.
RETRIES_PER_RUN = 3


class CommitPace:
    """When the next commit is due: COMMIT_EVERY wall seconds after the last one, or
    COMMIT_SHARE times as long as it took when that is longer. Commits then take at most
    a ninth of a run's time however big the cluster (a commit writes what changed since
    the last, so waiting longer also writes less: a pod created and gone in between is
    never written), and a crash replays at most that much work (SPEC X3)."""

    def __init__(self) -> None:
        self.due_at = time.monotonic() + COMMIT_EVERY

    def due(self) -> bool:
        return time.monotonic() >= self.due_at

    @contextmanager
    def committing(self) -> Iterator[None]:
        started = time.monotonic()
        yield
        ended = time.monotonic()
        self.due_at = ended + max(COMMIT_EVERY, COMMIT_SHARE * (ended - started))


@dataclass
class Outcome:
    reason: str  # completed | idle | handoff | limit | failing | stalled
    now: float
    steps: int


class Stillness:
    """Whether a run has stopped moving: what marks its motion (Loop._motion) unchanged
    for longer than the platform's stall time (looked at once a simulated minute). A
    stalled run is said with what holds it (SPEC X4), not simulated for weeks (SPEC X2)."""

    LOOK_EVERY = 60.0

    def __init__(self, start: float, limit: float) -> None:
        self.limit = limit
        self.next_look = start
        self.since = start
        self.mark: tuple[object, ...] | None = None

    def stalled(self, now: float, motion: Callable[[], tuple[object, ...]]) -> bool:
        if now < self.next_look:
            return False
        self.next_look = now + self.LOOK_EVERY
        mark = motion()
        if mark != self.mark:
            self.mark, self.since = mark, now
            return False
        return now - self.since > self.limit


class Transport(Memory, Protocol):
    """Where the cluster's world runs, as the loop drives it."""

    @property
    def api(self) -> Backend:
        """What the controllers act through."""

    def lock(self) -> AbstractContextManager[Any]:
        """Held during a step: an API server answers between steps, never inside one."""

    def now(self) -> float: ...

    def next_at(self) -> float | None:
        """When the next event is due: the world's, or a controller's timer."""

    def advance(self, at: float) -> bool:
        """Move the clock to `at` (never back), fire what is due by then and let the world
        react once; True when the world changed anything."""

    def react(self) -> bool:
        """The world reacts once to what changed; True when it changed anything."""

    def clear_changed(self) -> None: ...

    def changed(self) -> bool:
        """Whether anything was written through `api` since `clear_changed`."""

    def commit(self, *, behind: bool = False) -> None: ...

    def writes(self) -> int:
        """A count that grows with every object written (only compared, never read as a
        number): a run whose objects stop changing has stopped moving."""

    def writing(self) -> bool:
        """A commit written behind is still under way."""

    def events(self) -> list[dict[str, Any]]:
        """The event log, oldest first (the report's timeline)."""


class Local:
    """The cluster's store with its world in this process."""

    def __init__(self, store: Store, world: World) -> None:
        self.store = store
        self.world = world
        self.sim: SimCluster = world.sim
        self.api: Backend = self.sim
        self.pace = CommitPace()

    def lock(self) -> AbstractContextManager[Any]:
        return self.store.lock

    def now(self) -> float:
        return self.sim.now()

    def next_at(self) -> float | None:
        return self.store.next_at()

    def advance(self, at: float) -> bool:
        self.store.cool()  # between two steps: nobody holds a pod half-changed
        if at > self.sim.now():
            self.store.set_meta("now", at)
        for action in self.store.pop_due(at):
            self.world.fire(action)
        return self.react()

    def react(self) -> bool:
        self.sim.changed = False
        self.world.react()
        return self.sim.changed

    def clear_changed(self) -> None:
        self.sim.changed = False

    def changed(self) -> bool:
        return self.sim.changed

    def commit(self, *, behind: bool = False) -> None:
        """Commit the steps so far; `behind`: written while the run goes on (Store.commit)."""
        with self.pace.committing():
            self.sim.save_rng()
            self.store.commit(behind=behind)

    def writes(self) -> int:
        return self.store.writes

    def writing(self) -> bool:
        return self.store.writing()

    def events(self) -> list[dict[str, Any]]:
        return self.store.events()

    def recall(self, key: str, default: Any = None) -> Any:
        return self.store.meta(key, default)

    def remember(self, key: str, value: Any) -> None:
        self.store.set_meta(key, value)


T = TypeVar("T", bound=Transport)


class Loop(Generic[T]):
    """The run loop of one cluster: its platform's controllers acting through a transport.
    Without controllers it is the world alone, on a clock its API's clients step
    (`clock_step`): the controllers act from another process, over the Kubernetes API."""

    def __init__(
        self,
        transport: T,
        platform: Platform,
        spec: Spec,
        home: Path,
        *,
        periodic: Controller | None = None,
        with_controllers: bool = True,
    ) -> None:
        """`periodic` is synced on its own schedule, only while something happens (an idle
        cluster asks nothing of the update service), and lives as long as the loop, so
        that its throttle outlives a handoff."""
        self.transport = transport
        self.api = transport.api
        self.platform = platform
        self.spec = spec
        self.home = home
        self.with_controllers = with_controllers
        self.periodic = periodic
        self.crew = Crew([])
        self._still = Stillness(0.0, platform.stall_seconds)  # made again by each run
        if with_controllers:
            self.start_controllers()

    @property
    def retry_hint(self) -> str:
        return self.platform.retry_hint

    @property
    def controllers(self) -> list[Controller]:
        return self.crew.controllers

    def start_controllers(self) -> None:
        """A new controller process: nothing in memory, everything from the store."""
        self.crew = self.platform.crew(self.api, self.spec, self.home)

    def handoff(self) -> bool:
        """The version controller hands over to its new version (SPEC C9)."""
        return self.with_controllers and self.crew.handing_off()

    # --- the world's side, as the API's clock drives it without controllers ---------------

    @property
    def mode(self) -> str:
        return "live" if self.with_controllers else "stepped"

    def now(self) -> float:
        return self.transport.now()

    def next_at(self) -> float | None:
        return self.transport.next_at()

    def clock_step(self, to: float | None) -> bool:
        """Move the clock to `to` (never back), fire what is due by then and let the world
        react once; True when the world changed anything. The remote controllers' writes
        between two calls are theirs: only the world's own changes count here."""
        with self.transport.lock():
            world = self.transport
            changed = world.react() if to is None else world.advance(max(to, self.now()))
            if isinstance(self.transport, Local) and self.transport.pace.due():
                self.commit()
            return changed

    # --- steps ----------------------------------------------------------------------------

    def settle(self, world: bool | None = None) -> None:
        """Passes until nothing changes: the world reacts, then every controller syncs;
        `world` says whether the step that led here already let the world react (and
        whether that changed anything). Stops early when the controllers hand over to
        their new version (SPEC C9)."""
        for _ in range(MAX_PASSES):
            if world is None:
                world = self.transport.react()
            self.transport.clear_changed()
            for controller in self.crew.controllers:
                controller.sync()
                if self.handoff():
                    return
            if not world and not self.transport.changed():
                return
            world = None

    def step(self, deadline: float | None = None) -> bool:
        """Advance to the next event and react; False when nothing is left to happen, or
        when the next event is due after `deadline` (it is left for a later run)."""
        now = self.now()
        self.platform.resync(self.api, self.transport, now)
        if self.periodic is not None:
            self.periodic.sync()  # refreshes when due; steps happen only while busy
        at = self.next_at()
        if at is None or (deadline is not None and at > deadline):
            return False
        self.settle(self.transport.advance(max(at, now)))
        return True

    def live(self, speed: float, stop: threading.Event, tick: float = 0.05) -> None:
        """Keep the cluster running on a clock that follows real time (times `speed`)
        until `stop` is set: due events fire as the clock passes them, and what was
        written through an API since the last tick is reacted to at once."""
        local = self.transport
        if not isinstance(local, Local):
            raise TypeError("a loop over an API follows the clock its server keeps")
        start_sim, start_wall = self.now(), time.monotonic()
        while not stop.wait(tick):
            target = start_sim + (time.monotonic() - start_wall) * speed
            with local.lock():
                if local.store.take_inbox():  # what a command handed over (sim/inbox.py)
                    self.settle()
                while (at := self.next_at()) is not None and at <= target:
                    self.step(deadline=target)
                local.store.set_meta("now", max(target, self.now()))
                if self.periodic is not None:
                    self.periodic.sync()  # the update service, asked when due
                self.settle()
                if self.handoff():
                    self.start_controllers()
                    self.settle()
                self.commit()

    def events(self) -> list[dict[str, Any]]:
        """The event log, oldest first (the report's timeline)."""
        return self.transport.events()

    def _motion(self) -> tuple[object, ...]:
        """What tells a run that moves from one that only retries: the progress rows and
        the objects written (events and the controllers' own state are not objects)."""
        rows = tuple((row.label, row.done, row.total) for row in self.progress())
        return (rows, self.transport.writes())

    def progress(self) -> list[Progress]:
        """How far the controllers' work has come, each controller's rows in turn."""
        return [row for controller in self.crew.controllers for row in controller.progress()]

    def commit(self, *, behind: bool = False) -> None:
        self.transport.commit(behind=behind)

    # --- how the cluster stands -----------------------------------------------------------

    def updating(self) -> bool:
        return self.platform.updating(self.api)

    def refused(self) -> dict[str, Any] | None:
        return self.platform.refused(self.api)

    def failing(self) -> str | None:
        return self.platform.failing(self.api)

    def completed(self) -> bool:
        return self.platform.completed(self.api)

    def _attempts(self) -> int:
        refused = self.refused()
        return int(str(refused.get("attempts", 0))) if refused else 0

    def report(self, outcome: Outcome, started: float, wall: float) -> dict[str, Any]:
        """How the run ended, how long it took (simulated and real) and what happened."""
        run = {
            "outcome": outcome.reason,
            "simulatedSeconds": round(outcome.now - started, 3),
            "wallSeconds": round(wall, 3),
            "steps": outcome.steps,
        }
        return self.platform.report(self.api, self.events(), run, started)

    # --- the run --------------------------------------------------------------------------

    def run(
        self,
        until: str = "completed",
        on_step: Callable[[Loop[T]], None] | None = None,
        max_seconds: float = 14 * 86400.0,
        restart_on_handoff: bool = True,
    ) -> Outcome:
        with few_collections():
            outcome = self._loop(until, on_step, max_seconds, restart_on_handoff)
        self.commit()  # not on an exception: a half-done step is never committed
        return outcome

    def _loop(
        self,
        until: str,
        on_step: Callable[[Loop[T]], None] | None,
        max_seconds: float,
        restart_on_handoff: bool,
    ) -> Outcome:
        start = self.now()
        steps = 0
        self._still = Stillness(start, self.platform.stall_seconds)
        with self.transport.lock():  # an API server answers between steps, never inside one
            tried = self._attempts()
            self.settle(self.transport.advance(start))  # what was due when the run stopped
            self.commit(behind=True)
        while True:
            with self.transport.lock():
                outcome = self._advance(until, start, max_seconds, restart_on_handoff, tried)
                if outcome is None:
                    steps += 1
                    if self._commit_due():
                        self.commit(behind=True)
            if outcome is not None:
                return Outcome(outcome.reason, outcome.now, steps)
            if on_step is not None:
                on_step(self)

    def _handed_over(self) -> bool:
        """Whether a command in another process handed over writes (sim/inbox.py): this
        run is their one writer, so they are applied here, never overwritten."""
        local = self.transport
        return isinstance(local, Local) and local.store.take_inbox()

    def _commit_due(self) -> bool:
        transport = self.transport
        return isinstance(transport, Local) and transport.pace.due() and not transport.writing()

    def _advance(
        self, until: str, start: float, max_seconds: float, restart_on_handoff: bool, tried: int
    ) -> Outcome | None:
        """One step of the loop; the outcome when the run ends here (steps counted by the
        caller), None when a step was taken or a handoff restarted the controllers."""
        while True:
            if until == "completed" and self.completed():
                return Outcome("completed", self.now(), 0)
            if self._attempts() >= tried + RETRIES_PER_RUN:
                return Outcome("failing", self.now(), 0)
            if not self.handoff():
                break
            if not restart_on_handoff:
                return Outcome("handoff", self.now(), 0)
            self.start_controllers()
            self.settle()
            self.commit(behind=True)
        if self._handed_over():
            self.settle()  # a command's write, taken before the step reacts to anything
        if not self.step(deadline=start + max_seconds):
            # Events still pending were due after the limit (a retry, a resync): they
            # are left for the next run instead of firing past it.
            pending = self.next_at() is not None
            return Outcome("limit" if pending else "idle", self.now(), 0)
        if self._still.stalled(self.now(), self._motion):
            return Outcome("stalled", self.now(), 0)
        return None
