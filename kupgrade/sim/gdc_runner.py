"""The run loop of a simulated distributed-cloud cluster: the same loop, commits and
crash safety as every simulated cluster (SPEC X2, X3), with the distributed-cloud upgrade
controller and the bare-metal world."""

from __future__ import annotations

from kupgrade.controllers.gdc.controller import GdcController
from kupgrade.controllers.gdc.request import STATE, in_progress
from kupgrade.controllers.protocol import Controller
from kupgrade.sim.gdc_world import GdcWorld
from kupgrade.sim.profile import Gdc
from kupgrade.sim.runner import Runner
from kupgrade.sim.world import World


class GdcRunner(Runner):
    retry_hint = "fix the cause and request the upgrade again with `kupgrade upgrade`"

    def make_world(self) -> World:
        return GdcWorld(self.sim, self.spec)

    def start_controllers(self) -> None:
        gdc = self.spec.gdc or Gdc()
        self.upgrade = GdcController(self.api, health_every=gdc.health_check_seconds)
        self.controllers: list[Controller] = [self.upgrade]

    def handoff(self) -> bool:
        return False

    def resync(self, now: float) -> None:
        """The upgrade controller asks to be woken when it needs to be."""

    def updating(self) -> bool:
        return in_progress(self.api) is not None

    def refused(self) -> dict[str, object] | None:
        return None

    def failing(self) -> str | None:
        failed = (self.api.state(STATE) or {}).get("failed")
        return str(failed) if failed else None

    def completed(self) -> bool:
        return bool((self.api.state(STATE) or {}).get("completed"))
