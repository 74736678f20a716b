"""A cluster profile: the topology, operators, workloads and faults of a simulated cluster.

Users describe their own cluster this way to rehearse an upgrade before touching it:
how many nodes in which pools and zones, how long each operator takes to roll out,
which workloads have PodDisruptionBudgets, and what should go wrong.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from kupgrade.errors import InputError

Range = tuple[float, float]


class _Base(msgspec.Struct, forbid_unknown_fields=True, rename="camel", omit_defaults=True):
    pass


class Machine(_Base):
    """One node named as in the user's own cluster."""

    name: str
    zone: str | None = None
    created: str | None = None  # RFC 3339; the controller takes the oldest first (SPEC E4)


class DrainPolicy(_Base):
    """kubectl drain's flags for a pool's nodes. The defaults are the machine-config
    drain controller's own helper (IgnoreAllDaemonSets, DeleteEmptyDirData, Force)."""

    ignore_daemonsets: bool = True
    delete_emptydir_data: bool = True
    force: bool = True

    def args(self) -> list[str]:
        flags = [
            ("--ignore-daemonsets", self.ignore_daemonsets),
            ("--delete-emptydir-data", self.delete_emptydir_data),
            ("--force", self.force),
        ]
        return [flag for flag, on in flags if on]


class Pool(_Base):
    name: str
    nodes: int = 0  # how many nodes to generate, named <pool>-<i>; or list them in machines
    machines: list[Machine] = msgspec.field(default_factory=list)
    created: list[str] = msgspec.field(default_factory=list)  # creation times, oldest first
    max_unavailable: int | str | None = None
    zones: list[str] = msgspec.field(default_factory=list)
    paused: bool = False
    drain: DrainPolicy = msgspec.field(default_factory=DrainPolicy)
    # Distributed cloud only: the pool's role (default from its name: master or
    # control-plane, load-balancer, otherwise worker), how many of its nodes upgrade at
    # once and how many must stay available (its parallelUpgradeConfig), and the version
    # a worker pool was left at by an earlier selective upgrade.
    role: str | None = None
    concurrent_nodes: int = 1
    minimum_available: int = 0
    version: str | None = None


class Operator(_Base):
    name: str
    runlevel: int
    minutes: Range = (2.0, 6.0)  # how long its rollout takes, drawn uniformly
    manifests: int = (
        3  # manifests the release carries for it (namespace, deployment, ... clusteroperator)
    )


class Budget(_Base):
    min_available: int | str | None = None
    max_unavailable: int | str | None = None


WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Pod", "StaticPod")
# The kinds whose controller replaces an evicted pod on another node.
REPLACED_KINDS = ("Deployment", "StatefulSet")


class PodAt(_Base):
    """One pod of a workload as a twin found it (SPEC X7): where it runs, whether it is
    ready, and its name in the user's cluster (kept when it fits `<workload>-<suffix>`,
    and always in the pod's `kupgrade.io/imported-as` annotation)."""

    node: str
    name: str | None = None
    ready: bool = True


class Workload(_Base):
    """Pods of one kind: a Deployment's replicas (replaced elsewhere when evicted), a
    DaemonSet's pod on every node of the pool, bare Pods (no controller: gone once
    evicted) or StaticPods (the kubelet's, seen through mirror pods; never drained)."""

    name: str
    namespace: str = "default"
    replicas: int = 2
    pool: str = "worker"
    node: str | None = None  # pin every replica to one node
    pdb: Budget | None = None
    start_seconds: float = 20.0
    termination_seconds: float = 30.0
    kind: str = "Deployment"
    empty_dir: bool = False  # the pods keep data in an emptyDir volume
    labels: dict[str, str] = msgspec.field(default_factory=dict)  # the pods' (default app: NAME)
    pods: list[PodAt] = msgspec.field(default_factory=list)  # placed as listed, not spread

    def pod_labels(self) -> dict[str, str]:
        return dict(self.labels) if self.labels else {"app": self.name}


class NodeTiming(_Base):
    update: float
    reboot: float


class NodePhases(_Base):
    """Seconds each phase of a node's update takes, drawn uniformly (SPEC E3).

    Draining takes as long as the node's pods take to leave; `overrides` fixes the
    update and reboot seconds of named nodes.
    """

    update: Range = (60.0, 180.0)
    reboot: Range = (120.0, 300.0)
    overrides: dict[str, NodeTiming] = msgspec.field(default_factory=dict)


