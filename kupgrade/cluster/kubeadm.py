"""A kubeadm cluster's objects as the API shows them (SPEC H1-H6): control-plane nodes running
kube-apiserver, kube-controller-manager, kube-scheduler and etcd as static pods (mirror
pods in kube-system, `component` and `tier: control-plane` labels, images of
registry.k8s.io tagged with the version), kube-proxy as a DaemonSet's pod on every node,
and each node's kubelet and kube-proxy versions in `status.nodeInfo` — what
`cluster/live.py` reads back as the skew rules' inventory.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from kupgrade.cluster.objects import MIRROR_ANNOTATION, meta, node_info

Obj = dict[str, Any]
REGISTRY = "registry.k8s.io"
APISERVER = "kube-apiserver"
CONTROLLERS = ("kube-controller-manager", "kube-scheduler")
STATIC = (APISERVER, *CONTROLLERS)
CLOUD = "cloud-controller-manager"  # run as a static pod when a cluster's shape says so
MANAGERS = (*CONTROLLERS, CLOUD)  # the components SPEC H4 holds to the apiservers
CONTROL_PLANE_ROLE = "control-plane"
POOL_LABEL = "kupgrade.io/pool"
# The kubelet version the controller asked a node for (its package upgraded, the kubelet
# to be restarted): the simulated node restarts its kubelet and reports it.
KUBELET_TARGET = "kupgrade.io/kubelet-version"
ETCD = {30: "3.5.12-0", 31: "3.5.15-0", 32: "3.5.16-0", 33: "3.5.21-0"}  # kubeadm's defaults
# A registry's tag may carry a vendor suffix (-eks-…), dropped; a pre-release is kept.
_TAG = re.compile(r":v?(\d+\.\d+\.\d+(?:-(?:alpha|beta|rc)\.\d+)?)")


def v(version: str) -> str:
    """The `v`-prefixed form Kubernetes reports (v1.30.4)."""
    return version if version.startswith("v") else f"v{version}"


def image_version(pod: Obj) -> str:
    """The version a pod's first tagged image carries ("" when none): what kubeadm's
    static pods and a real cluster's control-plane pods say they run."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        found = _TAG.search(str(container.get("image", "")))
        if found:
            return found.group(1)
    return ""


def _ready(created: str) -> Obj:
    return {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": created}],
    }


def static_pod(component: str, node: str, version: str, created: str) -> Obj:
    """A control-plane component's mirror pod on `node`."""
    minor = int(version.lstrip("v").split(".")[1])
    image = (
        f"{REGISTRY}/etcd:{ETCD.get(minor, '3.5.21-0')}"
        if component == "etcd"
        else f"{REGISTRY}/{component}:{v(version)}"
    )
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(
            f"{component}-{node}",
            "kube-system",
            creationTimestamp=created,
            labels={"component": component, "tier": CONTROL_PLANE_ROLE},
            annotations={
                MIRROR_ANNOTATION: hashlib.md5(f"{component}/{node}".encode()).hexdigest()
            },
            ownerReferences=[
                {"apiVersion": "v1", "kind": "Node", "name": node, "controller": True}
            ],
        ),
        "spec": {
            "nodeName": node,
            "priorityClassName": "system-node-critical",
            "containers": [{"name": component, "image": image}],
        },
        "status": _ready(created),
    }
    pod["status"]["runningImage"] = image
    return pod


def proxy_pod(node: str, version: str, created: str) -> Obj:
    suffix = hashlib.sha256(node.encode()).hexdigest()[:5]
    image = f"{REGISTRY}/kube-proxy:{v(version)}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(
            f"kube-proxy-{suffix}",
            "kube-system",
            creationTimestamp=created,
            labels={"k8s-app": "kube-proxy"},
            ownerReferences=[
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": "kube-proxy",
                    "controller": True,
                }
            ],
        ),
        "spec": {"nodeName": node, "containers": [{"name": "kube-proxy", "image": image}]},
        "status": _ready(created),
    }


def kube_node(
    name: str, pool: str, role: str, version: str, *, created: str, zone: str | None = None
) -> Obj:
    labels = {
        f"node-role.kubernetes.io/{role}": "",
        "kubernetes.io/hostname": name,
        POOL_LABEL: pool,
    }
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {**meta(name, creationTimestamp=created, labels=labels), "annotations": {}},
        "spec": {},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "lastTransitionTime": created,
                }
            ],
            "nodeInfo": node_info(
                name,
                v(version),
                proxy=v(version),
                containerRuntimeVersion="containerd://1.7.20",
            ),
        },
    }


def kubeadm_config(version: str, endpoint: str) -> Obj:
    """kube-system/kubeadm-config: the ClusterConfiguration kubeadm upgrades."""
    config = (
        f"apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
        f"kubernetesVersion: {v(version)}\ncontrolPlaneEndpoint: {endpoint}\n"
    )
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta("kubeadm-config", "kube-system"),
        "data": {"ClusterConfiguration": config},
    }


def node_pool(node: Obj) -> str:
    return str((node["metadata"].get("labels") or {}).get(POOL_LABEL, ""))


def is_control_plane(node: Obj) -> bool:
    return f"node-role.kubernetes.io/{CONTROL_PLANE_ROLE}" in (node["metadata"].get("labels") or {})


def kubelet_of(node: Obj) -> str:
    return str(((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")).lstrip(
        "v"
    )


def proxy_of(node: Obj) -> str:
    """The node's kube-proxy version as its status reports it (its kubelet's if unsaid)."""
    info = (node.get("status") or {}).get("nodeInfo") or {}
    return str(info.get("kubeProxyVersion") or info.get("kubeletVersion", "")).lstrip("v")


def pod_ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
