"""Plain Kubernetes as a platform of simulated clusters: one upgrade controller carries
out the plan `upgrade` recorded, the control plane with kubeadm and then the node pools
(SPEC H6, H7); done when its state says so, failing while a step is blocked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.controllers.kube.controller import STATE, KubeController
from kupgrade.controllers.protocol import Controller
from kupgrade.controllers.version.status import clusterversion_columns
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.kubernetes.create import populate_kube
from kupgrade.sim.kubernetes.fleet import KubeFleetRun
from kupgrade.sim.kubernetes.profile import check_kube
from kupgrade.sim.kubernetes.world import KubeWorld
from kupgrade.sim.platform import Crew, FleetMember, Memory
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.report import timeline
from kupgrade.sim.store import Store
from kupgrade.sim.world import World


class Kubernetes:
    name = "kubernetes"
    retry_hint = "fix the cause and request the upgrade again with `kupgrade upgrade`"

    def check(self, spec: Spec, where: str) -> None:
        check_kube(spec, where)

    def populate(self, root: Path, store: Store, name: str, profile: Profile) -> None:
        populate_kube(store, name, profile)

    def example_profile(self) -> str | None:
        return None

    def world(self, sim: SimCluster, spec: Spec) -> World:
        return KubeWorld(sim, spec)

    def crew(self, api: Backend, spec: Spec, home: Path) -> Crew:
        return Crew([KubeController(api)])

    def periodic(self, api: Backend, spec: Spec) -> Controller | None:
        return None

    def resync(self, api: Backend, memory: Memory, now: float) -> None:
        """The upgrade controller asks to be woken when it needs to be."""

    def _request(self, api: Backend) -> dict[str, Any]:
        return dict(api.state(STATE) or {})

    def updating(self, api: Backend) -> bool:
        state = self._request(api)
        return bool(state) and not state.get("completed") and not state.get("failed")

    def refused(self, api: Backend) -> dict[str, Any] | None:
        return None

    def failing(self, api: Backend) -> str | None:
        blocked = self._request(api).get("blocked")
        return str(blocked) if blocked and self.updating(api) else None

    def completed(self, api: Backend) -> bool:
        return bool(self._request(api).get("completed"))

    def report(
        self, api: Backend, events: list[dict[str, Any]], run: dict[str, Any], started: float
    ) -> dict[str, Any]:
        # The columns of a ClusterVersion the cluster does not have (all empty), kept so
        # that every platform's report has the shape scripts already read.
        return {
            **run,
            "clusterversion": clusterversion_columns({}),
            "timeline": timeline(events, started),
        }

    def fleet(self, members: dict[str, FleetMember], document: dict[str, Any]) -> KubeFleetRun:
        return KubeFleetRun(members, self.name)


KUBERNETES = Kubernetes()
