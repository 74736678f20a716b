"""A fleet file made into the profiles of simulated clusters (SPEC X5).

The file is the one `kupgrade plan` reads: distributed-cloud clusters (`clusters: {NAME:
{version, role, managed_by, pools, annotations}}` with an optional release history), or
`platform: kubernetes` with clusters in either form of one Kubernetes cluster (`{cp,
pools}` or a skew inventory). The plan's own keys (`target`, `available`, `policy`) are
the rehearsal's defaults.

What a plan does not need but a simulation does sits under `simulation:` (ignored by
`kupgrade plan`): the shared clock's `start` and `seed`, how many `controlPlanes` and
`nodesPerPool` each cluster gets, and a ClusterProfile (`profile`, a path relative to the
fleet file) whose workloads, node timings, faults, scripted changes and
distributed-cloud settings every cluster takes; `clusters: {NAME: {...}}` overrides any
of these for one cluster. Without a profile every worker pool runs one Deployment with a
replica per node and a budget of one unavailable, so that drains and downtime mean
something. A profile's workloads run in the pools of that name a cluster has.

A skew inventory becomes a cluster with one node per name it lists: control-plane nodes
run the components listed under their name at the listed versions (`talks_to` is not
modelled: every component reaches every apiserver, which is the stricter reading), every
other node is its own pool, and each node's kube-proxy keeps its own version. `kubectl`
entries are clients, not part of a cluster, and `drained` and
`webhooks_cover_new_versions` describe one proposed step; the rehearsal drains before
every minor kubelet change and plans its own steps, so none of them is simulated. A
cluster in the short form may name the kubeadm its control-plane steps run (`kubeadm:
{version, force, allowExperimental, allowRCs, minControlPlane}`; by default the
target's own).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from kupgrade.errors import InputError
from kupgrade.plan.kube_fleet import KUBERNETES, KubeDoc, is_kube_fleet
from kupgrade.sim.profile import (
    Budget,
    Gdc,
    Kube,
    KubeadmTool,
    Machine,
    Pool,
    Profile,
    Spec,
    Workload,
)
from kupgrade.sim.profiles import check_profile, load_profile
from kupgrade.skew.fleet import CASE_KEYS, is_fleet_document, parse_fleet
from kupgrade.skew.inventory import parse_inventory, with_apiservers
from kupgrade.versions import parse_kube

SIMULATION = "simulation"
GDC = "gdc"
CONTROL_PLANE = "control-plane"
MAX_CLUSTERS = 1000
MAX_NODES = 200  # per pool: a fleet rehearses many clusters, each of a realistic size


class _Base(msgspec.Struct, forbid_unknown_fields=True, rename="camel", omit_defaults=True):
    pass


class Sizes(_Base):
    control_planes: int | None = None
    nodes_per_pool: int | None = None
    profile: str | None = None
    seed: int | None = None
    metrics: str | None = None  # an OpenMetrics snapshot: the cluster's metrics (rollout gates)


class Simulation(Sizes):
    start: str | None = None
    clusters: dict[str, Sizes] = msgspec.field(default_factory=dict)


@dataclass
class Member:
    name: str
    profile: Profile


@dataclass
class FleetFile:
    """The clusters to create and what `fleet rehearse` defaults to."""

    platform: str  # gdc | kubernetes
    members: list[Member]
    document: dict[str, Any]  # the fleet as written, without `simulation`
    target: str | None = None
    available: list[str] = field(default_factory=list)
    policy: str | None = None


def read_fleet(data: Any, where: str) -> FleetFile:
    """Check the fleet as `kupgrade plan` does, then make each cluster's profile."""
    if not isinstance(data, dict):
        raise InputError("a fleet file is a mapping with `clusters`", file=where)
    sim = _simulation(data.get(SIMULATION), where)
    doc = {k: v for k, v in data.items() if k != SIMULATION}
    if "clusters" in doc and not (isinstance(doc["clusters"], dict) and doc["clusters"]):
        raise InputError(
            "clusters is a mapping of cluster names to clusters, and not empty",
            file=where,
            field="clusters",
            hint="see `kupgrade skew reference fleet` for the format",
        )
    base = Path(where).parent
    common = _profile(sim.profile, base)
    unknown = sorted(set(sim.clusters) - set(doc.get("clusters") or {}))
    if unknown:
        raise InputError(
            f"simulation.clusters names {unknown[0]!r}, which the fleet does not list",
            file=where,
            field=f"simulation.clusters.{unknown[0]}",
        )
    if is_kube_fleet(doc) or doc.get("platform") == KUBERNETES:
        platform, specs = KUBERNETES, _kube_specs(doc, where)
    elif is_fleet_document(doc):
        platform, specs = GDC, _gdc_specs(doc, where)
    else:
        raise InputError(
            "a fleet file lists `clusters`",
            file=where,
            field="clusters",
            hint="see `kupgrade skew reference fleet` for the format",
        )
    if len(specs) > MAX_CLUSTERS:
        raise InputError(f"{len(specs)} clusters; a fleet has at most {MAX_CLUSTERS}", file=where)
    members = []
    for i, (name, shape) in enumerate(specs.items()):
        own = sim.clusters.get(name, Sizes())
        profile = _profile(own.profile, base) if own.profile else common
        made = _member(name, shape, given=profile, sim=sim, own=own, i=i, where=where)
        metrics = own.metrics or sim.metrics
        if metrics:
            made = msgspec.structs.replace(
                made,
                spec=msgspec.structs.replace(made.spec, metrics=_metrics(base / metrics, where)),
            )
        members.append(Member(name, made))
    available = doc.get("available") or []
    return FleetFile(
        platform,
        members,
        doc,
        str(doc["target"]) if doc.get("target") else None,
        [str(v) for v in available] if isinstance(available, list) else [],
        str(doc["policy"]) if doc.get("policy") else None,
    )


