"""How a simulated distributed-cloud cluster behaves while it is upgraded (SPEC X2, G6,
G7): components roll out and are down for a while, nodes in maintenance are upgraded by
their job and come back, the preflight and health checkers fill in their results, and
ReplicaSets put evicted pods elsewhere. Faults from the profile make a component slow, a
preflight check fail, a node fail its health checks or never come back, a pod never stop.
"""

from __future__ import annotations

from typing import Any

from kupgrade.cluster import gdc as g
from kupgrade.cluster.conditions import set_condition
from kupgrade.cluster.objects import key_of
from kupgrade.controllers.gdc.rollout import DESIRED, MAINTENANCE
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.events import Event
from kupgrade.sim.gdc.create import PROFILE_POOL
from kupgrade.sim.profile import Gdc, Spec, components_of
from kupgrade.sim.world import World

HEALTH_CHECK_SECONDS = 30.0  # one round of the health checks


class ComponentDown(Event, tag="component-down"):
    """A rolling component's down window begins."""

    namespace: str
    name: str
    target: str


class ComponentUp(Event, tag="component-up"):
    """A rolling component's down window ends."""

    namespace: str
    name: str
    target: str


class ComponentDone(Event, tag="component-done"):
    """A component's rollout took its drawn time: it runs the target."""

    namespace: str
    name: str
    target: str


class MachineUpgraded(Event, tag="machine-upgraded"):
    """A node in maintenance was upgraded by its job: it restarts."""

    name: str
    version: str


class MachineBack(Event, tag="machine-back"):
    """A restarted node is back at the new version."""

    name: str
    version: str


class CheckDone(Event, tag="check-done"):
    """A preflight or health check round finished."""

    kind: str
    namespace: str
    name: str
    round_: int