class Fault(_Base):
    """One thing that goes wrong: on an operator, a pod or a node."""

    operator: str | None = None
    degrade: bool = False  # reports Degraded=True after its rollout
    unavailable: bool = False  # reports Available=False after its rollout
    slow: float = 1.0  # its rollout takes this many times longer
    pod: str | None = None  # namespace/name-prefix of pods that never terminate
    node: str | None = None
    fail_reboot: bool = False  # the node never comes back Ready after its reboot
    # Distributed cloud: a component whose rollout is `slow` times longer; a preflight
    # check that fails (its name and `message`); a node failing this many health checks.
    component: str | None = None
    preflight: str | None = None
    message: str | None = None
    health_failures: int = 0
    # OLM: the CSV (by name) whose operator Deployment never becomes ready.
    csv: str | None = None


class Change(_Base):
    """Something an admin or the infrastructure does at a moment of the rehearsal.

    `patch` is a JSON merge patch (RFC 7386) applied to the named object: unpause a pool
    at minute 30, relax a PodDisruptionBudget, mark a node NotReady.
    """

    at_minutes: float
    kind: str
    name: str
    patch: dict[str, Any]
    namespace: str = ""


class Component(_Base):
    """A distributed-cloud component upgraded at cluster level (SPEC G6): the stage it
    belongs to, how long its rollout takes and how long it is down meanwhile (minutes,
    drawn uniformly). `roles` limits it to clusters of those roles (MetalLB and CoreDNS
    are user-cluster components)."""

    name: str
    stage: str  # control-plane-load-balancer | connect-agent | cluster-addons
    minutes: Range = (2.0, 5.0)
    downtime: Range = (0.0, 0.0)
    roles: list[str] = msgspec.field(default_factory=list)


class OlmCatalog(_Base):
    """A CatalogSource the cluster is created with: a file-based catalog (file or
    directory) or a catalog image."""

    name: str
    path: str | None = None
    image: str | None = None
    namespace: str = "olm"
    priority: int = 0
    poll: str | None = None  # an image's registryPoll interval (10m, 1h)


class OlmSubscription(_Base):
    """A Subscription the cluster is created with (installed before it is handed over)."""

    package: str
    source: str
    channel: str = ""
    namespace: str = "operators"
    source_namespace: str = "olm"
    approval: str = "Automatic"
    starting_csv: str = ""


class Olm(_Base):
    """The cluster's operator-lifecycle-manager (SPEC F): its resolution policy, the
    global catalog namespace, how long an operator's pod takes to start and how long a
    CSV may wait for it, and catalogs and subscriptions to start with."""

    policy: str = "documented"  # documented | olm-v0 | semver (seed: documented)
    global_namespace: str = "olm"
    start_seconds: float = 30.0
    install_timeout_seconds: float = 300.0
    catalogs: list[OlmCatalog] = msgspec.field(default_factory=list)
    subscriptions: list[OlmSubscription] = msgspec.field(default_factory=list)


class Gdc(_Base):
    """A distributed-cloud (bare metal) cluster: its role, its management cluster, the
    components upgraded at cluster level, and the timings of checks."""

    role: str = "standalone"  # admin | hybrid | standalone | user
    managed_by: str | None = None
    annotations: dict[str, str] = msgspec.field(default_factory=dict)
    concurrent_node_pools: int = 1  # 0: worker pools one at a time; 1: all at once
    load_balancer: str = "bundled"  # bundled (HAProxy, keepalived upgraded too) | manual
    components: list[Component] | None = None
    preflight_minutes: Range = (2.0, 4.0)
    health_check_seconds: float = 60.0  # how often the health checks run again


class KubeadmTool(_Base):
    """The kubeadm binary a control-plane step runs and its flags (`kubeadm upgrade apply
    --force --allow-experimental-upgrades --allow-release-candidate-upgrades`); by
    default the target's own kubeadm. `minControlPlane` is the binary's minimum
    supported control-plane version, when known (kubeadm's P3)."""

    version: str | None = None
    force: bool = False
    allow_experimental: bool = False
    allow_r_cs: bool = msgspec.field(default=False, name="allowRCs")
    min_control_plane: str | None = None


