"""A plain Kubernetes cluster as the skew rules read it (kupgrade.skew.inventory): the
control plane's static pods and every node's kubelet and kube-proxy, live from the API,
optionally with one more change applied (what the controller checks before making it).
"""

from __future__ import annotations

from collections.abc import Iterable

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.kubeadm import (
    APISERVER,
    CLOUD,
    CONTROLLERS,
    MANAGERS,
    image_version,
    is_control_plane,
    kubelet_of,
    proxy_of,
)
from kupgrade.skew.inventory import Instance, Inventory, InventoryNode


def inventory(api: Backend, change: tuple[str, str, str] | None = None) -> Inventory:
    """The live state as the skew rules read it: the static pods' images, each node's
    kubelet and kube-proxy as its status reports them. `change` (component, node,
    version) shows it as it would be after one more change (a kubelet change moves the
    node's kube-proxy too)."""
    all_nodes = api.list("Node")
    found = plane_of(api, (n["metadata"]["name"] for n in all_nodes if is_control_plane(n)), change)
    for node in all_nodes:
        name = node["metadata"]["name"]
        kubelet, proxy = kubelet_of(node), proxy_of(node)
        if change is not None and change[:2] == ("kubelet", name):
            kubelet = proxy = change[2]
        found.nodes.append(InventoryNode(name, kubelet, proxy))
    return found


def plane_of(
    api: Backend, control_planes: Iterable[str], change: tuple[str, str, str] | None = None
) -> Inventory:
    """The control plane as the skew rules read it (no nodes): the static pods' images on
    these control-plane nodes, with `change` applied when it is one of theirs."""
    plane: dict[str, list[Instance]] = {APISERVER: [], **{c: [] for c in MANAGERS}}
    for pod in (p for name in control_planes for p in api.pods_on(name)):
        component = (pod["metadata"].get("labels") or {}).get("component")
        if component in plane:
            node = pod["spec"]["nodeName"]
            version = image_version(pod)
            if change is not None and change[:2] == (component, node):
                version = change[2]
            plane[component].append(Instance(node, version))
    return Inventory(
        apiservers=plane[APISERVER],
        kube_controller_manager=plane[CONTROLLERS[0]],
        kube_scheduler=plane[CONTROLLERS[1]],
        cloud_controller_manager=plane[CLOUD],
    )
