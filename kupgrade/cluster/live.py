"""What a running cluster tells about its versions, as the skew rules' inventory
(SPEC H): the kube-apiservers (their static pods' images, or /version when those are not
visible), the controller-manager and scheduler pods, each node's kubelet and kube-proxy,
and the kubectl clients the user has."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Protocol

from kupgrade.cluster.kubeadm import STATIC, image_version
from kupgrade.skew.inventory import Inventory, parse_inventory

CONTROL_PLANE = STATIC
CLOUD_SDK_BIN = Path("/usr/lib/google-cloud-sdk/bin")  # where the Cloud SDK keeps its kubectls
_TAG = re.compile(r":v?(\d+\.\d+\.\d+)")


class Readable(Protocol):
    def list(self, kind: str, **selectors: Any) -> list[dict[str, Any]]: ...

    def server_version(self) -> dict[str, Any]: ...


def inventory_of(api: Readable, kubectls: list[tuple[str, str]]) -> Inventory:
    """The cluster's inventory, with the user's kubectl clients (name, version)."""
    return parse_inventory(inventory_doc(api, kubectls), "the cluster")


def inventory_doc(api: Readable, kubectls: list[tuple[str, str]]) -> dict[str, Any]:
    """The inventory as its file format has it (what `skew check` and `plan` read)."""
    doc: dict[str, Any] = {c: [] for c in CONTROL_PLANE[1:]}
    doc["apiservers"] = []
    for pod in api.list("Pod", labels={"tier": "control-plane"}):
        component = (pod["metadata"].get("labels") or {}).get("component")
        version = image_version(pod)
        node = (pod.get("spec") or {}).get("nodeName") or pod["metadata"]["name"]
        if component in CONTROL_PLANE and version:
            doc["apiservers" if component == "kube-apiserver" else component].append(
                {"name": node, "version": version}
            )
    if not doc["apiservers"]:  # managed or OpenShift control planes: the server says
        git = str(api.server_version().get("gitVersion", ""))
        found = re.match(r"v?(\d+\.\d+\.\d+)", git)
        if found:
            doc["apiservers"] = [{"name": "apiserver", "version": found.group(1)}]
    doc["nodes"] = []
    for node in api.list("Node"):
        info = (node.get("status") or {}).get("nodeInfo") or {}
        entry: dict[str, Any] = {"name": node["metadata"]["name"]}
        for field, key in (("kubelet", "kubeletVersion"), ("kube_proxy", "kubeProxyVersion")):
            found = _TAG.search(":" + str(info.get(key, "")))
            if found:
                entry[field] = found.group(1)
        doc["nodes"].append(entry)
    doc["kubectl"] = [{"name": name, "version": version} for name, version in kubectls]
    return doc


def local_kubectls() -> list[tuple[str, str]]:
    """(path, version) of every kubectl on PATH and in the Cloud SDK's bin directory."""
    found: set[str] = set()
    for directory in [*os.environ.get("PATH", "").split(os.pathsep), str(CLOUD_SDK_BIN)]:
        folder = Path(directory or ".")
        if not folder.is_dir():
            continue
        found |= {
            str(p.resolve())  # one entry per binary, however many links name it
            for p in folder.glob("kubectl*")
            if p.name == "kubectl" or p.name.startswith("kubectl.1.")
        }
    out = []
    for path in sorted(found):
        try:
            done = subprocess.run(
                [path, "version", "--client", "-o", "json"],
                capture_output=True,
                text=True,
                timeout=20,
                check=False,
            )
            git = json.loads(done.stdout)["clientVersion"]["gitVersion"]
        except (OSError, subprocess.TimeoutExpired, ValueError, KeyError):
            continue
        out.append((path, str(git).lstrip("v").split("-")[0]))
    return out
