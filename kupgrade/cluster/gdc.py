"""Distributed-cloud (bare metal) object shapes: Cluster, NodePool and PreflightCheck of
`baremetal.cluster.gke.io/v1`, the nodes' maintenance taint, and the columns `kubectl get`
prints for them (SPEC G1, G9).

A cluster's own resources live in its namespace `cluster-NAME`, as `bmctl` creates them.
The simulator and a real backend hand the same dicts to the same controller.
"""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.conditions import find
from kupgrade.cluster.objects import Obj, meta

API = "baremetal.cluster.gke.io/v1"
POOL_LABEL = "baremetal.cluster.gke.io/node-pool"
MAINTENANCE_TAINT = {"key": "baremetal.cluster.gke.io/maintenance", "effect": "NoSchedule"}
# Where kupgrade keeps a node's distributed-cloud version and its upgrade's progress
# (the real cluster keeps them on its Machine objects, which the simulator does not model).
NODE_VERSION = "kupgrade.io/anthos-bare-metal-version"
NODE_STATE = "kupgrade.io/upgrade-state"  # draining | maintenance | (absent: idle)
MANAGED_BY = "kupgrade.io/managed-by"  # a user cluster's management cluster
PREVIEW_TWO_MINOR_POOLS = "preview.baremetal.cluster.gke.io/two-minor-version-node-pool"

# While a bootstrap cluster owns a self-managed cluster's resources (SPEC G10) its copies
# are kept under this prefix of their namespace (':' is never in a real namespace).
BOOTSTRAP = "bootstrap:"

CONTROL_PLANE = "control-plane"
LOAD_BALANCER = "load-balancer"
WORKER = "worker"
POOL_ROLES = (CONTROL_PLANE, LOAD_BALANCER, WORKER)

# Kubernetes minor each distributed-cloud minor ships (1.16 runs Kubernetes 1.27; from
# 1.28 the two lines share their numbers); kubelets report it as their version.
KUBERNETES_MINOR = {"1.14": "1.25", "1.15": "1.26", "1.16": "1.27"}


def in_bootstrap(obj: Obj) -> bool:
    """The object is the bootstrap cluster's copy, not the cluster's own."""
    return str(obj["metadata"].get("namespace", "")).startswith(BOOTSTRAP)


def own_clusters(objs: list[Obj]) -> list[Obj]:
    """The cluster's own Cluster objects (the bootstrap cluster's copies left out)."""
    return [o for o in objs if not in_bootstrap(o)]


def namespace_of(cluster: str) -> str:
    return f"cluster-{cluster}"


def kubelet_version(abm_version: str) -> str:
    major, minor = abm_version.split(".")[:2]
    return f"v{KUBERNETES_MINOR.get(f'{major}.{minor}', f'{major}.{minor}')}.0"


def pool_name(cluster: str, role: str, name: str) -> str:
    """The NodePool's name: bmctl names the control-plane pool after the cluster and the
    load-balancer pool `<cluster>-lb`; worker pools keep their own names."""
    if role == CONTROL_PLANE:
        return cluster
    if role == LOAD_BALANCER:
        return f"{cluster}-lb"
    return name


def cluster_object(
    name: str,
    cluster_type: str,
    version: str,
    created: str,
    *,
    managed_by: str | None = None,
    annotations: dict[str, str] | None = None,
    load_balancer_pool: bool = True,
    load_balancer_mode: str = "bundled",
    concurrent_node_pools: int = 1,
) -> Obj:
    notes = dict(annotations or {})
    if managed_by:
        notes[MANAGED_BY] = managed_by
    spec: dict[str, Any] = {
        "type": cluster_type,
        "anthosBareMetalVersion": version,
        "controlPlane": {"nodePoolSpec": {"clusterName": name}},
        "loadBalancer": {"mode": load_balancer_mode},
        "nodePoolUpgradeStrategy": {"concurrentNodePools": concurrent_node_pools},
    }
    if load_balancer_pool:
        spec["loadBalancer"]["nodePoolSpec"] = {"clusterName": name}
    return {
        "apiVersion": API,
        "kind": "Cluster",
        "metadata": meta(name, namespace_of(name), annotations=notes, creationTimestamp=created),
        "spec": spec,
        "status": {
            "anthosBareMetalVersion": version,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "ClusterReady",
                    "lastTransitionTime": created,
                },
                {
                    "type": "Reconciling",
                    "status": "False",
                    "reason": "ReconciliationCompleted",
                    "lastTransitionTime": created,
                },
            ],
            "clusterState": "Running",
        },
    }


