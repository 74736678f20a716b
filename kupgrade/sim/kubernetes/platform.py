"""Plain Kubernetes as a platform of simulated clusters: one upgrade controller carries
out the plan `upgrade` recorded, the control plane with kubeadm and then the node pools
(SPEC H6, H7); done when its state says so, failing while a step is blocked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kupgrade.cluster.backend import Backend, Obj
from kupgrade.cluster.kubeadm import POOL_LABEL, is_control_plane, v
from kupgrade.controllers.kube.controller import KubeController, steps_progress
from kupgrade.controllers.kube.record import KubeUpgrade, upgrade_record
from kupgrade.controllers.kube.request import current
from kupgrade.controllers.protocol import Controller, Progress
from kupgrade.controllers.version.status import clusterversion_columns
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.kubernetes.create import populate_kube
from kupgrade.sim.kubernetes.fleet import KubeFleetRun
from kupgrade.sim.kubernetes.profile import check_kube, shape_kube
from kupgrade.sim.kubernetes.upgrade import request, status
from kupgrade.sim.kubernetes.world import KubeWorld
from kupgrade.sim.platform import (
    CreateAsk,
    Crew,
    FleetMember,
    Memory,
    Said,
    UpgradeAsk,
    not_through_api,
    to_version_only,
)
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.report import timeline
from kupgrade.sim.store import Store
from kupgrade.sim.world import World


class Kubernetes:
    name = "kubernetes"
    title = "Kubernetes"
    # kubectl drain waits forever by default; after an hour a stuck upgrade is said
    stall_seconds = 3600.0
    retry_hint = "fix the cause and request the upgrade again with `kupgrade upgrade`"
    upgrade_flags = frozenset(
        {
            "to",
            "image",
            "kubeadm",
            "allow_experimental",
            "allow_rcs",
            "force",
            "available",
            "policy",
        }
    )
    verbs: frozenset[str] = frozenset()
    create_flags = frozenset({"control_planes"})

    def check(self, spec: Spec, where: str) -> None:
        check_kube(spec, where)

    def shape(self, spec: Spec, ask: CreateAsk) -> Spec:
        return shape_kube(spec, ask)

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

    def _request(self, api: Backend) -> KubeUpgrade:
        """The upgrade under way or last carried out (an empty record when none was)."""
        return upgrade_record(api) or KubeUpgrade()

    def updating(self, api: Backend) -> bool:
        record = upgrade_record(api)
        return record is not None and not record.completed

    def refused(self, api: Backend) -> dict[str, Any] | None:
        return None

    def failing(self, api: Backend) -> str | None:
        blocked = self._request(api).blocked
        return blocked if blocked and self.updating(api) else None

    def completed(self, api: Backend) -> bool:
        return self._request(api).completed

    def summary(self, api: Backend) -> dict[str, str]:
        """The control plane's version (its oldest component), and the upgrade under way."""
        record = self._request(api)
        running = self.updating(api)
        blocked = record.blocked if running else None
        status = f"upgrading to {v(record.target)}" if running else ""
        return {
            "VERSION": v(str(current(api).control_plane)),
            "PROGRESSING": str(running),
            "STATUS": f"{status}: {blocked}" if blocked else status,
        }

    def progress(self, api: Backend) -> list[Progress]:
        return steps_progress(api)

    def status(self, api: Backend) -> dict[str, Any]:
        record = upgrade_record(api)
        said = "upgrading" if record is not None else "no upgrade"
        if record is not None and record.completed:
            said = "completed"
        target = record.target if record is not None else ""
        return {
            "name": "cluster",
            "headline": {"TARGET": target, "STATUS": said},
            "target": target,
            "conditions": [],
            "history": [],
            "operators": [],
            "since": record.started if record is not None else 0.0,
        }

    def pool_of(self, node: Obj) -> str:
        labels = node["metadata"].get("labels") or {}
        return (
            "control-plane" if is_control_plane(node) else str(labels.get(POOL_LABEL) or "worker")
        )

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

    def recognizes(self, api: Backend) -> bool:
        """Any cluster the other platforms do not claim (the registry asks them first)."""
        return True

    def upgrade(self, root: Path, store: Store, spec: Spec, ask: UpgradeAsk) -> Said:
        to_version_only(self.title, ask)
        return request(store, ask) if ask.to else status(store)

    def upgrade_api(self, api: Backend, ask: UpgradeAsk) -> Said:
        raise not_through_api(self.title)


KUBERNETES = Kubernetes()
