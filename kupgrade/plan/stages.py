"""The staged upgrade of one distributed-cloud cluster, as data an executor follows
(SPEC G6-G9, G11).

Stages form a partial order (G8): preflight, the spec version, the control-plane load
balancer, the control-plane node pool, then the connect agent, add-ons and the
load-balancer pool in parallel, worker pools after the load-balancer pool, and health
checks last. The seed does not say whether worker pools wait for the connect agent and
add-ons; only "after the load-balancer pool" is stated, so that is all we require.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from kupgrade.cluster.disruption import gdc_drain_policy
from kupgrade.errors import InputError
from kupgrade.versions import GdcVersion

SELF_MANAGED = ("admin", "hybrid", "standalone")


class StageCluster(msgspec.Struct, forbid_unknown_fields=True):
    version: str
    role: str | None = None  # None: not said, so every field is listed
    controlPlaneLoadBalancer: bool = True  # noqa: N815 - the API's field names
    loadBalancerNodePool: bool = True  # noqa: N815
    workerNodePools: list[str] = msgspec.field(default_factory=list)  # noqa: N815


@dataclass(frozen=True)
class Stage:
    id: str
    after: list[str]
    upgrades: str  # what the stage touches (SPEC G6)
    downtime: str  # what users see while it runs (SPEC G7)
    sets: list[str] = field(default_factory=list)  # status fields it writes (SPEC G9)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "after": self.after,
            "upgrades": self.upgrades,
            "downtime": self.downtime,
            "sets": self.sets,
        }


def stages(cluster: StageCluster, method: str | None = None) -> list[Stage]:
    """SPEC G8's order for this cluster's shape; with `method` ("in-place" or
    "bootstrap") a self-managed cluster's own steps of SPEC G10 are added."""
    lb_pool = "load-balancer-node-pool" if cluster.loadBalancerNodePool else None
    cp = "control-plane-node-pool"
    own = method if cluster.role in SELF_MANAGED else None
    out = [Stage("preflight", [], "cluster upgrade, network health and node checks", "none")]
    if own == "in-place":
        # SPEC G10: the new preflight-check operator is deployed before the checks run.
        out[0] = Stage("preflight", ["preflight-check-operator"], out[0].upgrades, "none")
        out.insert(0, Stage("preflight-check-operator", [], "preflight-check operator", "none"))
    before_spec = "preflight"
    if own == "bootstrap":
        out.append(
            Stage(
                "bootstrap-pivot",
                ["preflight"],
                "a temporary bootstrap cluster takes ownership of the cluster's resources",
                "none",
            )
        )
        before_spec = "bootstrap-pivot"
    out.append(Stage("set-spec-version", [before_spec], "spec.anthosBareMetalVersion", "none"))
    before_cp = "set-spec-version"
    if own == "in-place":
        out.append(
            Stage(
                "lifecycle-controllers",
                [before_cp],
                "lifecycle-controllers-manager upgrades itself",
                "none",
            )
        )
        out.append(
            Stage(
                "cluster-operator",
                ["lifecycle-controllers"],
                "the target anthos-cluster-operator, which does the rest",
                "none",
            )
        )
        before_cp = "cluster-operator"
    if cluster.controlPlaneLoadBalancer:
        out.append(
            Stage(
                "control-plane-load-balancer",
                [before_cp],
                "control-plane load balancer (HAProxy, keepalived)",
                "the API endpoint may drop for 1-2 minutes at the start",
            )
        )
        before_cp = "control-plane-load-balancer"
    out.append(
        Stage(
            cp,
            [before_cp],
            "kube-apiserver, scheduler, controller-manager, etcd static pods, lifecycle "
            "controllers, add-ons",
            "none for the API server, etcd and scheduler",
            ["status.controlPlaneNodepoolStatus"],
        )
    )
    out.append(Stage("connect-agent", [cp], "connect agent", "none"))
    out.append(
        Stage(
            "cluster-addons",
            [cp],
            "network, observability, storage, system operators",
            "under 5 minutes for observability, CNI operator, MetalLB, local volume "
            "provisioner, Istio and other system operators",
        )
    )
    if lb_pool:
        out.append(
            Stage(
                lb_pool,
                [cp],
                "load-balancer nodes (HAProxy, keepalived, MetalLB speakers)",
                "short while MetalLB speakers move",
            )
        )
    workers = [f"worker-node-pool/{p}" for p in cluster.workerNodePools]
    for worker in workers:
        out.append(
            Stage(
                worker,
                [lb_pool or cp],
                "worker nodes (kubelet, container runtime)",
                "user workloads, drained node by node (budgets honoured from 1.29)",
            )
        )
    # Without worker pools the checks still wait for the load-balancer pool.
    last = workers or ([lb_pool] if lb_pool else [])
    out.append(
        Stage(
            "health-checks",
            ["connect-agent", "cluster-addons", *last],
            "repeated until every check passes",
            "none",
        )
    )
    if own == "bootstrap":
        out.append(
            Stage(
                "bootstrap-pivot-back",
                ["health-checks"],
                "ownership moves back to the upgraded cluster; the bootstrap cluster is deleted",
                "none",
            )
        )
    return out


