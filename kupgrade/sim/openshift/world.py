"""How a simulated OpenShift cluster's own components behave (SPEC X2).

Cluster operators roll out when their Deployment names a new RELEASE_VERSION and report
the version after a duration drawn from their range; the machine-config operator renders
new configs for every pool and reports its version once the pools required for the
upgrade are done; each node's daemon drains, updates, reboots and comes back as the
machine-config daemon does; an OLM operator's Deployment becomes ready after its start
time. Faults from the profile make an operator degrade or stay unavailable, a node never
come back, an operator's pod never become ready. Pods and ReplicaSets are the shared
world's (sim/world.py).
"""

from __future__ import annotations

from typing import Any

from kupgrade.cluster import mco
from kupgrade.cluster.conditions import set_condition
from kupgrade.cluster.objects import key_of, machine_config, openshift_kubelet
from kupgrade.cluster.olm import OWNER
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.events import Event
from kupgrade.sim.openshift.releases import OPERATOR_LABEL, rendered_config
from kupgrade.sim.profile import Olm, Spec, operators_of
from kupgrade.sim.world import World

DRAIN_TIMEOUT = 3600.0
MACHINE_CONFIG = "machine-config"


def _release_version(deployment: dict[str, Any]) -> str | None:
    for container in deployment["spec"]["template"]["spec"].get("containers") or []:
        for env in container.get("env") or []:
            if env.get("name") == "RELEASE_VERSION":
                return str(env.get("value"))
    return None


class OperatorDone(Event, tag="operator-done"):
    """An operator's rollout took its drawn time: it reports the version."""

    name: str
    version: str


class NodeUpdated(Event, tag="node-updated"):
    """A drained node's new config is written: it reboots."""

    name: str
    config: str


class NodeRebooted(Event, tag="node-rebooted"):
    """A rebooting node is back: Ready, waiting to be uncordoned."""

    name: str
    config: str


class DrainTimeout(Event, tag="drain-timeout"):
    """An hour since a drain was asked for (the machine-config controller's limit)."""

    name: str
    config: str


class OlmReady(Event, tag="olm-ready"):
    """An OLM operator's Deployment rolled to a CSV: its pod is ready."""

    namespace: str
    name: str
    owner: str


