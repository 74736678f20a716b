"""The resources the simulated cluster's API serves, as discovery lists them: group,
version, plural, singular, short names, whether namespaced, verbs and subresources
(Kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1 APIResource)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "patch", "update"]


@dataclass(frozen=True)
class Resource:
    kind: str
    group: str
    version: str
    plural: str
    singular: str
    namespaced: bool
    short: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ("status",)
    writable: bool = True

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def api_resources(self) -> list[dict[str, Any]]:
        """Its entries in an APIResourceList: the resource, then its subresources."""
        own = {
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": READ + WRITE if self.writable else ["get", "list"],
        }
        if self.short:
            own["shortNames"] = list(self.short)
        out = [own]
        for sub in self.subresources:
            kind = CREATED_SUBRESOURCES.get(sub, self.kind)
            verbs = (
                ["create"]
                if sub in CREATED_SUBRESOURCES
                else ["get"]
                if sub in READ_SUBRESOURCES
                else ["get", "patch", "update"]
            )
            entry = {
                "name": f"{self.plural}/{sub}",
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": kind,
                "verbs": verbs,
            }
            if sub == "eviction":
                entry["group"], entry["version"] = "policy", "v1"
            out.append(entry)
        return out


# Subresources a client POSTs an object of their own kind to.
CREATED_SUBRESOURCES = {"eviction": "Eviction", "step": "ClockStep"}
# Subresources only read (a pod's log).
READ_SUBRESOURCES = ("log",)
OCP_CONFIG = "config.openshift.io"
MCO = "machineconfiguration.openshift.io"
BAREMETAL = "baremetal.cluster.gke.io"
SIM = "sim.kupgrade.io"
RBAC = "rbac.authorization.k8s.io"
OLM = "operators.coreos.com"

RESOURCES = [
    Resource("Namespace", "", "v1", "namespaces", "namespace", False, ("ns",)),
    Resource("Node", "", "v1", "nodes", "node", False, ("no",)),
    Resource("Pod", "", "v1", "pods", "pod", True, ("po",), ("status", "eviction", "log")),
    Resource("ConfigMap", "", "v1", "configmaps", "configmap", True, ("cm",), ()),
    Resource("Event", "", "v1", "events", "event", True, ("ev",), ()),
    Resource("Deployment", "apps", "v1", "deployments", "deployment", True, ("deploy",)),
    Resource("DaemonSet", "apps", "v1", "daemonsets", "daemonset", True, ("ds",)),
    Resource("ReplicaSet", "apps", "v1", "replicasets", "replicaset", True, ("rs",)),
    Resource("StatefulSet", "apps", "v1", "statefulsets", "statefulset", True, ("sts",)),
    Resource("Job", "batch", "v1", "jobs", "job", True),
    # Leader election's record (coordination.k8s.io/v1), as every controller manager keeps.
    Resource("Lease", "coordination.k8s.io", "v1", "leases", "lease", True, (), ()),
    # What release payloads also carry, applied as manifests (no status of their own).
    Resource("Service", "", "v1", "services", "service", True, ("svc",)),
    Resource("ServiceAccount", "", "v1", "serviceaccounts", "serviceaccount", True, ("sa",), ()),
    Resource("Secret", "", "v1", "secrets", "secret", True, (), ()),
    Resource(
        "CustomResourceDefinition",
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "customresourcedefinition",
        False,
        ("crd", "crds"),
    ),
    Resource("Role", RBAC, "v1", "roles", "role", True, (), ()),
    Resource("RoleBinding", RBAC, "v1", "rolebindings", "rolebinding", True, (), ()),
    Resource("ClusterRole", RBAC, "v1", "clusterroles", "clusterrole", False, (), ()),
    Resource(
        "ClusterRoleBinding", RBAC, "v1", "clusterrolebindings", "clusterrolebinding", False, (), ()
    ),
    Resource(
        "PodDisruptionBudget",
        "policy",
        "v1",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        True,
        ("pdb",),
    ),
    Resource("ClusterVersion", OCP_CONFIG, "v1", "clusterversions", "clusterversion", False),
    Resource(
        "ClusterOperator", OCP_CONFIG, "v1", "clusteroperators", "clusteroperator", False, ("co",)
    ),
    Resource(
        "MachineConfigPool", MCO, "v1", "machineconfigpools", "machineconfigpool", False, ("mcp",)
    ),
    Resource("MachineConfig", MCO, "v1", "machineconfigs", "machineconfig", False, ("mc",), ()),
    Resource("Cluster", BAREMETAL, "v1", "clusters", "cluster", True),
    Resource("NodePool", BAREMETAL, "v1", "nodepools", "nodepool", True),
    Resource("PreflightCheck", BAREMETAL, "v1", "preflightchecks", "preflightcheck", True),
    Resource("HealthCheck", BAREMETAL, "v1", "healthchecks", "healthcheck", True),
    Resource(
        "CatalogSource", OLM, "v1alpha1", "catalogsources", "catalogsource", True, ("catsrc",)
    ),
    Resource(
        "Subscription", OLM, "v1alpha1", "subscriptions", "subscription", True, ("sub", "subs")
    ),
    Resource("InstallPlan", OLM, "v1alpha1", "installplans", "installplan", True, ("ip",)),
    Resource(
        "ClusterServiceVersion",
        OLM,
        "v1alpha1",
        "clusterserviceversions",
        "clusterserviceversion",
        True,
        ("csv", "csvs"),
    ),
    # Where a cluster's monitoring is reached (oc reads alerts from thanos-querier's hosts).
    Resource("Route", "route.openshift.io", "v1", "routes", "route", True),
    # The simulator's virtual clock (service/kubeapi/clock.py): read-only but for `step`.
    Resource("Clock", SIM, "v1", "clocks", "clock", False, (), ("step",), writable=False),
]
BY_PATH = {(r.group, r.version, r.plural): r for r in RESOURCES}
BY_KIND = {r.kind: r for r in RESOURCES}


def group_versions() -> dict[str, list[Resource]]:
    out: dict[str, list[Resource]] = {}
    for r in RESOURCES:
        out.setdefault(r.group_version, []).append(r)
    return out


def api_versions() -> dict[str, Any]:
    """GET /api: the core group's versions."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    }


def api_groups() -> dict[str, Any]:
    """GET /apis: every named group with its one version."""
    groups = []
    for gv in group_versions():
        if "/" not in gv:
            continue
        group, version = gv.split("/")
        entry = {"groupVersion": gv, "version": version}
        groups.append({"name": group, "versions": [entry], "preferredVersion": entry})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def resource_list(group_version: str) -> dict[str, Any] | None:
    """GET /api/v1 or /apis/GROUP/VERSION."""
    found = group_versions().get(group_version)
    if found is None:
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": [entry for r in found for entry in r.api_resources()],
    }
