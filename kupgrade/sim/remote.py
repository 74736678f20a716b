"""The run loop of controllers acting over a simulated cluster's Kubernetes API (SPEC X2):
the same controllers, passes and steps as the in-process loop, with the world behind the
API server (`kupgrade cluster serve-api NAME --no-controllers`) and its clock stepped
from here.

A pass is: the world reacts (a ClockStep with no target), every controller syncs from
its informer caches; passes repeat until neither the world nor a controller changed
anything. A step moves the clock to the next event, the world's or a controller's timer,
whichever is first. That is the in-process loop's order, so a rehearsal over the API
ends where the in-process one does (tests/sim/test_remote.py compares them).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import msgspec

from kupgrade.cluster.kube import event_rows
from kupgrade.cluster.remote import InformedBackend
from kupgrade.controllers.protocol import Controller
from kupgrade.controllers.version.controller import Wiring
from kupgrade.errors import InputError
from kupgrade.sim.collector import few_collections
from kupgrade.sim.gdc_runner import GdcRunner
from kupgrade.sim.kube_runner import KubeRunner
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.runner import MAX_PASSES, RESYNC, CommitPace, Outcome, Runner


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
        raise InputError(f"cannot read the served cluster's profile in {db}: {problem}",
                         hint="run the controllers on the machine that serves the cluster")  # fmt: skip
    return home, msgspec.convert(msgspec.json.decode(row[0]), Profile).spec


class _Remote:
    """The loop's overrides: mixed in before Runner or GdcRunner."""

    api: InformedBackend
    availability: Controller | None
    controllers: list[Controller]

    def __init__(
        self, spec: Spec, api: InformedBackend, wiring: Wiring | None = None,
        availability: Controller | None = None,
    ) -> None:  # fmt: skip
        self.spec = spec
        self.api = api
        self.wiring = wiring
        self.availability = availability
        self.with_controllers = True
        self.pace = CommitPace()
        self.controllers = []
        self.start_controllers()  # type: ignore[attr-defined]

    def next_at(self) -> float | None:
        due = [a for a in (self.api.server_next_at(), self.api.next_timer()) if a is not None]
        return min(due) if due else None

    def settle(self, world: bool | None = None) -> None:
        """Passes until nothing changes; `world` says whether the step that led here
        already let the world react (and whether that changed anything)."""
        for _ in range(MAX_PASSES):
            if world is None:
                world = self.api.step(None)
            self.api.changed = False
            for controller in self.controllers:
                controller.sync()
                if self.handoff():  # type: ignore[attr-defined]
                    return
            if not world and not self.api.changed:
                return
            world = None

    def step(self, deadline: float | None = None) -> bool:
        now = self.api.now()
        self.resync(now)  # type: ignore[attr-defined]
        if self.availability is not None:
            self.availability.sync()
        at = self.next_at()
        if at is None or (deadline is not None and at > deadline):
            return False
        self.settle(self.api.step(max(at, now)))
        return True

    def commit(self, *, behind: bool = False) -> None:
        """The server commits what it is sent; nothing is kept here."""

    def events(self) -> list[dict[str, Any]]:
        """The cluster's events, as the API lists them (the report's timeline)."""
        return event_rows(self.api.list_all("Event"))

    def _loop(
        self, until: str, on_step: Any, max_seconds: float, restart_on_handoff: bool
    ) -> Outcome:
        start = self.api.now()
        steps = 0
        tried = self._attempts()  # type: ignore[attr-defined]
        self.settle(self.api.step(start))  # what was due when the run stopped
        while True:
            outcome = self._advance(until, start, max_seconds, restart_on_handoff, tried)  # type: ignore[attr-defined]
            if outcome is not None:
                return Outcome(outcome.reason, outcome.now, steps)
            steps += 1
            if on_step is not None:
                on_step(self)

    def run(
        self, until: str = "completed", on_step: Any = None, max_seconds: float = 14 * 86400.0,
        restart_on_handoff: bool = True,
    ) -> Outcome:  # fmt: skip
        with few_collections():
            return self._loop(until, on_step, max_seconds, restart_on_handoff)


class RemoteRunner(_Remote, Runner):  # type: ignore[misc]
    """OpenShift's controllers over the API (version, nodes, availability)."""

    _resync_at = 0.0

    def resync(self, now: float) -> None:
        """The periodic re-check of the operators, as a timer of this process."""
        if self.updating() and self._resync_at <= now:
            self._resync_at = now + RESYNC
            self.api.requeue_at(now + RESYNC, "ClusterVersion", "version")


class RemoteGdcRunner(_Remote, GdcRunner):  # type: ignore[misc]
    """The distributed-cloud upgrade controller over the API."""


class RemoteKubeRunner(_Remote, KubeRunner):  # type: ignore[misc]
    """The kubeadm-style upgrade controller over the API."""


def remote_runner(
    api: InformedBackend, spec: Spec, wiring: Wiring, availability: Controller | None
) -> Runner:
    if spec.platform == "gdc":
        return RemoteGdcRunner(spec, api)
    if spec.platform == "kubernetes":
        return RemoteKubeRunner(spec, api)
    return RemoteRunner(spec, api, wiring, availability)
