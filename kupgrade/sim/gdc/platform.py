"""Distributed cloud (bare metal) as a platform of simulated clusters: one upgrade
controller carries out the request `upgrade` recorded, stage by stage as `bmctl upgrade
cluster` does (SPEC G6-G11); done or failed when its state says so."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from kupgrade.cluster.backend import Backend, Obj
from kupgrade.cluster.conditions import conditions_row
from kupgrade.cluster.gdc import POOL_LABEL, cluster_columns, own_clusters
from kupgrade.controllers.gdc.controller import GdcController
from kupgrade.controllers.gdc.request import in_progress, upgrade_record
from kupgrade.controllers.protocol import Controller, Progress
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.gdc.create import populate_gdc
from kupgrade.sim.gdc.fleet import GdcFleetRun
from kupgrade.sim.gdc.profile import check_gdc, shape_gdc
from kupgrade.sim.gdc.report import gdc_report
from kupgrade.sim.gdc.upgrade import request, status
from kupgrade.sim.gdc.world import GdcWorld
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
from kupgrade.sim.profile import Gdc, Profile, Spec
from kupgrade.sim.store import Store
from kupgrade.sim.world import World


class DistributedCloud:
    name = "gdc"
    title = "distributed-cloud"
    # the same hour as the machine-config drain alert: then a stuck upgrade is said
    stall_seconds = 3600.0
    retry_hint = "fix the cause and request the upgrade again with `kupgrade upgrade`"
    upgrade_flags = frozenset(
        {"to", "image", "bmctl", "leave_pools", "nodepool", "use_bootstrap", "releases"}
    )
    verbs: frozenset[str] = frozenset()
    create_flags = frozenset({"role", "managed_by"})

    def check(self, spec: Spec, where: str) -> None:
        check_gdc(spec, where)

    def shape(self, spec: Spec, ask: CreateAsk) -> Spec:
        return shape_gdc(spec, ask)

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
        record = upgrade_record(api)
        return record.failed if record is not None and record.failed else None

    def completed(self, api: Backend) -> bool:
        record = upgrade_record(api)
        return record is not None and record.completed

    def summary(self, api: Backend) -> dict[str, str]:
        found = own_clusters(api.list("Cluster"))
        columns = cluster_columns(found[0]) if found else {}
        record = upgrade_record(api)
        running = record is not None and record.running
        if record is not None and record.failed:
            status = f"upgrade to {record.target} stopped: {record.failed}"
        elif record is not None and running:
            status = f"upgrading to {record.target}"
        else:
            status = columns.get("CLUSTER STATE", "")
        return {
            "VERSION": columns.get("ABM VERSION", ""),
            "PROGRESSING": str(running),
            "STATUS": status,
        }

    def progress(self, api: Backend) -> list[Progress]:
        return GdcController(api).progress()

    def status(self, api: Backend) -> dict[str, Any]:
        cluster = own_clusters(api.list("Cluster"))[0]
        record = upgrade_record(api)
        status = cluster.get("status") or {}
        return {
            "name": cluster["metadata"]["name"],
            "headline": cluster_columns(cluster),
            "target": record.target if record is not None else "",
            "conditions": [conditions_row(c) for c in status.get("conditions") or []],
            "history": [],
            "operators": [],
            "failed": record.failed if record is not None else "",
            "since": record.requested_at if record is not None else 0.0,
        }

    def pool_of(self, node: Obj) -> str:
        return str((node["metadata"].get("labels") or {}).get(POOL_LABEL) or "control-plane")

    def report(
        self, api: Backend, events: list[dict[str, Any]], run: dict[str, Any], started: float
    ) -> dict[str, Any]:
        return gdc_report(api, events, run, started)

    def fleet(self, members: dict[str, FleetMember], document: dict[str, Any]) -> GdcFleetRun:
        return GdcFleetRun(members, document)

    def recognizes(self, api: Backend) -> bool:
        return bool(own_clusters(api.list("Cluster")))

    def upgrade(self, root: Path, store: Store, spec: Spec, ask: UpgradeAsk) -> Said:
        to_version_only(self.title, ask)
        return request(store, ask) if ask.to else status(store)

    def upgrade_api(self, api: Backend, ask: UpgradeAsk) -> Said:
        raise not_through_api(self.title)


DISTRIBUTED_CLOUD = DistributedCloud()
