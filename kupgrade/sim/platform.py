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
from kupgrade.sim.cluster import SimCluster
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
