"""How the simulated cluster's own components behave (SPEC X2).

Cluster operators roll out when their Deployment names a new RELEASE_VERSION and report
the version after a duration drawn from their range; the machine-config operator renders
new configs for every pool and reports its version once the pools required for the
upgrade are done; each node's daemon drains, updates, reboots and comes back as the
machine-config daemon does; ReplicaSets replace evicted pods on other nodes. Faults from
the profile make an operator degrade or stay unavailable, a pod never leave, a node never
come back.
"""

from __future__ import annotations

from typing import Any

from kupgrade.cluster import mco
from kupgrade.cluster.conditions import set_condition
from kupgrade.cluster.objects import (
    key_of,
    machine_config,
    merge_patch,
    openshift_kubelet,
    pod,
    rfc3339,
)
from kupgrade.cluster.olm import OWNER
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.profile import Fault, Olm, Spec, Workload, operators_of
from kupgrade.sim.releases import OPERATOR_LABEL, rendered_config
from kupgrade.sim.spread import Ring, takes_pods

DRAIN_TIMEOUT = 3600.0
MACHINE_CONFIG = "machine-config"


def _release_version(deployment: dict[str, Any]) -> str | None:
    for container in deployment["spec"]["template"]["spec"].get("containers") or []:
        for env in container.get("env") or []:
            if env.get("name") == "RELEASE_VERSION":
                return str(env.get("value"))
    return None