class Kube(_Base):
    """A plain Kubernetes cluster whose components do not all run its version, as a skew
    inventory describes one: the control-plane components each control-plane node runs
    and at which version (by default every node runs kube-apiserver,
    kube-controller-manager and kube-scheduler at the cluster's version), kube-proxy
    per node (by default its kubelet's version), and the kubeadm its steps use."""

    static_pods: dict[str, dict[str, str]] = msgspec.field(default_factory=dict)
    kube_proxy: dict[str, str] = msgspec.field(default_factory=dict)
    kubeadm: KubeadmTool | None = None


class Verification(_Base):
    keyring: str
    store: str


class Spec(_Base):
    version: str = "4.13.40"
    channel: str = "stable-4.14"
    upstream: str = ""
    platform: str = "None"
    seed: int = 1
    start: str = "2024-05-04T10:00:00Z"
    pools: list[Pool] = msgspec.field(
        default_factory=lambda: [
            Pool("master", 3, max_unavailable=1, zones=["a", "b", "c"]),
            Pool("worker", 3, max_unavailable=1, zones=["a", "b", "c"]),
        ]
    )
    operators: list[Operator] | None = None
    workloads: list[Workload] = msgspec.field(default_factory=list)
    node_phases: NodePhases = msgspec.field(default_factory=NodePhases)
    faults: list[Fault] = msgspec.field(default_factory=list)
    changes: list[Change] = msgspec.field(default_factory=list)
    verification: Verification | None = None
    mirrors: dict[str, str] = msgspec.field(
        default_factory=dict
    )  # pull spec -> local image or payload dir
    metrics: str | None = None  # OpenMetrics snapshot the cluster's risks are evaluated on
    extra_manifests: int = 0  # more manifests per release (a realistic release has ~900)
    gdc: Gdc | None = None  # set for `platform: gdc`
    olm: Olm | None = None  # operators installed through OLM (OpenShift)
    kube: Kube | None = None  # per-node component versions (`platform: kubernetes`)
    # The platform's own DaemonSets and control-plane static pods, as a fresh cluster
    # has them; false leaves only the profile's workloads (a leaner, faster rehearsal).
    platform_pods: bool = True
    # Objects the cluster is created with as they are (a twin's budgets, config maps,
    # APIRequestCounts, CSVs), or merged (RFC 7386) into the ones its platform makes (a
    # twin's ClusterVersion history, ClusterOperator conditions, cordoned nodes).
    objects: list[dict[str, Any]] = msgspec.field(default_factory=list)


class Profile(_Base):
    api_version: str = "kupgrade.io/v1alpha1"
    kind: str = "ClusterProfile"
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    spec: Spec = msgspec.field(default_factory=Spec)


DEFAULT_OPERATORS = [
    Operator("etcd", 10, (6, 12)),
    Operator("kube-apiserver", 20, (10, 18)),
    Operator("kube-controller-manager", 25, (4, 8)),
    Operator("kube-scheduler", 25, (3, 6)),
    Operator("openshift-apiserver", 30, (3, 7)),
    Operator("authentication", 40, (3, 8)),
    Operator("network", 50, (5, 12)),
    Operator("dns", 50, (2, 5)),
    Operator("ingress", 50, (3, 7)),
    Operator("image-registry", 50, (2, 5)),
    Operator("console", 50, (2, 4)),
    Operator("monitoring", 50, (4, 9)),
    Operator("node-tuning", 70, (1, 3)),
    Operator("machine-config", 80, (3, 6)),
]


