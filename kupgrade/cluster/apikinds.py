"""What the Kubernetes API serves that kupgrade reads: the kinds and their resources, where
the controllers keep their state, and Events as the simulator logs them.

Apart from kube.py (the backend over a real API server, built on lightkube) so that what
only needs these names, the simulator's transport, the API server's virtual objects and
the informers, does not import lightkube's client (0.2 s at every command's start).
"""

from __future__ import annotations

import builtins
from typing import Any

from kupgrade.cluster.backend import Obj
from kupgrade.versions.times import parse_time

# kind -> (group, version, plural, namespaced): what the controllers and commands read.
KINDS: dict[str, tuple[str, str, str, bool]] = {
    "Node": ("", "v1", "nodes", False),
    "Pod": ("", "v1", "pods", True),
    "Namespace": ("", "v1", "namespaces", False),
    "ConfigMap": ("", "v1", "configmaps", True),
    "Event": ("", "v1", "events", True),
    "Deployment": ("apps", "v1", "deployments", True),
    "DaemonSet": ("apps", "v1", "daemonsets", True),
    "ReplicaSet": ("apps", "v1", "replicasets", True),
    "StatefulSet": ("apps", "v1", "statefulsets", True),
    "PodDisruptionBudget": ("policy", "v1", "poddisruptionbudgets", True),
    "ClusterVersion": ("config.openshift.io", "v1", "clusterversions", False),
    "APIRequestCount": ("apiserver.openshift.io", "v1", "apirequestcounts", False),
    "Infrastructure": ("config.openshift.io", "v1", "infrastructures", False),
    "ClusterOperator": ("config.openshift.io", "v1", "clusteroperators", False),
    "MachineConfigPool": ("machineconfiguration.openshift.io", "v1", "machineconfigpools", False),
    "MachineConfig": ("machineconfiguration.openshift.io", "v1", "machineconfigs", False),
    "CatalogSource": ("operators.coreos.com", "v1alpha1", "catalogsources", True),
    "Subscription": ("operators.coreos.com", "v1alpha1", "subscriptions", True),
    "InstallPlan": ("operators.coreos.com", "v1alpha1", "installplans", True),
    "ClusterServiceVersion": ("operators.coreos.com", "v1alpha1", "clusterserviceversions", True),
    "Cluster": ("baremetal.cluster.gke.io", "v1", "clusters", True),
    "NodePool": ("baremetal.cluster.gke.io", "v1", "nodepools", True),
    "PreflightCheck": ("baremetal.cluster.gke.io", "v1", "preflightchecks", True),
    "HealthCheck": ("baremetal.cluster.gke.io", "v1", "healthchecks", True),
    "Route": ("route.openshift.io", "v1", "routes", True),
}
STATE_NAMESPACE = "kupgrade"
STATE_CONFIGMAP = "kupgrade-controller-state"
# A simulated cluster's Events carry their virtual time exactly (timestamps keep seconds).
EVENT_AT = "sim.kupgrade.io/at"


def event_rows(listed: builtins.list[Obj]) -> builtins.list[dict[str, Any]]:
    """core/v1 Events as the simulator logs them (at, kind, object, reason, message): a
    simulated cluster's exact virtual time from EVENT_AT, else lastTimestamp."""
    rows = []
    for e in listed:
        at = (e.get("metadata", {}).get("annotations") or {}).get(EVENT_AT)
        involved = e.get("involvedObject") or {}
        ns = involved.get("namespace")
        rows.append(
            {
                "at": float(at) if at else parse_time(e.get("lastTimestamp") or e.get("eventTime")),
                "kind": e.get("type", "Normal"),
                "object": f"{str(involved.get('kind', '')).lower()}/{ns + '/' if ns else ''}{involved.get('name', '')}",
                "reason": e.get("reason", ""),
                "message": e.get("message", ""),
            }
        )
    return rows
