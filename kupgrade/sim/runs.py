"""A cluster's run loop, assembled: its platform from the registry, its world in this
process or behind a served API, and its controllers (sim/loop.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.loop import Local, Loop
from kupgrade.sim.platforms import platform_of
from kupgrade.sim.profile import Spec
from kupgrade.sim.store import Store
from kupgrade.sim.transport import Served, served_profile

if TYPE_CHECKING:  # lightkube's client: imported where a command reaches a server
    from kupgrade.cluster.remote import InformedBackend


def local_loop(
    root: Path, store: Store, spec: Spec, *, with_controllers: bool = True
) -> Loop[Local]:
    """The loop of the cluster at `root` with its world in this process: with its
    controllers, or the world alone for controllers acting over its API."""
    platform = platform_of(spec)
    sim = SimCluster(store)
    transport = Local(store, platform.world(sim, spec))
    periodic = platform.periodic(sim, spec) if with_controllers else None
    return Loop(
        transport, platform, spec, root, periodic=periodic, with_controllers=with_controllers
    )


def served_loop(api: InformedBackend) -> Loop[Served]:
    """The controllers of the cluster served behind `api`, acting through it."""
    home, spec = served_profile(api)
    platform = platform_of(spec)
    return Loop(Served(api), platform, spec, home, periodic=platform.periodic(api, spec))
