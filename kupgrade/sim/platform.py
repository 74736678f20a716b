"""What a platform is to the rest of kupgrade (ARCHITECTURE.md): one package under sim/
(openshift/, gdc/, kubernetes/) supplying its profile rules, how a new cluster is laid
out, its world, its controllers, when an upgrade is under way, done or failing, and its
report. Callers ask the registry (sim/platforms.py) for the platform of a profile; no
code outside the registry tells the platforms apart by name.

The protocol and the small types the platforms hand to the run loop live here, apart
from the registry, because the registry imports every platform package and each package
builds these types: with both in one module the imports would run in a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kupgrade.cluster.backend import Backend
from kupgrade.controllers.protocol import Controller
from kupgrade.plan.steps import Plan
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.fleet.monitor import FleetRules
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.store import Store
from kupgrade.sim.world import World


def _never() -> bool:
    return False


@dataclass
class Crew:
    """A platform's controllers as one process runs them, in the order they sync.
    `handing_off` says when that process must stop so that the controllers' new version
    takes over (SPEC C9); the loop then starts a new crew from the stored state."""

    controllers: list[Controller]
    handing_off: Callable[[], bool] = field(default=_never)


class Memory(Protocol):
    """Where the run loop keeps its own bookkeeping: in the cluster's store when the world
    runs in this process (it survives a restart), in memory when it acts over an API."""

    def recall(self, key: str, default: Any = None) -> Any: ...

    def remember(self, key: str, value: Any) -> None: ...


@dataclass(frozen=True)
class FleetMember:
    """A member of a fleet as its platform's part of a rehearsal sees it."""

    store: Store
    spec: Spec
    api: Backend


class FleetRun(Protocol):
    """How one platform's clusters take part in a fleet rehearsal (sim/fleet/rehearsal.py):
    their state, the rules over it, the plan, and each step asked of a member."""

    one_at_a_time: bool  # a cluster runs one step at a time (bmctl), or several

    def policy(self, given: str | None) -> str:
        """The skew policy the rehearsal plans with: the one given, checked, or the
        platform's own."""

    def rules(self, policy: str) -> FleetRules: ...

    def components(self, name: str) -> dict[str, str]:
        """What each component of member `name` runs: the state the rules judge."""

    def plan(self, target: str, available: list[str], policy: str) -> Plan:
        """The planner's plan from where every member is now."""

    def start(self, name: str, step: dict[str, Any], policy: str) -> dict[str, Any]:
        """Ask the member's upgrade controller for one step; a ticket to follow it by."""

    def outcome(self, name: str, ticket: dict[str, Any]) -> tuple[str, str]:
        """(running | done | failed, why) of the step a ticket names."""

    def busy(self, name: str) -> str | None:
        """An upgrade under way on the member (before a rehearsal: one it did not start)."""

    def refusal(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """Why the platform's own tool refuses to start a step ({why, objects}), if it does."""

    def versions(self, name: str) -> str:
        """The member's versions, in a few words."""

    def role(self, name: str) -> tuple[str, str]:
        """(role, managed by) of the member."""


class Platform(Protocol):
    """One platform of simulated clusters; see the module."""

    name: str  # as a profile's spec.platform names it
    retry_hint: str  # what a user does when a run stops with the cluster failing

    def check(self, spec: Spec, where: str) -> None:
        """The profile's rules of this platform (the common ones are checked before)."""

    def populate(self, root: Path, store: Store, name: str, profile: Profile) -> None:
        """A new cluster, settled at its first version, written into `store`."""

    def example_profile(self) -> str | None:
        """The commented example profile of this platform, if it ships one."""

    def world(self, sim: SimCluster, spec: Spec) -> World:
        """The physics of the platform's clusters."""

    def crew(self, api: Backend, spec: Spec, home: Path) -> Crew:
        """The controllers that carry out an upgrade, acting through `api`."""

    def periodic(self, api: Backend, spec: Spec) -> Controller | None:
        """A controller synced on its own schedule while something happens (the update
        service's check), made once per run, not once per crew."""

    def resync(self, api: Backend, memory: Memory, now: float) -> None:
        """Requeue what the controllers re-check periodically while an upgrade runs."""

    def updating(self, api: Backend) -> bool:
        """An upgrade was asked for and is not done."""

    def refused(self, api: Backend) -> dict[str, Any] | None:
        """A release the controllers refused and retry, while it is still wanted."""

    def failing(self, api: Backend) -> str | None:
        """Why the cluster is not where it was asked to go, if it is not."""

    def completed(self, api: Backend) -> bool:
        """The upgrade asked for is done, everything settled at it."""

    def report(
        self, api: Backend, events: list[dict[str, Any]], run: dict[str, Any], started: float
    ) -> dict[str, Any]:
        """The rehearsal's report: `run` (outcome, times, steps) and the platform's own
        sections, from the events since `started`."""

    def fleet(self, members: dict[str, FleetMember], document: dict[str, Any]) -> FleetRun | None:
        """Its clusters' part in a fleet rehearsal; None when its fleets are not rehearsed."""