def _simulation(raw: Any, where: str) -> Simulation:
    try:
        sim = msgspec.convert(raw or {}, Simulation)
    except msgspec.ValidationError as exc:
        raise InputError(
            str(exc).replace("`$", "`simulation"),
            file=where,
            hint="simulation has start, seed, controlPlanes, nodesPerPool, "
            "profile and clusters {NAME: {...}}",
        ) from None
    for name, sizes in [("", sim), *sim.clusters.items()]:
        at = f"simulation.clusters.{name}." if name else "simulation."
        for key, value, top in (
            ("controlPlanes", sizes.control_planes, 7),
            ("nodesPerPool", sizes.nodes_per_pool, MAX_NODES),
        ):
            if value is not None and not 1 <= value <= top:
                raise InputError(
                    f"{key} is {value}; it is from 1 to {top}", file=where, field=f"{at}{key}"
                )
    return sim


def _metrics(path: Path, where: str) -> str:
    """A metrics snapshot, checked now (a gate reads it much later)."""
    if not path.is_file():
        raise InputError(
            f"metrics snapshot {path} not found",
            file=where,
            hint="simulation.metrics (or simulation.clusters.NAME.metrics) is an OpenMetrics "
            "file, relative to the fleet file",
        )
    return str(path.resolve())


def _profile(path: str | None, base: Path) -> Profile | None:
    return load_profile(base / path, template=True) if path else None


# --- the clusters' shapes ---------------------------------------------------------------


@dataclass
class Shape:
    """One cluster as the fleet file gives it, before sizes and a profile are applied."""

    version: str
    pools: dict[str, str]  # worker pool -> version
    gdc: Gdc | None = None
    kube: Kube | None = None
    nodes: dict[str, list[str]] | None = None  # pool -> node names (an inventory's)
    planes: list[str] | None = None  # control-plane node names (an inventory's)


def _gdc_specs(doc: dict[str, Any], where: str) -> dict[str, Shape]:
    fleet = parse_fleet(doc, where)
    out = {}
    for name, cluster in fleet.clusters.items():
        notes = doc["clusters"][name].get("annotations") or {}
        pools = {p: str(v) for p, v in cluster.pools.items()}
        if not pools and cluster.role != "admin":
            pools = {"np1": str(cluster.version)}  # somewhere for its workloads to run
        gdc = Gdc(role=cluster.role, managed_by=cluster.managed_by, annotations=dict(notes))
        out[name] = Shape(str(cluster.version), pools, gdc=gdc)
    return out


def _kube_specs(doc: dict[str, Any], where: str) -> dict[str, Shape]:
    clusters = doc.get("clusters")
    if clusters is None:  # one cluster, as a plan case writes it
        body = doc.get("cluster", {k: v for k, v in doc.items() if k not in CASE_KEYS})
        clusters = {"cluster": body}
    if not isinstance(clusters, dict) or not clusters:
        raise InputError("the fleet lists no cluster", file=where, field="clusters")
    return {str(n): _kube_shape(body, where, f"clusters.{n}") for n, body in clusters.items()}


