"""The run loop of a simulated cluster: advance the virtual clock to the next event, let
the world and every controller react until nothing changes, commit (SPEC X2, X3).

A transaction always ends on a step boundary, and everything a step decides comes from
the store and the seeded random source saved with it, so a run killed at any moment and
started again replays the steps since the last commit and goes on exactly as if it had
not stopped. Steps are committed together at most every COMMIT_EVERY wall seconds: a
commit costs a WAL write, and a 5,000-node rollout takes tens of thousands of steps.
A commit of a big cluster writes thousands of pods; the next one waits long enough that
committing stays a small share of the run (CommitPace). Inside the loop a commit is only
encoded on the run's thread and then written by a thread of its own while the run goes
on (Store.commit behind, kupgrade/sim/commits.py); the next starts once it is on disk, so
the file always holds whole steps, and the run's end waits for its last commit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import find
from kupgrade.cluster.olm import olm_busy
from kupgrade.controllers.nodes.controller import NodeController
from kupgrade.controllers.olm.controller import OlmController
from kupgrade.controllers.protocol import Controller
from kupgrade.controllers.version.controller import VersionController, Wiring
from kupgrade.sim.catalogs import CatalogCache
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.collector import few_collections
from kupgrade.sim.profile import Olm, Spec
from kupgrade.sim.store import Store
from kupgrade.sim.world import World

RESYNC = 300.0  # the version controller re-checks its operators at least this often
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
    reason: str  # completed | idle | handoff | limit | failing
    now: float
    steps: int


class Runner:
    retry_hint = "fix the cause and run `kupgrade controller run` again (it retries)"

    def __init__(
        self,
        store: Store,
        spec: Spec,
        wiring: Wiring | None = None,
        availability: Controller | None = None,
        *,
        with_controllers: bool = True,
    ) -> None:
        """`availability` checks the update service on its own schedule, only while
        something happens (an idle cluster sends nothing). Without controllers the
        runner is the world alone, on a clock its API's clients step (`clock_step`):
        the controllers act from another process, over the Kubernetes API."""
        self.availability = availability
        self.store = store
        self.spec = spec
        self.wiring = wiring
        self.sim = SimCluster(store)
        self.api: Backend = self.sim  # what the controllers act through
        self.world = self.make_world()
        self.pace = CommitPace()
        self.with_controllers = with_controllers
        self.controllers: list[Controller] = []
        if with_controllers:
            self.start_controllers()

    def make_world(self) -> World:
        return World(self.sim, self.spec)

    def start_controllers(self) -> None:
        """A new controller process: nothing in memory, everything from the store."""
        assert self.wiring is not None, "an OpenShift cluster's controllers need their wiring"
        self.version = VersionController(self.api, self.wiring)
        self.nodes = NodeController(self.api)
        olm = self.spec.olm or Olm()
        self.olm = OlmController(
            self.api, CatalogCache(), policy=olm.policy, global_namespace=olm.global_namespace,
            install_timeout=olm.install_timeout_seconds,
        )  # fmt: skip
        self.controllers = [self.version, self.nodes, self.olm]

    def handoff(self) -> bool:
        """The version controller hands over to its new version (SPEC C9)."""
        return self.with_controllers and self.version.handoff

    # --- the world's side, as the API's clock drives it without controllers ---------------

    @property
    def mode(self) -> str:
        return "live" if self.with_controllers else "stepped"

    def now(self) -> float:
        return self.sim.now()

    def next_at(self) -> float | None:
        return self.store.next_at()

    def clock_step(self, to: float | None) -> bool:
        """Move the clock to `to` (never back), fire what is due by then and let the world
        react once; True when the world changed anything. The remote controllers' writes
        between two calls are theirs: only the world's own changes count here."""
        with self.store.lock:
            if to is not None:
                at = max(to, self.sim.now())
                self.store.set_meta("now", at)
                for action in self.store.pop_due(at):
                    self.world.fire(action)
            self.sim.changed = False
            self.world.react()
            changed = self.sim.changed
            if self.pace.due():
                self.commit()
            return changed

    def settle(self) -> None:
        """The world and every controller react until nothing changes (or the version
        controller hands over to its new version: SPEC C9)."""
        for _ in range(MAX_PASSES):
            self.sim.changed = False
            self.world.react()
            for controller in self.controllers:
                controller.sync()
                if self.handoff():
                    return
            if not self.sim.changed:
                return

    def resync(self, now: float) -> None:
        """The version controller re-checks its operators every RESYNC seconds while an
        update runs."""
        if self.updating() and float(self.store.meta("resync_at", 0)) <= now:
            self.store.set_meta("resync_at", now + RESYNC)
            self.store.schedule(now + RESYNC, ["wake", "ClusterVersion", "", "version"])

    def step(self, deadline: float | None = None) -> bool:
        """Advance to the next event and react; False when nothing is left to happen, or
        when the next event is due after `deadline` (it is left for a later run)."""
        now = self.sim.now()
        self.resync(now)
        if self.availability is not None:
            self.availability.sync()  # refreshes when due; steps happen only while busy
        at = self.store.next_at()
        if at is None or (deadline is not None and at > deadline):
            return False
        self.store.set_meta("now", max(at, now))
        for action in self.store.pop_due(max(at, now)):
            self.world.fire(action)
        self.settle()
        return True

    def live(self, speed: float, stop: threading.Event, tick: float = 0.05) -> None:
        """Keep the cluster running on a clock that follows real time (times `speed`)
        until `stop` is set: due events fire as the clock passes them, and what was
        written through an API since the last tick is reacted to at once."""
        start_sim, start_wall = self.sim.now(), time.monotonic()
        while not stop.wait(tick):
            target = start_sim + (time.monotonic() - start_wall) * speed
            with self.store.lock:
                while (at := self.store.next_at()) is not None and at <= target:
                    self.step(deadline=target)
                self.store.set_meta("now", max(target, self.sim.now()))
                if self.availability is not None:
                    self.availability.sync()  # the update service, asked when due
                self.settle()
                if self.handoff():
                    self.start_controllers()
                    self.settle()
                self.commit()

    def events(self) -> list[dict[str, Any]]:
        """The event log, oldest first (the report's timeline)."""
        return self.store.events()

    def commit(self, *, behind: bool = False) -> None:
        """Commit the steps so far; `behind`: written while the run goes on (Store.commit)."""
        with self.pace.committing():
            self.sim.save_rng()
            self.store.commit(behind=behind)

    def updating(self) -> bool:
        state = self.api.state("version") or {}
        return bool(state.get("image")) and not state.get("completed")

    def refused(self) -> dict[str, object] | None:
        """The release the controller refused and will retry, if it is still wanted."""
        state = self.api.state("version") or {}
        refused = state.get("refused")
        if refused and refused.get("image") != state.get("image"):
            return dict(refused)
        return None

    def failing(self) -> str | None:
        """Why the cluster is not where it was asked to go: a refused release, or Failing."""
        refused = self.refused()
        if refused is not None:
            condition = refused.get("condition")
            return str(condition.get("message", "")) if isinstance(condition, dict) else ""
        cv = self.api.get("ClusterVersion", "version")
        failing = find((cv or {}).get("status", {}).get("conditions"), "Failing") or {}
        if failing.get("status") == "True":
            return str(failing.get("message") or failing.get("reason") or "Failing=True")
        return None

    def _attempts(self) -> int:
        refused = self.refused()
        return int(str(refused.get("attempts", 0))) if refused else 0

    def completed(self) -> bool:
        cv = self.api.get("ClusterVersion", "version")
        if cv is None or self.updating() or self.refused() is not None:
            return False
        history = cv["status"].get("history") or []
        if not history or history[0].get("state") != "Completed":
            return False
        api = self.api
        if olm_busy(
            api.list("Subscription"), api.list("InstallPlan"), api.list("ClusterServiceVersion")
        ):
            return False  # operators being installed or upgraded (SPEC F6)
        return all(
            (find(p["status"].get("conditions"), "Updated") or {}).get("status") == "True"
            for p in self.api.list("MachineConfigPool")
        )

    def run(
        self,
        until: str = "completed",
        on_step: Callable[[Runner], None] | None = None,
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
        on_step: Callable[[Runner], None] | None,
        max_seconds: float,
        restart_on_handoff: bool,
    ) -> Outcome:
        start = self.sim.now()
        steps = 0
        with self.store.lock:  # an API server answers between steps, never inside one
            tried = self._attempts()
            for action in self.store.pop_due(start):  # what was due when the run stopped
                self.world.fire(action)
            self.settle()
            self.commit(behind=True)
        while True:
            with self.store.lock:
                outcome = self._advance(until, start, max_seconds, restart_on_handoff, tried)
                if outcome is None:
                    steps += 1
                    if self.pace.due() and not self.store.writing():
                        self.commit(behind=True)
            if outcome is not None:
                return Outcome(outcome.reason, outcome.now, steps)
            if on_step is not None:
                on_step(self)

    def _advance(
        self, until: str, start: float, max_seconds: float, restart_on_handoff: bool, tried: int
    ) -> Outcome | None:
        """One step of the loop; the outcome when the run ends here (steps counted by the
        caller), None when a step was taken or a handoff restarted the controllers."""
        while True:
            if until == "completed" and self.completed():
                return Outcome("completed", self.api.now(), 0)
            if self._attempts() >= tried + RETRIES_PER_RUN:
                return Outcome("failing", self.api.now(), 0)
            if not self.handoff():
                break
            if not restart_on_handoff:
                return Outcome("handoff", self.api.now(), 0)
            self.start_controllers()
            self.settle()
            self.commit(behind=True)
        if not self.step(deadline=start + max_seconds):
            # Events still pending were due after the limit (a retry, a resync): they
            # are left for the next run instead of firing past it.
            pending = self.next_at() is not None
            return Outcome("limit" if pending else "idle", self.api.now(), 0)
        return None


class RequestRunner(Runner):
    """The loop of a platform whose one upgrade controller works on a request `upgrade`
    recorded in its state (distributed cloud, plain Kubernetes): no handoff, no resync,
    no refused release; done when the state says so."""

    retry_hint = "fix the cause and request the upgrade again with `kupgrade upgrade`"
    state_key = ""

    def handoff(self) -> bool:
        return False

    def resync(self, now: float) -> None:
        """The upgrade controller asks to be woken when it needs to be."""

    def refused(self) -> dict[str, object] | None:
        return None

    def request(self) -> dict[str, Any]:
        return dict(self.api.state(self.state_key) or {})

    def updating(self) -> bool:
        state = self.request()
        return bool(state) and not state.get("completed") and not state.get("failed")

    def completed(self) -> bool:
        return bool(self.request().get("completed"))


def workdir(store: Store) -> Path:
    return store.path.parent / "payloads"