_ADDONS = "cluster-addons"
_CP_LB = "control-plane-load-balancer"
# The cluster-level components of SPEC G6 with rollout and downtime minutes inside the
# seed's expectations (SPEC G7); a profile's `gdc.components` replaces the list.
DEFAULT_GDC_COMPONENTS = [
    Component("preflight-check-operator", "preflight-check-operator", (0.5, 1.0)),
    Component("lifecycle-controllers", "lifecycle-controllers", (1.0, 2.0)),
    Component("anthos-cluster-operator", "cluster-operator", (0.5, 1.5)),
    Component("loadbalancer-haproxy", _CP_LB, (1.0, 2.0), (0.3, 1.2)),
    Component("keepalived", _CP_LB, (0.5, 1.0), (0.2, 0.8)),
    Component("gke-connect-agent", "connect-agent", (1.0, 2.0), (0.0, 0.5)),
    Component("stackdriver", _ADDONS, (3.0, 6.0), (1.0, 4.0)),
    Component("metrics-server", _ADDONS, (1.0, 3.0), (0.5, 2.0)),
    Component("anetd", _ADDONS, (3.0, 6.0), (1.0, 3.0)),
    Component("metallb", _ADDONS, (2.0, 4.0), (1.0, 3.0), ["user"]),
    Component("coredns", _ADDONS, (1.0, 3.0), (0.0, 0.0), ["user"]),
    Component("local-volume-provisioner", _ADDONS, (1.0, 3.0), (0.5, 3.0)),
    Component("istio-ingress", _ADDONS, (3.0, 6.0), (2.0, 4.5)),
    Component("system-operators", _ADDONS, (3.0, 6.0), (1.0, 4.0)),
]
GDC_ROLES = ("admin", "hybrid", "standalone", "user")


def components_of(gdc: Gdc) -> list[Component]:
    """The components a cluster of this role upgrades."""
    listed = gdc.components if gdc.components is not None else DEFAULT_GDC_COMPONENTS
    return [
        c
        for c in listed
        if (not c.roles or gdc.role in c.roles)
        and (gdc.load_balancer == "bundled" or c.stage != _CP_LB)
    ]


def pool_role(pool: Pool) -> str:
    """A distributed-cloud pool's role, from its `role` or its name."""
    if pool.role is not None:
        return pool.role
    if pool.name in ("master", "control-plane"):
        return "control-plane"
    return "load-balancer" if pool.name in ("load-balancer", "lb") else "worker"


def operators_of(spec: Spec) -> list[Operator]:
    return spec.operators if spec.operators is not None else DEFAULT_OPERATORS


def node_names(pool: Pool) -> list[str]:
    return [m.name for m in pool.machines] or [f"{pool.name}-{i}" for i in range(pool.nodes)]


# What one simulated cluster may hold: well above the 5,000-node, 100,000-pod rehearsals
# the benches run, far below what would make a typo (nodes: 1e40) hang or fill memory.
MAX_NODES = 50_000
MAX_REPLICAS = 1_000_000
MAX_MANIFESTS = 100_000


def _count(value: int, limit: int, where: str, field: str) -> None:
    if not 0 <= value <= limit:
        raise InputError(f"must be between 0 and {limit:,}, not {value}", file=where, field=field)


def _check_sizes(spec: Spec, where: str) -> None:
    total = 0
    for i, pool in enumerate(spec.pools):
        _count(pool.nodes, MAX_NODES, where, f"spec.pools[{i}].nodes")
        total += max(pool.nodes, len(pool.machines))
    _count(total, MAX_NODES, where, "spec.pools (nodes in all pools)")
    replicas = 0
    for i, w in enumerate(spec.workloads):
        _count(w.replicas, MAX_REPLICAS, where, f"spec.workloads[{i}].replicas")
        replicas += w.replicas
    _count(replicas, MAX_REPLICAS, where, "spec.workloads (replicas of all workloads)")
    _count(spec.extra_manifests, MAX_MANIFESTS, where, "spec.extraManifests")
    for i, op in enumerate(spec.operators or []):
        _count(op.manifests, MAX_MANIFESTS, where, f"spec.operators[{i}].manifests")
        span(op.minutes, where, f"spec.operators[{i}].minutes")
    span(spec.node_phases.update, where, "spec.nodePhases.update")
    span(spec.node_phases.reboot, where, "spec.nodePhases.reboot")
    for name, timing in spec.node_phases.overrides.items():
        span((timing.update, timing.update), where, f"spec.nodePhases.overrides.{name}.update")
        span((timing.reboot, timing.reboot), where, f"spec.nodePhases.overrides.{name}.reboot")
    for i, w in enumerate(spec.workloads):
        span((w.start_seconds, w.start_seconds), where, f"spec.workloads[{i}].startSeconds")
        span(
            (w.termination_seconds, w.termination_seconds),
            where,
            f"spec.workloads[{i}].terminationSeconds",
        )
    for i, fault in enumerate(spec.faults):
        if not (math.isfinite(fault.slow) and fault.slow > 0):
            raise InputError(
                "must be a positive number", file=where, field=f"spec.faults[{i}].slow"
            )
    for i, change in enumerate(spec.changes):
        if not math.isfinite(change.at_minutes):
            raise InputError(
                "must be a number of minutes", file=where, field=f"spec.changes[{i}].atMinutes"
            )