def node_pool(
    cluster: str, name: str, role: str, version: str, *, created: str, upgrade: dict[str, int]
) -> Obj:
    spec: dict[str, Any] = {"clusterName": cluster, "nodes": []}
    if role == WORKER:
        # Worker pools may be upgraded on their own (selective upgrades, SPEC G4).
        spec["anthosBareMetalVersion"] = version
        spec["upgradeStrategy"] = {"parallelUpgradeConfig": upgrade}
    return {
        "apiVersion": API,
        "kind": "NodePool",
        "metadata": meta(
            name,
            namespace_of(cluster),
            labels={"kupgrade.io/pool-role": role},
            creationTimestamp=created,
        ),
        "spec": spec,
        "status": {"anthosBareMetalVersion": version, "conditions": []},
    }


def preflight_check(cluster: str, name: str, target: str, created: str) -> Obj:
    return {
        "apiVersion": API,
        "kind": "PreflightCheck",
        "metadata": meta(name, namespace_of(cluster), creationTimestamp=created),
        "spec": {"checkImageVersion": target, "upgrade": True},
        "status": {},
    }


def bundled_load_balancer(cluster: Obj) -> bool:
    """The control plane's load balancer (HAProxy, keepalived) is the cluster's own and
    upgraded with it; a manual one is the user's (SPEC G6, G8)."""
    return bool((cluster["spec"].get("loadBalancer") or {}).get("mode", "bundled") == "bundled")


def pool_role(pool: Obj) -> str:
    return str((pool["metadata"].get("labels") or {}).get("kupgrade.io/pool-role", WORKER))


def pool_of(node: Obj) -> str:
    return str((node["metadata"].get("labels") or {}).get(POOL_LABEL, ""))


def node_version(node: Obj) -> str:
    return str((node["metadata"].get("annotations") or {}).get(NODE_VERSION, ""))


def cluster_columns(obj: Obj) -> dict[str, str]:
    """`kubectl get clusters`: ABM VERSION, DESIRED ABM VERSION, CLUSTER STATE."""
    status = obj.get("status") or {}
    return {
        "ABM VERSION": str(status.get("anthosBareMetalVersion", "")),
        "DESIRED ABM VERSION": str(obj["spec"].get("anthosBareMetalVersion", "")),
        "CLUSTER STATE": str(status.get("clusterState", "")),
    }


def nodepool_columns(obj: Obj) -> dict[str, str]:
    """`kubectl get nodepools`: READY, RECONCILING, STALLED, UNDERMAINTENANCE, UNKNOWN."""
    status = obj.get("status") or {}
    return {
        column: str(status.get(key, 0))
        for column, key in (
            ("READY", "readyNodes"),
            ("RECONCILING", "reconcilingNodes"),
            ("STALLED", "stalledNodes"),
            ("UNDERMAINTENANCE", "underMaintenanceNodes"),
            ("UNKNOWN", "unknownNodes"),
        )
    }


def preflight_columns(obj: Obj) -> dict[str, str]:
    """`kubectl get preflightchecks`: PASS (empty while the checks run)."""
    passed = (obj.get("status") or {}).get("pass")
    return {"PASS": "" if passed is None else str(bool(passed)).lower()}


def is_ready(obj: Obj) -> bool:
    return (find((obj.get("status") or {}).get("conditions"), "Ready") or {}).get(
        "status"
    ) == "True"


COMPONENT_LABEL = "kupgrade.io/component"
COMPONENT_DESIRED = "kupgrade.io/desired-version"
COMPONENT_VERSION = "kupgrade.io/version"  # the version the component runs, once rolled out


def component_namespace(name: str) -> str:
    return "gke-connect" if name == "gke-connect-agent" else "kube-system"


COMPONENT_STAGE = "kupgrade.io/upgrade-stage"


def component(name: str, stage: str, version: str, created: str) -> Obj:
    """A cluster-level component (SPEC G6) as the Deployment that runs it, with the
    upgrade stage that rolls it out (SPEC G8)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(
            name,
            component_namespace(name),
            labels={COMPONENT_LABEL: name},
            annotations={
                COMPONENT_DESIRED: version,
                COMPONENT_VERSION: version,
                COMPONENT_STAGE: stage,
            },
            creationTimestamp=created,
        ),
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}}},
        "status": {
            "replicas": 1,
            "availableReplicas": 1,
            "conditions": [{"type": "Available", "status": "True", "lastTransitionTime": created}],
        },
    }


def check_object(kind: str, cluster: str, name: str, target: str, created: str) -> Obj:
    """A PreflightCheck or HealthCheck the cluster's checkers run and fill in."""
    obj = preflight_check(cluster, name, target, created)
    obj["kind"] = kind
    if kind == "HealthCheck":
        obj["spec"] = {"clusterName": cluster, "round": 1}
    return obj
