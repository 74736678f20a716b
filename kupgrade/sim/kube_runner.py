"""The run loop of a simulated plain Kubernetes cluster: the shared loop, commits and
crash safety (SPEC X2, X3) with the kubeadm-style controller and the kubeadm world."""

from __future__ import annotations

from kupgrade.controllers.kube.controller import STATE, KubeController
from kupgrade.sim.kube_world import KubeWorld
from kupgrade.sim.runner import RequestRunner
from kupgrade.sim.world import World


class KubeRunner(RequestRunner):
    state_key = STATE

    def make_world(self) -> World:
        return KubeWorld(self.sim, self.spec)

    def start_controllers(self) -> None:
        self.upgrade = KubeController(self.api)
        self.controllers = [self.upgrade]

    def failing(self) -> str | None:
        blocked = self.request().get("blocked")
        return str(blocked) if blocked and self.updating() else None
