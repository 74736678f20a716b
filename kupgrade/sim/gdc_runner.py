"""The run loop of a simulated distributed-cloud cluster: the same loop, commits and
crash safety as every simulated cluster (SPEC X2, X3), with the distributed-cloud upgrade
controller and the bare-metal world."""

from __future__ import annotations

from kupgrade.controllers.gdc.controller import GdcController
from kupgrade.controllers.gdc.request import STATE, in_progress
from kupgrade.controllers.protocol import Controller
from kupgrade.sim.gdc_world import GdcWorld
from kupgrade.sim.profile import Gdc
from kupgrade.sim.runner import RequestRunner
from kupgrade.sim.world import World


class GdcRunner(RequestRunner):
    state_key = STATE

    def make_world(self) -> World:
        return GdcWorld(self.sim, self.spec)

    def start_controllers(self) -> None:
        gdc = self.spec.gdc or Gdc()
        self.upgrade = GdcController(self.api, health_every=gdc.health_check_seconds)
        self.controllers: list[Controller] = [self.upgrade]

    def updating(self) -> bool:
        return in_progress(self.api) is not None

    def failing(self) -> str | None:
        failed = self.request().get("failed")
        return str(failed) if failed else None
