"""The run loop of a simulated plain Kubernetes cluster: the shared loop, commits and
crash safety (SPEC X2, X3) with the kubeadm-style controller and the kubeadm world."""

from __future__ import annotations

from kupgrade.controllers.kube.controller import STATE, KubeController
from kupgrade.controllers.kube.request import in_progress
from kupgrade.sim.kube_world import KubeWorld
from kupgrade.sim.runner import Runner
from kupgrade.sim.world import World


class KubeRunner(Runner):
    retry_hint = "fix the cause and request the upgrade again with `kupgrade upgrade`"

    def make_world(self) -> World:
        return KubeWorld(self.sim, self.spec)

    def start_controllers(self) -> None:
        self.upgrade = KubeController(self.api)
        self.controllers = [self.upgrade]

    def handoff(self) -> bool:
        return False

    def resync(self, now: float) -> None:
        """The controller asks to be woken when it needs to be."""

    def updating(self) -> bool:
        return in_progress(self.api) is not None

    def refused(self) -> dict[str, object] | None:
        return None

    def failing(self) -> str | None:
        blocked = (self.api.state(STATE) or {}).get("blocked")
        return str(blocked) if blocked and self.updating() else None

    def completed(self) -> bool:
        return bool((self.api.state(STATE) or {}).get("completed"))
