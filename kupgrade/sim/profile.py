"""A cluster profile: the topology, operators, workloads and faults of a simulated cluster.

Users describe their own cluster this way to rehearse an upgrade before touching it:
how many nodes in which pools and zones, how long each operator takes to roll out,
which workloads have PodDisruptionBudgets, and what should go wrong.
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from kupgrade import intake
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


WORKLOAD_KINDS = ("Deployment", "DaemonSet", "Pod", "StaticPod")


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


def operators_of(spec: Spec) -> list[Operator]:
    return spec.operators if spec.operators is not None else DEFAULT_OPERATORS


def node_names(pool: Pool) -> list[str]:
    return [m.name for m in pool.machines] or [f"{pool.name}-{i}" for i in range(pool.nodes)]


def load_profile(path: Path | None) -> Profile:
    """Read a profile file; None gives the embedded default."""
    if path is None:
        return Profile()
    data = intake.load_yaml(intake.read_file(path, "profile"), str(path))
    try:
        profile = msgspec.convert(data or {}, Profile, strict=False)
    except msgspec.ValidationError as exc:
        raise InputError(
            str(exc), file=str(path), hint="see `kupgrade cluster create --help`"
        ) from exc
    check_profile(profile, str(path))
    return profile


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
        _span(op.minutes, where, f"spec.operators[{i}].minutes")
    _span(spec.node_phases.update, where, "spec.nodePhases.update")
    _span(spec.node_phases.reboot, where, "spec.nodePhases.reboot")
    for name, timing in spec.node_phases.overrides.items():
        _span((timing.update, timing.update), where, f"spec.nodePhases.overrides.{name}.update")
        _span((timing.reboot, timing.reboot), where, f"spec.nodePhases.overrides.{name}.reboot")
    for i, w in enumerate(spec.workloads):
        _span((w.start_seconds, w.start_seconds), where, f"spec.workloads[{i}].startSeconds")
        _span(
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


def _span(bounds: Range, where: str, field: str) -> None:
    """A duration range: finite, not negative, lower bound first (at most a year)."""
    low, high = bounds
    if not (math.isfinite(low) and math.isfinite(high) and 0 <= low <= high <= 365 * 86400):
        raise InputError(
            f"must be durations from 0 up to a year, lower first, not {low}..{high}",
            file=where,
            field=field,
        )


def check_profile(profile: Profile, where: str) -> None:
    spec = profile.spec
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
    known = {o.name for o in operators_of(spec)}
    for i, f in enumerate(spec.faults):
        if f.operator is not None and f.operator not in known:
            raise InputError(
                f"fault names operator {f.operator!r}, which the profile does not have",
                file=where,
                field=f"spec.faults[{i}].operator",
            )


def example_profile() -> str:
    """The commented example profile shipped with kupgrade (every section used)."""
    return (resources.files("kupgrade.sim") / "example-profile.yaml").read_text(encoding="utf-8")


def profile_schema() -> dict[str, Any]:
    """The JSON Schema of a profile, from the very types the loader converts into."""
    return dict(msgspec.json.schema(Profile))