def _kube_shape(body: Any, where: str, at: str) -> Shape:
    if isinstance(body, dict) and "apiservers" in body:
        return _inventory_shape(body, where)
    try:
        doc = msgspec.convert(body, KubeDoc)
    except msgspec.ValidationError as exc:
        raise InputError(
            str(exc).replace("`$", f"`{at}"),
            file=where,
            hint="a Kubernetes cluster is {cp: VERSION, pools: {NAME: VERSION}} "
            "or a skew inventory",
        ) from None
    for field_name, version in [("cp", doc.cp), *((f"pools.{p}", v) for p, v in doc.pools.items())]:
        _kube_version(version, where, f"{at}.{field_name}")
    kube = None
    if doc.kubeadm is not None:
        try:
            kube = Kube(kubeadm=msgspec.convert(doc.kubeadm, KubeadmTool))
        except msgspec.ValidationError as exc:
            raise InputError(
                str(exc).replace("`$", f"`{at}.kubeadm"),
                file=where,
                hint="kubeadm has version, force, allowExperimental, allowRCs and minControlPlane",
            ) from None
    return Shape(doc.cp.lstrip("v"), {p: v.lstrip("v") for p, v in doc.pools.items()}, kube=kube)


def _kube_version(text: str, where: str, at: str) -> str:
    try:
        return str(parse_kube(text))
    except Exception as exc:  # VersionError, said with the field
        raise InputError(str(getattr(exc, "message", exc)), file=where, field=at) from None


def _inventory_shape(body: dict[str, Any], where: str) -> Shape:
    inventory = with_apiservers(parse_inventory(body, where), where)
    version = str(max(parse_kube(a.version) for a in inventory.apiservers))
    static: dict[str, dict[str, str]] = {}
    listed = [("kube-apiserver", i) for i in inventory.apiservers] + inventory.controllers()
    for component, instance in listed:
        static.setdefault(instance.name, {})[component] = str(parse_kube(instance.version))
    kubelets = {n.name: n.kubelet or n.kube_proxy or version for n in inventory.nodes}
    proxies = {n.name: str(parse_kube(n.kube_proxy)) for n in inventory.nodes if n.kube_proxy}
    planes = list(static)
    for name in planes:
        kubelets.setdefault(name, version)
    workers = [n.name for n in inventory.nodes if n.name not in static]
    pools = {name: str(parse_kube(kubelets[name])) for name in [*planes, *workers]}
    return Shape(
        version,
        pools,
        kube=Kube(static_pods=static, kube_proxy=proxies),
        nodes={n: [n] for n in pools},
        planes=planes,
    )


# --- one member's profile ---------------------------------------------------------------


def _member(
    name: str,
    shape: Shape,
    *,
    given: Profile | None,
    sim: Simulation,
    own: Sizes,
    i: int,
    where: str,
) -> Profile:
    spec = given.spec if given is not None else Spec()
    planes = own.control_planes or sim.control_planes or 1
    per_pool = own.nodes_per_pool or sim.nodes_per_pool or 3
    seed = own.seed if own.seed is not None else (sim.seed if sim.seed is not None else spec.seed)
    known = {p.name: p for p in spec.pools}
    pools: list[Pool] = []
    if shape.planes is None:
        pools.append(_pool(known.get(CONTROL_PLANE), CONTROL_PLANE, planes, None, CONTROL_PLANE))
    for pool, version in shape.pools.items():
        machines = (shape.nodes or {}).get(pool)
        role = CONTROL_PLANE if pool in (shape.planes or []) else "worker"
        made = _pool(known.get(pool), pool, per_pool, version, role)
        if machines is not None:
            made = msgspec.structs.replace(made, nodes=0, machines=[Machine(m) for m in machines])
        pools.append(made)
    workers = [p.name for p in pools if p.role == "worker"]
    workloads = (
        [w for w in spec.workloads if w.pool in workers]
        if given is not None
        else [_default_workload(p, per_pool) for p in workers if shape.nodes is None]
    )
    gdc = None
    if shape.gdc is not None:
        base = spec.gdc or Gdc()
        gdc = msgspec.structs.replace(
            base,
            role=shape.gdc.role,
            managed_by=shape.gdc.managed_by,
            annotations={**base.annotations, **shape.gdc.annotations},
        )
    platform = GDC if shape.gdc is not None else KUBERNETES
    made_spec = msgspec.structs.replace(
        spec,
        platform=platform,
        version=shape.version,
        seed=seed + i,
        start=sim.start or spec.start,
        pools=pools,
        workloads=workloads,
        gdc=gdc,
        kube=shape.kube,
        olm=None,
        operators=None,
    )
    profile = Profile(metadata={"name": name}, spec=made_spec)
    check_profile(profile, f"{where} (cluster {name})")
    return profile


def _pool(known: Pool | None, name: str, nodes: int, version: str | None, role: str) -> Pool:
    base = known or Pool(name)
    return msgspec.structs.replace(
        base, name=name, nodes=nodes, machines=[], created=[], version=version, role=role
    )


def _default_workload(pool: str, nodes: int) -> Workload:
    """A replica per node and a budget of one unavailable: every node drains (a budget
    that a single-node pool could never satisfy would hold its drain forever)."""
    return Workload(
        f"app-{pool}", namespace="apps", replicas=nodes, pool=pool, pdb=Budget(max_unavailable=1)
    )