class GdcWorld(World):
    def __init__(self, sim: SimCluster, spec: Spec) -> None:
        # Workloads name the profile's pools; nodes carry that name as a label.
        pools: dict[str, list[str]] = {}
        for node in sim.list("Node"):
            pool = (node["metadata"].get("labels") or {}).get(PROFILE_POOL, "")
            pools.setdefault(pool, []).append(node["metadata"]["name"])
        super().__init__(sim, spec, pools)
        self.gdc = spec.gdc or Gdc()
        self.components = {c.name: c for c in components_of(self.gdc)}
        self.deployments = sim.watch("Deployment")
        self.checks = sim.watch("PreflightCheck", "HealthCheck")
        self.handlers |= {
            ComponentDown: self._on_component_down,
            ComponentUp: self._on_component_up,
            ComponentDone: self._on_component_done,
            MachineUpgraded: self._on_machine_upgraded,
            MachineBack: self._on_machine_back,
            CheckDone: self._on_check_done,
        }

    def react(self) -> None:
        self._components()
        self._machines()
        self._checks()
        self._replicasets()

    # --- components ---------------------------------------------------------------------

    def _components(self) -> None:
        for key in self.deployments.drain():
            dep = self.sim.get("Deployment", key[2], key[1])
            if dep is None:
                continue
            name = (dep["metadata"].get("labels") or {}).get(g.COMPONENT_LABEL)
            notes = dep["metadata"].get("annotations") or {}
            target = notes.get(g.COMPONENT_DESIRED)
            if name not in self.components or target == notes.get(g.COMPONENT_VERSION):
                continue
            state = self.sim.store.meta(f"comp:{name}") or {}
            if state.get("target") != target:
                self._roll(name, str(target), key[1])

    def _roll(self, name: str, target: str, namespace: str) -> None:
        component = self.components[name]
        fault = self.fault(component=name)
        slow = fault.slow if fault else 1.0
        minutes = self.sim.uniform(component.minutes) * slow
        down = min(self.sim.uniform(component.downtime) * slow, minutes)
        now = self.sim.now()
        self.sim.store.set_meta(f"comp:{name}", {"target": target})
        self.sim.record(f"component/{name}", "Progressing", f"rolling out {target}")
        if down > 0:
            start = now + (minutes - down) * 30  # the down window sits mid-rollout
            self.schedule(start, ComponentDown(namespace, name, target))
            self.schedule(start + down * 60, ComponentUp(namespace, name, target))
        self.schedule(now + minutes * 60, ComponentDone(namespace, name, target))

    def _available(self, namespace: str, name: str, up: bool, reason: str, note: str) -> None:
        dep = self.sim.get("Deployment", name, namespace)
        if dep is None:
            return
        set_condition(
            dep["status"].setdefault("conditions", []),
            {"type": "Available", "status": "True" if up else "False", "reason": reason},
            self._stamp(),
        )
        dep["status"]["availableReplicas"] = 1 if up else 0
        self.sim.write(dep)
        self.sim.record(f"component/{name}", "ComponentUp" if up else "ComponentDown", note)

    def _on_component_down(self, e: ComponentDown) -> None:
        namespace, name, target = e.namespace, e.name, e.target
        self._available(namespace, name, False, "Upgrading", f"down while {target} rolls out")

    def _on_component_up(self, e: ComponentUp) -> None:
        namespace, name, target = e.namespace, e.name, e.target
        self._available(namespace, name, True, "MinimumReplicasAvailable", f"up at {target}")

    def _on_component_done(self, e: ComponentDone) -> None:
        namespace, name, target = e.namespace, e.name, e.target
        dep = self.sim.get("Deployment", name, namespace)
        if dep is None or dep["metadata"]["annotations"].get(g.COMPONENT_DESIRED) != target:
            return
        dep["metadata"]["annotations"][g.COMPONENT_VERSION] = target
        self.sim.write(dep)
        self.sim.record(f"component/{name}", "VersionReached", f"runs {target}")

    # --- nodes --------------------------------------------------------------------------

    def _machines(self) -> None:
        for node in self.changed_nodes():
            notes = node["metadata"].get("annotations") or {}
            desired = notes.get(DESIRED)
            if notes.get(g.NODE_STATE) != MAINTENANCE or desired == notes.get(g.NODE_VERSION):
                continue
            name = node["metadata"]["name"]
            if self.sim.store.meta(f"upd:{name}") != desired:
                self.sim.store.set_meta(f"upd:{name}", desired)
                self.schedule(
                    self.sim.now() + self._timing(name, "update"),
                    MachineUpgraded(name, str(desired)),
                )

    def _on_machine_upgraded(self, e: MachineUpgraded) -> None:
        name, version = e.name, e.version
        node = self.sim.get("Node", name)
        if node is None:
            return
        self._ready(node, False, "the node restarts its kubelet and runtime")
        self.sim.record(key_of(node), "Reboot", f"restarting at {version}")
        fault = self.fault(node=name)
        if fault is not None and fault.fail_reboot:
            self.sim.warn(key_of(node), "RebootFailed", "the node did not come back")
            return
        self.schedule(self.sim.now() + self._timing(name, "reboot"), MachineBack(name, version))

    def _on_machine_back(self, e: MachineBack) -> None:
        name, version = e.name, e.version
        node = self.sim.get("Node", name)
        if node is None:
            return
        node["metadata"]["annotations"][g.NODE_VERSION] = version
        node["status"].setdefault("nodeInfo", {})["kubeletVersion"] = g.kubelet_version(version)
        self._ready(node, True, "")

    def _ready(self, node: dict[str, Any], ready: bool, message: str) -> None:
        set_condition(
            node["status"]["conditions"],
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "reason": "KubeletReady" if ready else "KubeletNotReady",
                "message": message,
            },
            self._stamp(),
        )
        self.sim.write(node)

    # --- the checkers -------------------------------------------------------------------

    def _checks(self) -> None:
        for kind, namespace, name in self.checks.drain():
            obj = self.sim.get(kind, name, namespace)
            if obj is None:
                continue
            round_ = int(obj["spec"].get("round", 1))
            status = obj.get("status") or {}
            key = f"chk:{kind}/{namespace}/{name}"
            if status.get("round", 1) == round_ and "pass" in status:
                continue
            if self.sim.store.meta(key) == round_:
                continue
            self.sim.store.set_meta(key, round_)
            seconds = (
                self.sim.uniform(self.gdc.preflight_minutes) * 60
                if kind == "PreflightCheck"
                else HEALTH_CHECK_SECONDS
            )
            obj["status"] = {**status, "startTime": self._stamp()}
            self.sim.write(obj)
            self.schedule(self.sim.now() + seconds, CheckDone(kind, namespace, name, round_))

    def _on_check_done(self, e: CheckDone) -> None:
        kind, namespace, name, round_ = e.kind, e.namespace, e.name, e.round_
        obj = self.sim.get(kind, name, namespace)
        if obj is None:
            return
        results = self._preflight() if kind == "PreflightCheck" else self._health()
        failed = [f"{check}: {r['message']}" for check, r in results.items() if not r["passed"]]
        obj["status"] = {
            **(obj.get("status") or {}),
            "pass": not failed,
            "round": round_,
            "completionTime": self._stamp(),
            "checks": results,
            "message": "; ".join(failed),
        }
        self.sim.write(obj)
        what = f"{kind.lower()}/{name}"
        if failed:
            self.sim.warn(what, "CheckFailed", "; ".join(failed))
        else:
            self.sim.record(what, "CheckPassed", f"{len(results)} checks passed")

    def _preflight(self) -> dict[str, dict[str, Any]]:
        """The upgrade preflight: cluster upgrade, network health and node checks (G8)."""
        results = {
            "cluster-upgrade": {"passed": True, "message": ""},
            "network-health": {"passed": True, "message": ""},
            "node": self._nodes_ready(),
        }
        for fault in self.spec.faults:
            if fault.preflight in results:
                results[fault.preflight] = {
                    "passed": False,
                    "message": fault.message or f"{fault.preflight} check failed (injected fault)",
                }
        return results

    def _nodes_ready(self) -> dict[str, Any]:
        down = [n["metadata"]["name"] for n in self.sim.list("Node") if not g.is_ready(n)]
        return {
            "passed": not down,
            "message": f"nodes not ready: {', '.join(sorted(down))}" if down else "",
        }

    def _health(self) -> dict[str, dict[str, Any]]:
        """One round of the cluster's health checks: nodes, components."""
        results: dict[str, dict[str, Any]] = {"nodes": self._nodes_ready()}
        for fault in self.spec.faults:
            if fault.node is None or not fault.health_failures:
                continue
            seen = int(self.sim.store.meta(f"hf:{fault.node}", 0))
            if seen < fault.health_failures:
                self.sim.store.set_meta(f"hf:{fault.node}", seen + 1)
                results[f"node/{fault.node}"] = {
                    "passed": False,
                    "message": fault.message or "the node's health check failed (injected fault)",
                }
        down = [
            d["metadata"]["name"]
            for d in self.sim.list("Deployment")
            if g.COMPONENT_LABEL in (d["metadata"].get("labels") or {})
            and not d["status"].get("availableReplicas")
        ]
        results["components"] = {
            "passed": not down,
            "message": f"not available: {', '.join(sorted(down))}" if down else "",
        }
        return results