class OpenShiftWorld(World):
    def __init__(self, sim: SimCluster, spec: Spec) -> None:
        super().__init__(sim, spec, _pools_by_role(sim))
        self.ops = {o.name: o for o in operators_of(spec)}
        # Each component watches what it reacts to, as the real ones do.
        self.deployments = sim.watch("Deployment")
        self.handlers |= {
            OperatorDone: self._on_operator_done,
            NodeUpdated: self._on_node_updated,
            NodeRebooted: self._on_node_rebooted,
            DrainTimeout: self._on_drain_timeout,
            OlmReady: self._on_olm_ready,
        }

    def _on_operator_done(self, e: OperatorDone) -> None:
        name, version = e.name, e.version
        state = self.sim.store.meta(f"op:{name}") or {}
        if state.get("target") != version:
            return
        if name == MACHINE_CONFIG:
            state["rolled"] = True
            self.sim.store.set_meta(f"op:{name}", state)
            return
        self._report(name, version)

    def _on_node_updated(self, e: NodeUpdated) -> None:
        name, config = e.name, e.config
        node = self.sim.get("Node", name)
        if node is None or node["metadata"]["annotations"].get(mco.DESIRED) != config:
            return
        set_condition(
            node["status"]["conditions"],
            {
                "type": "Ready",
                "status": "False",
                "reason": "KubeletNotReady",
                "message": "node is rebooting",
            },
            self._stamp(),
        )
        self.sim.write(node)
        self.sim.record(key_of(node), "Reboot", f"rebooting into {config}")
        fault = self.fault(node=name)
        if fault is not None and fault.fail_reboot:
            self.sim.warn(
                key_of(node), "RebootFailed", "the node did not come back after its reboot"
            )
            return
        self.schedule(self.sim.now() + self._timing(name, "reboot"), NodeRebooted(name, config))

    def _on_node_rebooted(self, e: NodeRebooted) -> None:
        name, config = e.name, e.config
        node = self.sim.get("Node", name)
        if node is None or node["metadata"]["annotations"].get(mco.DESIRED) != config:
            return
        set_condition(
            node["status"]["conditions"], {"type": "Ready", "status": "True"}, self._stamp()
        )
        node["metadata"]["annotations"][mco.DESIRED_DRAIN] = f"uncordon-{config}"
        self.sim.write(node)

    def _on_drain_timeout(self, e: DrainTimeout) -> None:
        name, config = e.name, e.config
        node = self.sim.get("Node", name)
        if node is None:
            return
        notes = node["metadata"]["annotations"]
        waiting = (
            notes.get(mco.DESIRED_DRAIN) == f"drain-{config}"
            and notes.get(mco.LAST_APPLIED_DRAIN) != f"drain-{config}"
        )
        if waiting and notes.get(mco.CURRENT) != config:
            notes[mco.STATE] = mco.DEGRADED
            notes[mco.REASON] = (
                f"failed to drain node: {name} after 1 hour. Please see machine-config-controller logs for more information"
            )
            self.sim.write(node)
            self.sim.warn(key_of(node), "FailedToDrain", notes[mco.REASON])

    # --- reactions to what the controllers wrote ----------------------------------------

    def react(self) -> None:
        self._operators()
        self._daemons()
        self._replicasets()

    def _olm_deployment(self, deployment: dict[str, Any], owner: str) -> None:
        """An operator's Deployment rolled to a new CSV: its pod is ready after the
        profile's start time, or never when a fault says so (SPEC F)."""
        status = deployment.setdefault("status", {})
        if owner in (status.get("rolledOut"), status.get("rolling")):
            return
        status.update({"rolling": owner, "readyReplicas": 0, "availableReplicas": 0})
        self.sim.write(deployment)
        if self.fault(csv=owner) is not None:
            self.sim.warn(
                key_of(deployment), "NeverReady", f"the pod of {owner} never becomes ready"
            )
            return
        meta = deployment["metadata"]
        start = (self.spec.olm or Olm()).start_seconds
        self.schedule(self.sim.now() + start, OlmReady(meta["namespace"], meta["name"], owner))

    def _on_olm_ready(self, e: OlmReady) -> None:
        namespace, name, owner = e.namespace, e.name, e.owner
        found = self.sim.get("Deployment", name, namespace)
        if found is None or (found["metadata"].get("labels") or {}).get(OWNER) != owner:
            return
        found["status"] = {
            "replicas": 1,
            "readyReplicas": 1,
            "availableReplicas": 1,
            "rolledOut": owner,
        }
        self.sim.write(found)

    def _operators(self) -> None:
        for key in self.deployments.drain():
            deployment = self.sim.get("Deployment", key[2], key[1])
            if deployment is None:
                continue
            labels = deployment["metadata"].get("labels") or {}
            if OWNER in labels:
                self._olm_deployment(deployment, labels[OWNER])
                continue
            name = labels.get(OPERATOR_LABEL)
            version = _release_version(deployment)
            if not name or version is None or name not in self.ops:
                continue
            state = self.sim.store.meta(f"op:{name}") or {}
            if state.get("target") != version:
                self._start_rollout(name, version)
        mc = self.sim.store.meta(f"op:{MACHINE_CONFIG}") or {}
        if mc.get("rolled") and not mc.get("reported") and self._required_pools_done(mc["target"]):
            mc["reported"] = True
            self.sim.store.set_meta(f"op:{MACHINE_CONFIG}", mc)
            self._report(MACHINE_CONFIG, mc["target"])

    def _start_rollout(self, name: str, version: str) -> None:
        op = self.ops[name]
        fault = self.fault(operator=name)
        minutes = self.sim.uniform(op.minutes) * (fault.slow if fault else 1.0)
        self.sim.store.set_meta(f"op:{name}", {"target": version})
        co = self.sim.get("ClusterOperator", name)
        if co is not None:
            set_condition(
                co["status"]["conditions"],
                {
                    "type": "Progressing",
                    "status": "True",
                    "reason": "Upgrading",
                    "message": f"Working towards {version}",
                },
                self._stamp(),
            )
            self.sim.write(co)
        self.sim.record(f"clusteroperator/{name}", "Progressing", f"rolling out {version}")
        if name == MACHINE_CONFIG:
            for pool in self.sim.list("MachineConfigPool"):
                target = rendered_config(pool["metadata"]["name"], version)
                self.sim.store.set_meta(f"release-of:{target}", version)
                if self.sim.get("MachineConfig", target) is None:
                    self.sim.write(machine_config(target, version, self._stamp()))
                if pool["spec"]["configuration"]["name"] != target:
                    pool["spec"]["configuration"]["name"] = target
                    self.sim.write(pool)
                    self.sim.record(key_of(pool), "Rendered", f"new target {target}")
        self.schedule(self.sim.now() + minutes * 60, OperatorDone(name, version))

    def _required_pools_done(self, version: str) -> bool:
        for pool in self.sim.list("MachineConfigPool"):
            if mco.REQUIRED_FOR_UPGRADE not in (pool["metadata"].get("labels") or {}):
                continue
            name = pool["metadata"]["name"]
            if pool["status"].get("configuration", {}).get("name") != rendered_config(
                name, version
            ):
                return False
        return True

    def _report(self, name: str, version: str) -> None:
        co = self.sim.get("ClusterOperator", name)
        if co is None:
            return
        fault = self.fault(operator=name)
        status = co["status"]
        status["versions"] = [{"name": "operator", "version": version}]
        stamp = self._stamp()
        available = not (fault and fault.unavailable)
        degraded = bool(fault and fault.degrade)
        set_condition(
            status["conditions"],
            {"type": "Available", "status": "True"}
            if available
            else {
                "type": "Available",
                "status": "False",
                "reason": "SimulatedFault",
                "message": f"{name} is down (injected fault)",
            },
            stamp,
        )
        set_condition(status["conditions"], {"type": "Progressing", "status": "False"}, stamp)
        set_condition(
            status["conditions"],
            {
                "type": "Degraded",
                "status": "True",
                "reason": "SimulatedFault",
                "message": f"{name} is degraded (injected fault)",
            }
            if degraded
            else {"type": "Degraded", "status": "False"},
            stamp,
        )
        self.sim.write(co)
        self.sim.record(f"clusteroperator/{name}", "VersionReached", f"reports {version}")

    def _daemons(self) -> None:
        for node in self.changed_nodes():
            notes = node["metadata"]["annotations"]
            current, desired, state = (
                notes.get(mco.CURRENT),
                notes.get(mco.DESIRED),
                notes.get(mco.STATE),
            )
            if current == desired:
                continue
            name = node["metadata"]["name"]
            drain, applied = notes.get(mco.DESIRED_DRAIN), notes.get(mco.LAST_APPLIED_DRAIN)
            if state == mco.DONE:  # SetWorking, then ask for the drain (performDrain)
                notes[mco.STATE] = mco.WORKING
                self.sim.write(node)
            elif state == mco.WORKING and drain not in (f"drain-{desired}", f"uncordon-{desired}"):
                notes[mco.DESIRED_DRAIN] = f"drain-{desired}"
                self.sim.write(node)
                self.schedule(self.sim.now() + DRAIN_TIMEOUT, DrainTimeout(name, desired))
                self.sim.record(key_of(node), "Drain", f"drain requested for {desired}")
            elif (
                drain == applied == f"drain-{desired}"
                and self.sim.store.meta(f"upd:{name}") != desired
            ):
                self.sim.store.set_meta(f"upd:{name}", desired)
                self.schedule(
                    self.sim.now() + self._timing(name, "update"), NodeUpdated(name, desired)
                )
                self.sim.record(key_of(node), "Update", f"writing {desired}")
            elif drain == applied == f"uncordon-{desired}":
                notes[mco.CURRENT] = desired
                notes[mco.STATE] = mco.DONE
                notes[mco.REASON] = ""
                release = self.sim.store.meta(f"release-of:{desired}")
                if release:  # the kubelet of the release whose config the node now runs
                    node["status"].setdefault("nodeInfo", {})["kubeletVersion"] = openshift_kubelet(
                        release
                    )
                self.sim.write(node)
                self.sim.record(key_of(node), "Done", f"running {desired}")


def _pools_by_role(sim: SimCluster) -> dict[str, list[str]]:
    """A pool's nodes are those with its role label (node-role.kubernetes.io/ROLE)."""
    by_role: dict[str, list[str]] = {}
    for node in sim.list("Node"):
        for label in node["metadata"].get("labels") or {}:
            if label.startswith("node-role.kubernetes.io/"):
                role = label.removeprefix("node-role.kubernetes.io/")
                by_role.setdefault(role, []).append(node["metadata"]["name"])
    return by_role
