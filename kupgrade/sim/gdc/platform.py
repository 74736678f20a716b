"""Distributed cloud (bare metal) as a platform of simulated clusters: one upgrade
controller carries out the request `upgrade` recorded, stage by stage as `bmctl upgrade
cluster` does (SPEC G6-G11); done or failed when its state says so."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.controllers.gdc.controller import GdcController
from kupgrade.controllers.gdc.request import STATE, in_progress
from kupgrade.controllers.protocol import Controller
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.gdc.create import populate_gdc
from kupgrade.sim.gdc.fleet import GdcFleetRun
from kupgrade.sim.gdc.profile import check_gdc
from kupgrade.sim.gdc.report import gdc_report
from kupgrade.sim.gdc.world import GdcWorld
from kupgrade.sim.platform import Crew, FleetMember, Memory
from kupgrade.sim.profile import Gdc, Profile, Spec
from kupgrade.sim.store import Store
from kupgrade.sim.world import World


class DistributedCloud:
    name = "gdc"
    retry_hint = "fix the cause and request the upgrade again with `kupgrade upgrade`"

    def check(self, spec: Spec, where: str) -> None:
        check_gdc(spec, where)

    def populate(self, root: Path, store: Store, name: str, profile: Profile) -> None:
        populate_gdc(store, name, profile)

    def example_profile(self) -> str | None:
        return (resources.files(__package__) / "example-profile.yaml").read_text(encoding="utf-8")

    def world(self, sim: SimCluster, spec: Spec) -> World:
        return GdcWorld(sim, spec)

    def crew(self, api: Backend, spec: Spec, home: Path) -> Crew:
        gdc = spec.gdc or Gdc()
        return Crew([GdcController(api, health_every=gdc.health_check_seconds)])

    def periodic(self, api: Backend, spec: Spec) -> Controller | None:
        return None

    def resync(self, api: Backend, memory: Memory, now: float) -> None:
        """The upgrade controller asks to be woken when it needs to be."""

    def updating(self, api: Backend) -> bool:
        return in_progress(api) is not None

    def refused(self, api: Backend) -> dict[str, Any] | None:
        return None

    def failing(self, api: Backend) -> str | None:
        failed = (api.state(STATE) or {}).get("failed")
        return str(failed) if failed else None

    def completed(self, api: Backend) -> bool:
        return bool((api.state(STATE) or {}).get("completed"))

    def report(
        self, api: Backend, events: list[dict[str, Any]], run: dict[str, Any], started: float
    ) -> dict[str, Any]:
        return gdc_report(api, events, run, started)

    def fleet(self, members: dict[str, FleetMember], document: dict[str, Any]) -> GdcFleetRun:
        return GdcFleetRun(members, document)


DISTRIBUTED_CLOUD = DistributedCloud()