def span(bounds: Range, where: str, field: str) -> None:
    """A duration range: finite, not negative, lower bound first (at most a year)."""
    low, high = bounds
    if not (math.isfinite(low) and math.isfinite(high) and 0 <= low <= high <= 365 * 86400):
        raise InputError(
            f"must be durations from 0 up to a year, lower first, not {low}..{high}",
            file=where,
            field=field,
        )


def check_common(spec: Spec, where: str) -> None:
    """What every platform's profile must keep: sizes, pools, changes and workloads."""
    _check_sizes(spec, where)
    names = {p.name for p in spec.pools}
    if len(names) != len(spec.pools):
        raise InputError("two pools have the same name", file=where, field="spec.pools")
    seen: set[str] = set()
    for i, pool in enumerate(spec.pools):
        if pool.machines and pool.nodes not in (0, len(pool.machines)):
            raise InputError(
                f"nodes says {pool.nodes} but {len(pool.machines)} machines are listed",
                file=where,
                field=f"spec.pools[{i}].nodes",
            )
        machines = node_names(pool)
        if not machines:
            raise InputError(
                "a pool needs at least one node", file=where, field=f"spec.pools[{i}].nodes"
            )
        for name in machines:
            if name in seen:
                raise InputError(
                    f"node {name} is listed twice", file=where, field=f"spec.pools[{i}].machines"
                )
            seen.add(name)
    for i, change in enumerate(spec.changes):
        if change.at_minutes < 0:
            raise InputError(
                "a change cannot happen before the cluster exists",
                file=where,
                field=f"spec.changes[{i}].atMinutes",
            )
    for i, w in enumerate(spec.workloads):
        if w.kind not in WORKLOAD_KINDS:
            raise InputError(
                f"kind {w.kind!r} is not one of {', '.join(WORKLOAD_KINDS)}",
                file=where,
                field=f"spec.workloads[{i}].kind",
            )
        if w.pool not in names:
            raise InputError(
                f"workload {w.name} names pool {w.pool!r}, which the profile does not have",
                file=where,
                field=f"spec.workloads[{i}].pool",
            )
        for j, placed in enumerate(w.pods):
            if placed.node not in seen:
                raise InputError(
                    f"pod of workload {w.name} runs on {placed.node!r}, which the profile "
                    "does not have",
                    file=where,
                    field=f"spec.workloads[{i}].pods[{j}].node",
                )
    _check_objects(spec, where)


def _check_objects(spec: Spec, where: str) -> None:
    """Each object names its kind and itself, as the API would require."""
    nodes = {n for p in spec.pools for n in node_names(p)}
    for i, obj in enumerate(spec.objects):
        meta = obj.get("metadata")
        if not isinstance(obj.get("kind"), str) or not isinstance(meta, dict):
            raise InputError(
                "an object needs kind and metadata", file=where, field=f"spec.objects[{i}]"
            )
        if not isinstance(meta.get("name"), str) or not meta["name"]:
            raise InputError(
                "an object needs metadata.name", file=where, field=f"spec.objects[{i}]"
            )
        if obj["kind"] == "Node" and meta["name"] not in nodes:
            raise InputError(
                f"node {meta['name']} is not a node of the profile's pools (a Node object "
                "changes one the cluster is created with)",
                file=where,
                field=f"spec.objects[{i}]",
            )


def check_operator_faults(spec: Spec, where: str) -> None:
    """A fault names an operator the profile has."""
    known = {o.name for o in operators_of(spec)}
    for i, f in enumerate(spec.faults):
        if f.component is not None or f.preflight is not None or f.health_failures:
            continue  # distributed-cloud faults, checked with the platform
        if f.operator is not None and f.operator not in known:
            raise InputError(
                f"fault names operator {f.operator!r}, which the profile does not have",
                file=where,
                field=f"spec.faults[{i}].operator",
            )


def profile_schema() -> dict[str, Any]:
    """The JSON Schema of a profile, from the very types the loader converts into."""
    return dict(msgspec.json.schema(Profile))
