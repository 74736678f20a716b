"""OpenShift as a platform of simulated clusters: the version controller applies a release
runlevel by runlevel and hands over to its own new version (SPEC C, D), the node
controller rolls the machine-config pools (SPEC E), OLM installs and upgrades operators
(SPEC F), and the availability controller asks the update service (SPEC A3)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from kupgrade.cluster.backend import Backend, Obj
from kupgrade.cluster.conditions import find
from kupgrade.cluster.olm import olm_busy
from kupgrade.controllers.availability import AvailabilityController
from kupgrade.controllers.nodes.controller import NodeController
from kupgrade.controllers.olm.controller import OlmController
from kupgrade.controllers.protocol import Progress
from kupgrade.controllers.version.controller import VersionController
from kupgrade.controllers.version.progress import progress as applied
from kupgrade.controllers.version.record import version_head
from kupgrade.controllers.version.status import clusterversion_columns
from kupgrade.risks.backends import RiskSource
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.openshift.catalogs import CatalogCache
from kupgrade.sim.openshift.create import populate_openshift
from kupgrade.sim.openshift.profile import check_openshift
from kupgrade.sim.openshift.report import live_status, openshift_report
from kupgrade.sim.openshift.upgrade import answer, check_flags
from kupgrade.sim.openshift.wiring import wiring_for
from kupgrade.sim.openshift.world import OpenShiftWorld
from kupgrade.sim.platform import (
    CreateAsk,
    Crew,
    FleetMember,
    FleetRun,
    Memory,
    Said,
    UpgradeAsk,
)
from kupgrade.sim.profile import Olm, Profile, Spec
from kupgrade.sim.store import Store
from kupgrade.sim.world import World

RESYNC = 300.0  # the version controller re-checks its operators at least this often


def availability(api: Backend, spec: Spec, *, throttled: bool) -> AvailabilityController:
    """The cluster's availability controller, with its PromQL backend (the profile's
    metrics snapshot). The run loop's is throttled as the version controller's is; an
    explicit `upgrade` check evaluates every risk at once."""
    source = RiskSource(metrics=Path(spec.metrics)) if spec.metrics else RiskSource()
    condition = source.condition(required=False, budget=False)
    return AvailabilityController(api, condition, throttled=throttled)


class OpenShift:
    name = "openshift"
    title = "OpenShift"
    # the machine-config operator alerts (MCCDrainError) after an hour of failed drain
    stall_seconds = 3600.0
    retry_hint = "fix the cause and run `kupgrade controller run` again (it retries)"
    upgrade_flags = frozenset(
        {
            "to",
            "image",
            "latest",
            "clear",
            "explicit",
            "include_not_recommended",
            "allow_not_recommended",
            "with_warnings",
            "force",
        }
    )
    verbs = frozenset({"upgrade status", "upgrade channel", "upgrade --kubeconfig", "operators"})
    create_flags: frozenset[str] = frozenset()

    def check(self, spec: Spec, where: str) -> None:
        check_openshift(spec, where)

    def shape(self, spec: Spec, ask: CreateAsk) -> Spec:
        return spec

    def populate(self, root: Path, store: Store, name: str, profile: Profile) -> None:
        populate_openshift(root, store, name, profile)

    def example_profile(self) -> str | None:
        return (resources.files(__package__) / "example-profile.yaml").read_text(encoding="utf-8")

    def world(self, sim: SimCluster, spec: Spec) -> World:
        return OpenShiftWorld(sim, spec)

    def crew(self, api: Backend, spec: Spec, home: Path) -> Crew:
        version = VersionController(api, wiring_for(home, spec))
        olm = spec.olm or Olm()
        operators = OlmController(
            api,
            CatalogCache(),
            policy=olm.policy,
            global_namespace=olm.global_namespace,
            install_timeout=olm.install_timeout_seconds,
        )
        return Crew([version, NodeController(api), operators], lambda: version.handoff)

    def periodic(self, api: Backend, spec: Spec) -> AvailabilityController:
        return availability(api, spec, throttled=True)

    def resync(self, api: Backend, memory: Memory, now: float) -> None:
        """The version controller re-checks its operators every RESYNC seconds while an
        update runs."""
        if self.updating(api) and float(memory.recall("resync_at", 0)) <= now:
            memory.remember("resync_at", now + RESYNC)
            api.requeue_at(now + RESYNC, "ClusterVersion", "version")

    def updating(self, api: Backend) -> bool:
        return version_head(api).updating

    def refused(self, api: Backend) -> dict[str, Any] | None:
        refused = version_head(api).refusal
        return msgspec.to_builtins(refused) if refused is not None else None

    def failing(self, api: Backend) -> str | None:
        """A refused release, or Failing."""
        refused = self.refused(api)
        if refused is not None:
            condition = refused.get("condition")
            return str(condition.get("message", "")) if isinstance(condition, dict) else ""
        cv = api.get("ClusterVersion", "version")
        failing = find((cv or {}).get("status", {}).get("conditions"), "Failing") or {}
        if failing.get("status") == "True":
            return str(failing.get("message") or failing.get("reason") or "Failing=True")
        return None

    def completed(self, api: Backend) -> bool:
        cv = api.get("ClusterVersion", "version")
        if cv is None or self.updating(api) or self.refused(api) is not None:
            return False
        history = cv["status"].get("history") or []
        if not history or history[0].get("state") != "Completed":
            return False
        if olm_busy(
            api.list("Subscription"), api.list("InstallPlan"), api.list("ClusterServiceVersion")
        ):
            return False  # operators being installed or upgraded (SPEC F6)
        return all(
            (find(p["status"].get("conditions"), "Updated") or {}).get("status") == "True"
            for p in api.list("MachineConfigPool")
        )

    def summary(self, api: Backend) -> dict[str, str]:
        cv = api.get("ClusterVersion", "version") or {"status": {}}
        return clusterversion_columns(cv["status"])

    def progress(self, api: Backend) -> list[Progress]:
        """The release's manifests and runlevels (its pools the live view draws node by
        node)."""
        return applied(api)

    def status(self, api: Backend) -> dict[str, Any]:
        return live_status(api)

    def pool_of(self, node: Obj) -> str:
        labels = node["metadata"].get("labels") or {}
        roles = sorted(
            k.removeprefix("node-role.kubernetes.io/")
            for k in labels
            if k.startswith("node-role.kubernetes.io/")
        )
        return "master" if "master" in roles else roles[0] if roles else "worker"

    def report(
        self, api: Backend, events: list[dict[str, Any]], run: dict[str, Any], started: float
    ) -> dict[str, Any]:
        return openshift_report(api, events, run, started)

    def fleet(self, members: dict[str, FleetMember], document: dict[str, Any]) -> FleetRun | None:
        return None

    def recognizes(self, api: Backend) -> bool:
        return api.get("ClusterVersion", "version") is not None

    def upgrade(self, root: Path, store: Store, spec: Spec, ask: UpgradeAsk) -> Said:
        """The update service asked at once (as `oc adm upgrade` makes the operator do),
        then the status or the request."""
        check_flags(ask)
        notes = availability(SimCluster(store), spec, throttled=False).refresh(explicit=True)
        store.commit()
        said = answer(SimCluster(store), ask, "; run `kupgrade controller run` to carry it out.")
        store.commit()  # a request, or a cleared one
        said.notes = notes + said.notes
        return said

    def upgrade_api(self, api: Backend, ask: UpgradeAsk) -> Said:
        """`upgrade --kubeconfig`: the same answers, written to the cluster's ClusterVersion."""
        check_flags(ask)
        return answer(api, ask, ".")


OPENSHIFT = OpenShift()