class World:
    def __init__(self, sim: SimCluster, spec: Spec) -> None:
        self.sim = sim
        self.spec = spec
        self.ops = {o.name: o for o in operators_of(spec)}
        # Only a Deployment's ReplicaSet replaces its evicted pods; DaemonSet and static
        # pods are never drained, and a bare pod is gone for good once evicted.
        self.workloads = {
            (w.namespace, w.name): w for w in spec.workloads if w.kind == "Deployment"
        }
        # Each component watches what it reacts to, as the real ones do.
        self.deployments = sim.watch("Deployment")
        self.nodes = sim.watch("Node")
        self.short: set[tuple[str, str]] = set(self.workloads)  # may be missing replicas
        self.starved: set[tuple[str, str]] = set()  # missing replicas and no node for them
        self.alive: set[tuple[str, str, str]] = set()  # pods counted in `live`
        self.live: dict[tuple[str, str], int] = {}  # running (not terminating) pods per owner
        # The ReplicaSets follow every pod change as it happens (as the ledger does), not
        # through a watch: a watch hands over each changed pod once more, sorted, only for
        # the count of running pods per owner that every change already tells.
        for key, found in sim.store.keyed("Pod"):
            self._pod_changed(key, found)
        sim.store.observe("Pod", self._pod_changed)
        self.by_role: dict[str, list[str]] = {}
        for node in sim.list("Node"):
            for label in node["metadata"].get("labels") or {}:
                if label.startswith("node-role.kubernetes.io/"):
                    role = label.removeprefix("node-role.kubernetes.io/")
                    self.by_role.setdefault(role, []).append(node["metadata"]["name"])
        self.rings: dict[str, Ring] = {}  # pool -> its nodes that take pods (sim/spread.py)
        sim.store.observe("Node", self._node_changed)

    def fault(self, **match: str) -> Fault | None:
        for fault in self.spec.faults:
            if all(getattr(fault, k) == v for k, v in match.items()):
                return fault
        return None

    # --- scheduled events ---------------------------------------------------------------

    def fire(self, action: list[Any]) -> None:
        kind, *args = action
        handler = getattr(self, "_on_" + kind.replace("-", "_"), None)
        if handler is not None:
            handler(*args)

    def _on_wake(self, kind: str = "", namespace: str = "", name: str = "") -> None:
        if kind:
            self.sim.store.touch((kind, namespace, name))

    def _on_pod_gone(self, namespace: str, name: str) -> None:
        self.sim.remove("Pod", name, namespace)

    def _on_pod_ready(self, namespace: str, name: str) -> None:
        found = self.sim.get("Pod", name, namespace)
        if found is not None and not found["metadata"].get("deletionTimestamp"):
            set_condition(
                found["status"]["conditions"], {"type": "Ready", "status": "True"}, self._stamp()
            )
            self.sim.write(found)

    def _on_operator_done(self, name: str, version: str) -> None:
        state = self.sim.store.meta(f"op:{name}") or {}
        if state.get("target") != version:
            return
        if name == MACHINE_CONFIG:
            state["rolled"] = True
            self.sim.store.set_meta(f"op:{name}", state)
            return
        self._report(name, version)

    def _on_node_updated(self, name: str, config: str) -> None:
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
        self.sim.store.schedule(
            self.sim.now() + self._timing(name, "reboot"), ["node-rebooted", name, config]
        )

    def _on_node_rebooted(self, name: str, config: str) -> None:
        node = self.sim.get("Node", name)
        if node is None or node["metadata"]["annotations"].get(mco.DESIRED) != config:
            return
        set_condition(
            node["status"]["conditions"], {"type": "Ready", "status": "True"}, self._stamp()
        )
        node["metadata"]["annotations"][mco.DESIRED_DRAIN] = f"uncordon-{config}"
        self.sim.write(node)

    def _on_drain_timeout(self, name: str, config: str) -> None:
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

    def _on_change(self, kind: str, name: str, namespace: str, patch: dict[str, Any]) -> None:
        found = self.sim.get(kind, name, namespace)
        if found is None:
            self.sim.warn(f"{kind.lower()}/{name}", "ChangeSkipped", "no such object to patch")
            return
        self.sim.write(merge_patch(found, patch))
        self.sim.record(key_of(found), "Changed", f"patched {sorted(patch)}")

    # --- reactions to what the controllers wrote ----------------------------------------

    def react(self) -> None:
        self._operators()
        self._daemons()
        self._replicasets()

    def _stamp(self) -> str:
        return rfc3339(self.sim.now())

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
        self.sim.store.schedule(
            self.sim.now() + start, ["olm-ready", meta["namespace"], meta["name"], owner]
        )

    def _on_olm_ready(self, namespace: str, name: str, owner: str) -> None:
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
        self.sim.store.schedule(self.sim.now() + minutes * 60, ["operator-done", name, version])

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

    def _timing(self, node: str, phase: str) -> float:
        override = self.spec.node_phases.overrides.get(node)
        if override is not None:
            return float(getattr(override, phase))
        return self.sim.uniform(getattr(self.spec.node_phases, phase))

    def changed_nodes(self) -> list[dict[str, Any]]:
        """Nodes changed since the last look; a change may have made room for the
        replicas that found none."""
        changed = self.nodes.drain()
        if changed:
            self.short |= self.starved
        return [n for key in changed if (n := self.sim.get("Node", key[2])) is not None]

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
                self.sim.store.schedule(
                    self.sim.now() + DRAIN_TIMEOUT, ["drain-timeout", name, desired]
                )
                self.sim.record(key_of(node), "Drain", f"drain requested for {desired}")
            elif (
                drain == applied == f"drain-{desired}"
                and self.sim.store.meta(f"upd:{name}") != desired
            ):
                self.sim.store.set_meta(f"upd:{name}", desired)
                self.sim.store.schedule(
                    self.sim.now() + self._timing(name, "update"), ["node-updated", name, desired]
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

    def _pod_changed(self, key: tuple[str, str, str], found: dict[str, Any] | None) -> None:
        """A pod that starts or stops running changes what its owner is short of. Every
        change is seen, so a pod created and evicted between two reactions counts too."""
        owner = (key[1], key[2].rsplit("-", 1)[0])
        if owner not in self.workloads:
            return
        alive = found is not None and not found["metadata"].get("deletionTimestamp")
        if alive != (key in self.alive):
            (self.alive.add if alive else self.alive.discard)(key)
            self.live[owner] = self.live.get(owner, 0) + (1 if alive else -1)
            self.short.add(owner)

    def _replicasets(self) -> None:
        """Replace the missing replicas of the owners that may be short of some. One that
        could not be placed is looked at again when nodes change (changed_nodes); until
        then nothing could place it, and its pods becoming ready change nothing either."""
        for owner in sorted(self.short):
            workload = self.workloads[owner]
            missing = workload.replicas - self.live.get(owner, 0)
            while missing > 0 and self._create_pod(workload):
                missing -= 1
            (self.starved.add if missing > 0 else self.starved.discard)(owner)
        self.short.clear()

    def _place(self, workload: Workload) -> str | None:
        """The next schedulable node of the pool, round robin (the scheduler's spreading)."""
        if workload.node is not None:
            return workload.node if takes_pods(self.sim.get("Node", workload.node)) else None
        ring = self._ring(workload.pool)
        key = f"turn:{workload.pool}"
        position = ring.first_from(int(self.sim.store.meta(key, 0)))
        if position is None:
            return None
        self.sim.store.set_meta(key, (position + 1) % len(ring.names))
        return ring.names[position]

    def _ring(self, pool: str) -> Ring:
        """The pool's ring, made on first use: subclasses name the pools after this
        class's constructor has run."""
        ring = self.rings.get(pool)
        if ring is None:
            ring = self.rings[pool] = Ring(self.by_role.get(pool, []), self._node)
        return ring

    def _node(self, name: str) -> dict[str, Any] | None:
        return self.sim.get("Node", name)

    def _node_changed(self, key: tuple[str, str, str], node: dict[str, Any] | None) -> None:
        for ring in self.rings.values():
            ring.changed(key[2], node)

    def _create_pod(self, workload: Workload) -> bool:
        node_name = self._place(workload)
        if node_name is None:
            return False
        serial = int(self.sim.store.meta(f"serial:{workload.namespace}/{workload.name}", 0))
        self.sim.store.set_meta(f"serial:{workload.namespace}/{workload.name}", serial + 1)
        name = f"{workload.name}-{serial:05d}"
        created = pod(
            name,
            workload.namespace,
            owner=workload.name,
            labels={"app": workload.name},
            node_name=node_name,
            created=self._stamp(),
        )
        notes = {"kupgrade.io/termination-seconds": str(workload.termination_seconds)}
        fault = self.fault(pod=f"{workload.namespace}/{workload.name}")
        if fault is not None:
            notes["kupgrade.io/never-terminates"] = "true"
        created["metadata"]["annotations"] = notes
        self.sim.write(created)
        self.sim.store.schedule(
            self.sim.now() + workload.start_seconds, ["pod-ready", workload.namespace, name]
        )
        return True