def status_fields(cluster: StageCluster) -> list[list[str]]:
    """SPEC G9: the status fields in the order they are written (a group at a time)."""
    second = [
        "status.anthosBareMetalManifestsVersion",
        "status.controlPlaneLoadBalancerNodepoolStatus",
    ]
    if cluster.role is None or cluster.role in SELF_MANAGED:
        second.insert(0, "status.anthosBareMetalLifecycleControllersManifestsVersion")
    return [
        ["status.controlPlaneNodepoolStatus"],
        second,
        ["status.anthosBareMetalVersions"],
        ["status.anthosBareMetalVersion"],
    ]


def stage_plan(data: Any, target: str, where: str) -> dict[str, Any]:
    """`kupgrade plan` on one cluster's shape: its stages, status fields and drain policy."""
    try:
        cluster = msgspec.convert(data, StageCluster)
        to = GdcVersion.parse(target)
        GdcVersion.parse(cluster.version)
    except (msgspec.ValidationError, ValueError) as exc:
        raise InputError(str(exc), file=where, field="cluster") from None
    return {
        "from": cluster.version,
        "to": str(to),
        "stages": [s.to_json() for s in stages(cluster)],
        "status_fields_in_order": status_fields(cluster),
        "drain": gdc_drain_policy((to.major, to.minor)),
    }


@dataclass(frozen=True)
class Expected:
    """SPEC G7: the downtime the seed's table expects of a component, and when."""

    words: str
    bound_minutes: float | None  # the most expected (0: none; None: the seed sets no bound)
    when: str


_AFTER_CP = "after the control-plane nodes are upgraded"
_FIVE = "operator drained and upgraded: under 5 minutes"
EXPECTED_DOWNTIME: dict[str, Expected] = {
    "kube-apiserver": Expected("none", 0, "n/a"),
    "etcd": Expected("none", 0, "n/a"),
    "kube-scheduler": Expected("none", 0, "n/a"),
    "lifecycle-controllers": Expected("none", 0, "n/a"),
    "anthos-cluster-operator": Expected("none", 0, "n/a"),  # a lifecycle controller
    "loadbalancer-haproxy": Expected(
        "temporary, under 1-2 minutes while the load balancer redirects traffic",
        2,
        "at the start of the upgrade",
    ),
    "keepalived": Expected(
        "temporary, under 1-2 minutes while the load balancer redirects traffic",
        2,
        "at the start of the upgrade",
    ),
    "stackdriver": Expected(_FIVE + "; DaemonSets keep working", 5, _AFTER_CP),
    "metrics-server": Expected(_FIVE + "; DaemonSets keep working", 5, _AFTER_CP),
    "anetd": Expected("none for existing routes; " + _FIVE, 5, _AFTER_CP),
    "metallb": Expected(_FIVE + "; none for existing services", 5, _AFTER_CP),
    "coredns": Expected("usually none (replicas with an autoscaler)", 0, _AFTER_CP),
    "local-volume-provisioner": Expected(
        "none for provisioned volumes; the operator up to 5 minutes", 5, _AFTER_CP
    ),
    "istio-ingress": Expected(
        "about 5 minutes for the operator; configured ingress keeps working", 5, _AFTER_CP
    ),
    "system-operators": Expected("5 minutes when drained and upgraded", 5, _AFTER_CP),
    "gke-connect-agent": Expected("not stated", None, "with the cluster add-ons"),
}
