"""GET /version: the Kubernetes version a simulated cluster's API server runs now, read
from the store on each request, so that after an upgrade kubectl and the skew checks
see the new control plane (as a real apiserver restarted on the new release answers)."""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.gdc import kubelet_version, own_clusters
from kupgrade.cluster.kubeadm import image_version
from kupgrade.versions import parse_kube


def version_info(store: Any) -> dict[str, str]:
    """GET /version: the Kubernetes version the simulated cluster runs (OpenShift 4.N
    ships Kubernetes 1.N+13; a distributed-cloud release its own minor)."""
    clusters = own_clusters(store.list("Cluster"))
    apiservers = [
        image_version(p)
        for _, p in store.scan("Pod")  # read, not kept as dicts
        if (p["metadata"].get("labels") or {}).get("component") == "kube-apiserver"
    ]
    if apiservers:  # a kubeadm cluster: the version its (oldest) apiserver serves
        git = "v" + min((a for a in apiservers if a), key=parse_kube, default="1.30.0")
    elif clusters:
        git = kubelet_version(str(clusters[0]["status"].get("anthosBareMetalVersion", "")))
    else:
        # The apiservers run what the kube-apiserver operator reports (mid-update, the
        # release it has reached, not the one the cluster is going to).
        co = store.get("ClusterOperator", "kube-apiserver") or {"status": {}}
        reported = [
            v["version"] for v in co["status"].get("versions") or [] if v.get("name") == "operator"
        ]
        cv = store.get("ClusterVersion", "version") or {"status": {}}
        release = (
            reported[0]
            if reported
            else str((cv["status"].get("desired") or {}).get("version", "4.13.0"))
        )
        minor = int(release.split(".")[1]) + 13 if release.count(".") >= 1 else 26
        git = f"v1.{minor}.0"
    major, minor_text = git.removeprefix("v").split(".")[:2]
    return {
        "major": major,
        "minor": minor_text,
        "gitVersion": git,
        "gitTreeState": "clean",
        "goVersion": "go1.22",
        "compiler": "gc",
        "platform": "linux/amd64",
    }
