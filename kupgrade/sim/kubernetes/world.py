"""The physics of a simulated kubeadm cluster (SPEC H6): a static pod whose manifest
names a new image restarts (not ready meanwhile, then running the new image), and a node
whose kubelet package was upgraded restarts its kubelet (NotReady meanwhile, then
reporting the new kubelet, its kube-proxy pod replaced with the new image). Pods,
budgets and evictions are the shared world's."""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.conditions import set_condition
from kupgrade.cluster.kubeadm import KUBELET_TARGET, kubelet_of, node_pool, proxy_pod, v
from kupgrade.cluster.objects import key_of
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.events import Event
from kupgrade.sim.profile import Spec
from kupgrade.sim.world import World

STATIC_RESTART = (10.0, 40.0)  # seconds a static pod takes to come back on a new image


class StaticReady(Event, tag="static-ready"):
    """A static pod restarted on its new image is ready."""

    namespace: str
    name: str
    image: str


class KubeletReady(Event, tag="kubelet-ready"):
    """A node's restarted kubelet reports its new version."""

    name: str
    target: str


class KubeWorld(World):
    def __init__(self, sim: SimCluster, spec: Spec) -> None:
        # Workloads name the profile's pools; nodes carry that name as a label.
        pools: dict[str, list[str]] = {}
        for node in sim.list("Node"):
            pools.setdefault(node_pool(node), []).append(node["metadata"]["name"])
        super().__init__(sim, spec, pools)
        self.static = sim.watch("Pod")
        self.kubelets = sim.watch("Node")
        self.handlers |= {StaticReady: self._on_static_ready, KubeletReady: self._on_kubelet_ready}

    def react(self) -> None:
        self.changed_nodes()  # a node that changed may take the replicas that found none
        self._replicasets()
        self._static_pods()
        self._kubelets()

    def _static_pods(self) -> None:
        for _, namespace, name in self.static.drain():
            pod = self.sim.get("Pod", name, namespace)
            if pod is None or (pod["metadata"].get("labels") or {}).get("tier") != "control-plane":
                continue
            image = pod["spec"]["containers"][0]["image"]
            status = pod["status"]
            if status.get("runningImage") == image or status.get("restartingTo") == image:
                continue
            self._restart(
                pod,
                image,
                ("Restarting", f"static pod restarts on {image}"),
                self.sim.uniform(STATIC_RESTART),
                StaticReady(namespace, name, image),
            )

    def _restart(
        self,
        obj: dict[str, Any],
        target: str,
        said: tuple[str, str],
        seconds: float,
        then: Event,
    ) -> None:
        """A pod or a node going down to come back at `target`: not ready until `then`
        fires, `seconds` from now."""
        obj["status"]["restartingTo"] = target
        set_condition(
            obj["status"]["conditions"],
            {"type": "Ready", "status": "False", "reason": said[0]},
            self._stamp(),
        )
        self.sim.write(obj)
        self.sim.record(key_of(obj), *said)
        self.schedule(self.sim.now() + seconds, then)

    def _on_static_ready(self, e: StaticReady) -> None:
        namespace, name, image = e.namespace, e.name, e.image
        pod = self.sim.get("Pod", name, namespace)
        if pod is None or pod["status"].get("restartingTo") != image:
            return
        status = pod["status"]
        status["runningImage"] = image
        status.pop("restartingTo", None)
        set_condition(status["conditions"], {"type": "Ready", "status": "True"}, self._stamp())
        self.sim.write(pod)
        self.sim.record(key_of(pod), "Started", f"running {image}")

    def _kubelets(self) -> None:
        for _, _, name in self.kubelets.drain():
            node = self.sim.get("Node", name)
            if node is None:
                continue
            target = (node["metadata"].get("annotations") or {}).get(KUBELET_TARGET)
            status = node["status"]
            if not target or kubelet_of(node) == target or status.get("restartingTo") == target:
                continue
            timing = self.spec.node_phases.overrides.get(name)
            seconds = timing.reboot if timing else self.sim.uniform(self.spec.node_phases.reboot)
            self._restart(
                node,
                target,
                ("KubeletRestarting", f"kubelet restarts at {v(target)}"),
                seconds,
                KubeletReady(name, target),
            )

    def _on_kubelet_ready(self, e: KubeletReady) -> None:
        name, target = e.name, e.target
        node = self.sim.get("Node", name)
        if node is None or node["status"].get("restartingTo") != target:
            return
        status: dict[str, Any] = node["status"]
        status.pop("restartingTo", None)
        status["nodeInfo"].update({"kubeletVersion": v(target), "kubeProxyVersion": v(target)})
        set_condition(
            status["conditions"],
            {"type": "Ready", "status": "True", "reason": "KubeletReady"},
            self._stamp(),
        )
        self.sim.write(node)
        for pod in self.sim.pods_on(name):
            if (pod["metadata"].get("labels") or {}).get("k8s-app") == "kube-proxy":
                self.sim.remove("Pod", pod["metadata"]["name"], "kube-system")
        self.sim.write(proxy_pod(name, target, self._stamp()))
        self.sim.record(
            f"node/{name}", "KubeletReady", f"kubelet {v(target)}, kube-proxy {v(target)}"
        )
