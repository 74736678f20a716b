"""A user's cluster as a profile (SPEC X7): what its objects say about its platform,
version, pools, nodes, operators and workloads, in the terms the simulator rehearses.

What the simulator models is mapped; what it needs and the dump lacks is said, one line
per missing part, and filled with the profile's defaults; what the dump holds that no
rehearsal reads is counted by kind, never dropped silently. Budgets, the admin-gates and
admin-acks config maps, APIRequestCounts and OLM's objects go into the twin as they are
(`spec.objects`), and the ClusterVersion's history, the ClusterOperators' conditions and
cordoned nodes are merged into the objects the platform makes, so the twin reads as the
cluster does.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kupgrade.cluster.gdc import MANAGED_BY
from kupgrade.cluster.kubeadm import POOL_LABEL, STATIC
from kupgrade.cluster.mco import DRAIN_FLAGS, ZONE_LABEL, pools_for
from kupgrade.cluster.objects import MIRROR_ANNOTATION
from kupgrade.sim.profile import (
    DEFAULT_OPERATORS,
    GDC_ROLES,
    DrainPolicy,
    Fault,
    Gdc,
    Kube,
    Machine,
    Operator,
    PodAt,
    Pool,
    Profile,
    Spec,
    Workload,
)
from kupgrade.twin.dump import Key, Obj
from kupgrade.twin.shapes import as_dict

# The kinds a twin reads; everything else in a dump is counted as not modelled.
READ_KINDS = frozenset(
    {
        "Node",
        "Pod",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "PodDisruptionBudget",
        "ClusterVersion",
        "ClusterOperator",
        "MachineConfigPool",
        "ConfigMap",
        "APIRequestCount",
        "ClusterServiceVersion",
        "Subscription",
        "Cluster",
        "NodePool",
        "Event",
        "Infrastructure",
    }
)
# Kept in the twin as they are (SPEC X8 reads them: budgets, acknowledgements, API use,
# operators' caps).
KEPT_KINDS = ("PodDisruptionBudget", "APIRequestCount", "ClusterServiceVersion", "Subscription")
ADMIN_CONFIG_MAPS = {
    ("openshift-config", "admin-acks"),
    ("openshift-config-managed", "admin-gates"),
}
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
_RUNLEVEL = {op.name: op.runlevel for op in DEFAULT_OPERATORS}
_ORDER = {op.name: i for i, op in enumerate(DEFAULT_OPERATORS)}
_DEFAULT_RUNLEVEL = 50  # a payload's operators run at 0000_50 unless they say otherwise


@dataclass
class Twin:
    """A cluster's profile and what the import had to say about it."""

    profile: Profile
    notes: list[str] = field(default_factory=list)  # missing parts and skipped input
    unmodelled: dict[str, int] = field(default_factory=dict)  # kind -> objects not read

    def to_json(self) -> dict[str, Any]:
        spec = self.profile.spec
        family = spec.platform if spec.platform in ("gdc", "kubernetes") else OPENSHIFT
        return {
            "platform": family,
            "infrastructure": spec.platform,
            "version": spec.version,
            "nodes": sum(len(p.machines) for p in spec.pools),
            "pools": {p.name: len(p.machines) for p in spec.pools},
            "workloads": len(spec.workloads),
            "pods": sum(len(w.pods) for w in spec.workloads),
            "notes": self.notes,
            "notModelled": dict(sorted(self.unmodelled.items())),
        }


def twin_of(objects: dict[Key, Obj], *, name: str, start: str, seed: int = 1) -> Twin:
    """The profile of the cluster these objects describe (SPEC X7)."""
    by_kind: dict[str, list[Obj]] = defaultdict(list)
    for (kind, _, _), obj in sorted(objects.items()):
        by_kind[kind].append(obj)
    twin = Twin(Profile(metadata={"name": name}))
    twin.unmodelled = dict(Counter(k for k, _, _ in objects if k not in READ_KINDS))
    spec = Spec(seed=seed, start=start, platform_pods=False)
    platform = _platform(by_kind)
    spec.platform = platform
    if platform == OPENSHIFT:
        spec.platform = _infrastructure(by_kind.get("Infrastructure", []))
        _openshift(spec, by_kind, twin.notes)
    elif platform == "gdc":
        _gdc(spec, by_kind, twin.notes)
    else:
        _kubernetes(spec, by_kind, twin.notes)
    spec.workloads = workloads_of(by_kind, spec.pools, twin.notes)
    spec.objects += kept_objects(by_kind, twin.notes)
    members = {m.name for p in spec.pools for m in p.machines}
    spec.objects += node_overlays([n for n in by_kind.get("Node", []) if _name(n) in members])
    twin.profile.spec = spec
    return twin


def _platform(by_kind: dict[str, list[Obj]]) -> str:
    if by_kind.get("ClusterVersion"):
        return OPENSHIFT
    gke = [c for c in by_kind.get("Cluster", []) if "baremetal" in str(c.get("apiVersion", ""))]
    return "gdc" if gke else "kubernetes"


# --- OpenShift ---------------------------------------------------------------------------

OPENSHIFT = "OpenShift"


def _infrastructure(found: list[Obj]) -> str:
    """The infrastructure platform an OpenShift cluster runs on (its Infrastructure's
    status.platformStatus.type, or the older status.platform), as a profile names it."""
    for infra in found:
        status = as_dict(infra.get("status"))
        kind = as_dict(status.get("platformStatus")).get("type") or status.get("platform")
        if isinstance(kind, str) and kind:
            return kind
    return "None"


def _openshift(spec: Spec, by_kind: dict[str, list[Obj]], notes: list[str]) -> None:
    cv = by_kind["ClusterVersion"][0]
    cv_spec, status = as_dict(cv.get("spec")), as_dict(cv.get("status"))
    history = [h for h in status.get("history") or [] if isinstance(h, dict)]
    done = [h for h in history if h.get("state") == "Completed" and h.get("version")]
    desired = as_dict(status.get("desired")).get("version")
    spec.version = str((done[0] if done else {}).get("version") or desired or spec.version)
    if done and desired and desired != spec.version:
        notes.append(
            f"an update to {desired} is under way; the twin starts at {spec.version}, "
            "the last version the cluster completed"
        )
    spec.channel = str(cv_spec.get("channel") or "")
    spec.upstream = str(cv_spec.get("upstream") or "")
    spec.operators, spec.faults = _operators(by_kind.get("ClusterOperator", []), notes)
    spec.pools = _mcp_pools(by_kind.get("MachineConfigPool", []), by_kind.get("Node", []), notes)
    overlay: Obj = {"apiVersion": cv.get("apiVersion"), "kind": "ClusterVersion"}
    overlay["metadata"] = {"name": "version"}
    overlay["status"] = {"history": history} if history else {}
    spec.objects.append(overlay)
    for op in by_kind.get("ClusterOperator", []):
        conditions = as_dict(op.get("status")).get("conditions")
        if isinstance(conditions, list):
            spec.objects.append(
                {
                    "apiVersion": op.get("apiVersion"),
                    "kind": "ClusterOperator",
                    "metadata": {"name": op["metadata"]["name"]},
                    "status": {"conditions": conditions},
                }
            )


def _operators(found: list[Obj], notes: list[str]) -> tuple[list[Operator] | None, list[Fault]]:
    """The cluster's operators at their payload runlevels (the simulator's where it knows
    the operator, else 0000_50), and those degraded or unavailable now as faults: the
    rehearsal shows what an update does while they stay so."""
    if not found:
        notes.append("no ClusterOperators in the dump: the twin has the default operators")
        return None, []
    names = sorted(
        (str(o["metadata"]["name"]) for o in found),
        key=lambda n: (_RUNLEVEL.get(n, _DEFAULT_RUNLEVEL), _ORDER.get(n, len(_ORDER)), n),
    )
    defaults = {op.name: op for op in DEFAULT_OPERATORS}
    operators = [defaults.get(n) or Operator(n, _DEFAULT_RUNLEVEL) for n in names]
    faults = []
    for op in found:
        conditions = {
            c.get("type"): c.get("status")
            for c in as_dict(op.get("status")).get("conditions") or []
            if isinstance(c, dict)
        }
        degraded = conditions.get("Degraded") == "True"
        unavailable = conditions.get("Available") == "False"
        if degraded or unavailable:
            name = str(op["metadata"]["name"])
            faults.append(Fault(operator=name, degrade=degraded, unavailable=unavailable))
    return operators, faults


def _mcp_pools(mcps: list[Obj], nodes: list[Obj], notes: list[str]) -> list[Pool]:
    """Pools as the machine-config controller computes membership (cluster/mco.py)."""
    if not mcps:
        notes.append("no MachineConfigPools in the dump: pools are made from the nodes' roles")
        mcps = [_role_pool("master"), _role_pool("worker")]
    # What pool_of reads, in the shapes it reads them (a dump's may be anything).
    selectors = [
        {"metadata": {"name": _name(p)}, "spec": {"nodeSelector": _selector_of(p)}} for p in mcps
    ]
    members: dict[str, list[Obj]] = defaultdict(list)
    for node in nodes:
        mine, why = pools_for(
            {"metadata": {"name": _name(node), "labels": _labels(node)}}, selectors
        )
        members[mine[0] if mine else ""].append(node)
        if why:
            notes.append(f"{why}: it is not rehearsed")
    if members.get(""):
        names = ", ".join(_name(n) for n in members[""][:5])
        notes.append(
            f"{len(members[''])} nodes are in no MachineConfigPool and not rehearsed: {names}"
        )
    pools = []
    for mcp in mcps:
        pool_name = _name(mcp)
        pool_spec = as_dict(mcp.get("spec"))
        flags = as_dict(as_dict(mcp.get("metadata")).get("annotations")).get(DRAIN_FLAGS)
        pool = Pool(
            pool_name,
            machines=_machines(members.get(pool_name, [])),
            max_unavailable=_int_or_percent(pool_spec.get("maxUnavailable")),
            paused=pool_spec.get("paused") is True,
        )
        if isinstance(flags, str):
            pool.drain = _drain_policy(flags)
        if pool.machines:
            pools.append(pool)
        else:
            notes.append(f"MachineConfigPool {pool_name} has no nodes in the dump: left out")
    return pools or _default_pools(notes)


def _selector_of(mcp: Obj) -> dict[str, Any] | None:
    found = as_dict(mcp.get("spec")).get("nodeSelector")
    return found if isinstance(found, dict) else None


def _role_pool(role: str) -> Obj:
    label = f"node-role.kubernetes.io/{role}"
    return {"metadata": {"name": role}, "spec": {"nodeSelector": {"matchLabels": {label: ""}}}}


def _drain_policy(flags: str) -> DrainPolicy:
    words = set(flags.split())
    return DrainPolicy(
        ignore_daemonsets="--ignore-daemonsets" in words,
        delete_emptydir_data="--delete-emptydir-data" in words,
        force="--force" in words,
    )


# --- Kubernetes and distributed cloud ------------------------------------------------------


def _kubernetes(spec: Spec, by_kind: dict[str, list[Obj]], notes: list[str]) -> None:
    nodes = by_kind.get("Node", [])
    planes = [n for n in nodes if _is_control_plane(n)]
    versions = sorted(
        {
            str(as_dict(as_dict(n.get("status")).get("nodeInfo")).get("kubeletVersion") or "")
            for n in planes or nodes
        }
        - {""}
    )
    spec.version = versions[0] if versions else "v1.30.0"
    if not versions:
        notes.append("no node says its kubelet version: the twin runs v1.30.0")
    spec.channel = ""
    groups: dict[str, list[Obj]] = defaultdict(list)
    for node in nodes:
        labels = _labels(node)
        pool = "control-plane" if _is_control_plane(node) else labels.get(POOL_LABEL) or "worker"
        groups[pool].append(node)
    spec.pools = [
        Pool(p, machines=_machines(ns), max_unavailable=1) for p, ns in sorted(groups.items())
    ]
    if "control-plane" not in groups:
        notes.append("no control-plane node in the dump: the twin's control plane is one node")
        spec.pools.insert(0, Pool("control-plane", machines=[Machine("control-plane-0")]))
    if not nodes:
        spec.pools = _default_pools(notes)
    spec.kube, platform_pods = _kube_shape(by_kind.get("Pod", []), spec.version)
    by_kind["Pod"] = [p for p in by_kind.get("Pod", []) if id(p) not in platform_pods]


def _kube_shape(pods: list[Obj], version: str) -> tuple[Kube | None, set[int]]:
    """The versions a kubeadm cluster's own pods run, from their images (SPEC H): each
    control-plane node's static pods and each node's kube-proxy, where they differ from
    the cluster's version. The twin's platform makes those pods itself, so they are not
    workloads (the ids of the pods read)."""
    static: dict[str, dict[str, str]] = defaultdict(dict)
    proxy: dict[str, str] = {}
    seen: set[int] = set()
    for pod in pods:
        meta = as_dict(pod.get("metadata"))
        node = str(as_dict(pod.get("spec")).get("nodeName") or "")
        tag = _image_tag(pod)
        component = _labels(pod).get("component", "")
        if meta.get("namespace") != "kube-system" or not node:
            continue
        if MIRROR_ANNOTATION in as_dict(meta.get("annotations")) and component in (*STATIC, "etcd"):
            seen.add(id(pod))
            if component != "etcd" and tag:
                static[node][component] = tag
        elif _labels(pod).get("k8s-app") == "kube-proxy":
            seen.add(id(pod))
            if tag and tag != version:
                proxy[node] = tag
    differ = {
        node: {c: runs.get(c, version) for c in STATIC}
        for node, runs in sorted(static.items())
        if any(runs.get(c, version) != version for c in STATIC)
    }
    return (Kube(static_pods=differ, kube_proxy=proxy) if differ or proxy else None), seen


def _image_tag(pod: Obj) -> str:
    """A container image's tag when it is a Kubernetes version (registry.k8s.io/x:v1.30.4)."""
    for container in as_dict(pod.get("spec")).get("containers") or []:
        image = str(as_dict(container).get("image") or "")
        tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
        if re.fullmatch(r"v\d+\.\d+\.\d+", tag):
            return tag
    return ""


def _gdc(spec: Spec, by_kind: dict[str, list[Obj]], notes: list[str]) -> None:
    """A bare-metal cluster (baremetal.cluster.gke.io Cluster and NodePools): its role, its
    management cluster, its version and its pools; control-plane and load-balancer nodes
    listed in the Cluster's own nodePoolSpecs when no NodePool lists them."""
    cluster = next(c for c in by_kind["Cluster"] if "baremetal" in str(c.get("apiVersion", "")))
    status, cspec = as_dict(cluster.get("status")), as_dict(cluster.get("spec"))
    version = status.get("anthosBareMetalVersion") or cspec.get("anthosBareMetalVersion")
    spec.version = str(version or spec.version)
    spec.channel = ""
    role = str(cspec.get("type") or "standalone")
    spec.gdc = Gdc(role=role if role in GDC_ROLES else "standalone")
    annotations = as_dict(as_dict(cluster.get("metadata")).get("annotations"))
    if spec.gdc.role == "user":
        spec.gdc.managed_by = str(annotations.get(MANAGED_BY) or "admin")
    mode = as_dict(cspec.get("loadBalancer")).get("mode")
    spec.gdc.load_balancer = mode if mode in ("bundled", "manual") else "bundled"
    strategy = as_dict(cspec.get("nodePoolUpgradeStrategy")).get("concurrentNodePools")
    spec.gdc.concurrent_node_pools = strategy if strategy in (0, 1) else 1
    by_node = {_name(n): n for n in by_kind.get("Node", [])}
    pools = [_nodepool(p, by_node) for p in by_kind.get("NodePool", [])]
    listed = {m.name for p in pools for m in p.machines}
    for part, pool_role in (("controlPlane", "control-plane"), ("loadBalancer", "load-balancer")):
        addresses = _addresses(as_dict(as_dict(cspec.get(part)).get("nodePoolSpec")))
        if addresses and not listed & set(addresses):
            members = [by_node.get(a) or {"metadata": {"name": a}} for a in addresses]
            pools.append(Pool(pool_role, machines=_machines(members), role=pool_role))
    if not pools:
        notes.append("no NodePools in the dump: pools are made from the nodes' roles")
        groups: dict[str, list[Obj]] = defaultdict(list)
        for node in by_node.values():
            groups["control-plane" if _is_control_plane(node) else "worker"].append(node)
        pools = [Pool(p, machines=_machines(ns)) for p, ns in sorted(groups.items())]
    spec.pools = [p for p in pools if p.machines] or _default_pools(notes)


def _addresses(pool_spec: dict[str, Any]) -> list[str]:
    return [
        str(m["address"])
        for m in pool_spec.get("nodes") or []
        if isinstance(m, dict) and isinstance(m.get("address"), str) and m["address"]
    ]


def _nodepool(nodepool: Obj, by_node: dict[str, Obj]) -> Pool:
    """A NodePool as a profile pool: its nodes, its role, the profile pool name a
    simulated cluster's nodes carry (so that a twin of one keeps its names)."""
    members = [
        by_node.get(a) or {"metadata": {"name": a}}
        for a in _addresses(as_dict(nodepool.get("spec")))
    ]
    pool_spec = as_dict(nodepool.get("spec"))
    role = _labels(nodepool).get("kupgrade.io/pool-role") or None
    named = {_labels(n).get(POOL_LABEL) for n in members} - {None}
    name = next(iter(named)) if len(named) == 1 else _name(nodepool)
    parallel = as_dict(as_dict(pool_spec.get("upgradeStrategy")).get("parallelUpgradeConfig"))
    concurrent, minimum = parallel.get("concurrentNodes"), parallel.get("minimumAvailable")
    version = pool_spec.get("anthosBareMetalVersion")
    return Pool(
        str(name),
        machines=_machines(members),
        role=role,
        concurrent_nodes=concurrent if isinstance(concurrent, int) and concurrent > 0 else 1,
        minimum_available=minimum if isinstance(minimum, int) and minimum > 0 else 0,
        version=version if isinstance(version, str) and version else None,
    )


def _is_control_plane(node: Obj) -> bool:
    labels = _labels(node)
    return (
        any(k in labels for k in CONTROL_PLANE_LABELS) or labels.get(POOL_LABEL) == "control-plane"
    )


def _default_pools(notes: list[str]) -> list[Pool]:
    notes.append("no Nodes in the dump: the twin has the default pools (3 masters, 3 workers)")
    return Spec().pools


def _machines(nodes: Iterable[Obj]) -> list[Machine]:
    """Nodes in the order their names count (worker-2 before worker-10)."""
    machines = []
    for node in nodes:
        meta = as_dict(node.get("metadata"))
        zone = _labels(node).get(ZONE_LABEL)
        created = meta.get("creationTimestamp")
        machines.append(
            Machine(
                _name(node),
                zone=zone or None,
                created=created if isinstance(created, str) else None,
            )
        )
    return sorted(machines, key=lambda m: natural(m.name))


def natural(name: str) -> list[Any]:
    return [int(p) if p.isdecimal() else p for p in re.split(r"(\d+)", name)]


# --- workloads ---------------------------------------------------------------------------


def workloads_of(
    by_kind: dict[str, list[Obj]], pools: list[Pool], notes: list[str]
) -> list[Workload]:
    """Each controller's pods as one workload, with its replicas, placement, readiness and
    labels; bare pods one by one; mirror pods as static pods. Finished pods (a Job's) and
    pods on nodes the twin lacks are counted in a note."""
    pool_of_node = {m.name: p.name for p in pools for m in p.machines}
    rs_owner = {
        (r["metadata"].get("namespace", ""), _name(r)): _controller(r)
        for r in by_kind.get("ReplicaSet", [])
    }
    groups: dict[tuple[str, str, str], list[Obj]] = defaultdict(list)
    skipped: Counter[str] = Counter()
    for pod in by_kind.get("Pod", []):
        status, pspec = as_dict(pod.get("status")), as_dict(pod.get("spec"))
        if status.get("phase") in ("Succeeded", "Failed"):
            skipped["finished"] += 1
            continue
        if pspec.get("nodeName") not in pool_of_node:
            skipped["unscheduled or on a node the twin lacks"] += 1
            continue
        groups[_owner_of(pod, rs_owner)].append(pod)
    specs = _controllers(by_kind)
    workloads = [
        _workload(key, pods, specs.get(key), pool_of_node) for key, pods in sorted(groups.items())
    ]
    for why, count in sorted(skipped.items()):
        notes.append(f"{count} pods not rehearsed ({why})")
    return workloads


def _controller(obj: Obj) -> tuple[str, str] | None:
    for ref in as_dict(obj.get("metadata")).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") and ref.get("kind") and ref.get("name"):
            return str(ref["kind"]), str(ref["name"])
    return None


def _owner_of(
    pod: Obj, rs_owner: dict[tuple[str, str], tuple[str, str] | None]
) -> tuple[str, str, str]:
    """(kind, namespace, name) of the workload a pod belongs to: a ReplicaSet's
    Deployment (from the ReplicaSet, or its name less the template hash), a StatefulSet,
    a DaemonSet, the node of a mirror pod, or the pod itself."""
    meta = as_dict(pod.get("metadata"))
    namespace = str(meta.get("namespace") or "default")
    if MIRROR_ANNOTATION in as_dict(meta.get("annotations")):
        # A mirror pod is named <component>-<node> by the kubelet.
        node = str(as_dict(pod.get("spec")).get("nodeName") or "")
        return ("StaticPod", namespace, _name(pod).removesuffix(f"-{node}") or _name(pod))
    owner = _controller(pod)
    if owner is None:
        return ("Pod", namespace, _name(pod))
    kind, name = owner
    if kind == "ReplicaSet":
        parent = rs_owner.get((namespace, name))
        if parent is not None and parent[0] == "Deployment":
            return ("Deployment", namespace, parent[1])
        if (namespace, name) not in rs_owner and "-" in name:
            return ("Deployment", namespace, name.rsplit("-", 1)[0])
        return ("Deployment", namespace, name)
    if kind in ("StatefulSet", "DaemonSet"):
        return (kind, namespace, name)
    return ("Deployment", namespace, name)  # another controller's pods: replaced as a Deployment's


def _controllers(by_kind: dict[str, list[Obj]]) -> dict[tuple[str, str, str], Obj]:
    return {
        (kind, str(o["metadata"].get("namespace") or "default"), _name(o)): o
        for kind in ("Deployment", "StatefulSet", "DaemonSet")
        for o in by_kind.get(kind, [])
    }


def _workload(
    key: tuple[str, str, str], pods: list[Obj], owner: Obj | None, pool_of_node: dict[str, str]
) -> Workload:
    kind, namespace, name = key
    pods = sorted(pods, key=lambda p: natural(_name(p)))
    nodes = [str(as_dict(p.get("spec")).get("nodeName")) for p in pods]
    pool = Counter(pool_of_node[n] for n in nodes).most_common(1)[0][0]
    template = as_dict(as_dict(as_dict(owner or {}).get("spec")).get("template"))
    pod_spec = as_dict(template.get("spec")) or as_dict(pods[0].get("spec"))
    replicas = as_dict((owner or {}).get("spec")).get("replicas")
    grace = pod_spec.get("terminationGracePeriodSeconds")
    return Workload(
        name=name,
        namespace=namespace,
        kind=kind,
        replicas=replicas if isinstance(replicas, int) and replicas >= 0 else len(pods),
        pool=pool,
        termination_seconds=float(grace) if isinstance(grace, int | float) and grace >= 0 else 30.0,
        empty_dir=any(
            isinstance(v, dict) and "emptyDir" in v
            for p in pods
            for v in as_dict(p.get("spec")).get("volumes") or []
        ),
        labels={k: str(v) for k, v in _labels(pods[0]).items() if k != "pod-template-hash"},
        pods=[PodAt(node, _name(p), _ready(p)) for p, node in zip(pods, nodes, strict=True)],
    )


def _ready(pod: Obj) -> bool:
    for c in as_dict(pod.get("status")).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


# --- objects kept as they are ---------------------------------------------------------------


def kept_objects(by_kind: dict[str, list[Obj]], notes: list[str]) -> list[Obj]:
    """The objects a twin keeps as they are, each in the shape the API would have
    accepted (a malformed one would break the rehearsal that reads it: it is left out
    and counted)."""
    found = [o for kind in KEPT_KINDS for o in by_kind.get(kind, [])]
    found += [
        c
        for c in by_kind.get("ConfigMap", [])
        if (c["metadata"].get("namespace", ""), _name(c)) in ADMIN_CONFIG_MAPS
    ]
    kept, bad = [], Counter[str]()
    for obj in found:
        if not _well_formed(obj):
            bad[obj["kind"]] += 1
            continue
        clean = _clean(obj)
        if clean["kind"] == "PodDisruptionBudget":  # its status is counted in the twin
            clean.pop("status", None)
        kept.append(clean)
    for kind, count in sorted(bad.items()):
        notes.append(f"{count} {kind} objects are malformed and left out")
    return kept


def _well_formed(obj: Obj) -> bool:
    spec, status, meta = obj.get("spec"), obj.get("status"), obj["metadata"]
    if obj["kind"] == "PodDisruptionBudget":
        selector = as_dict(spec).get("selector")
        numbers = [as_dict(spec).get(k) for k in ("minAvailable", "maxUnavailable")]
        return (
            isinstance(spec, dict)
            and (selector is None or isinstance(selector, dict))
            and all(n is None or _int_or_percent(n) is not None for n in numbers)
        )
    if obj["kind"] == "ConfigMap":
        data = obj.get("data")
        return data is None or (
            isinstance(data, dict) and all(isinstance(v, str) for v in data.values())
        )
    annotations = meta.get("annotations")
    return (status is None or isinstance(status, dict)) and (
        annotations is None or isinstance(annotations, dict)
    )


def node_overlays(nodes: list[Obj]) -> list[Obj]:
    """Cordoned and tainted nodes stay so in the twin."""
    overlays = []
    for node in nodes:
        nspec = as_dict(node.get("spec"))
        changed = {k: nspec[k] for k in ("unschedulable", "taints") if nspec.get(k)}
        if changed:
            overlays.append({"kind": "Node", "metadata": {"name": _name(node)}, "spec": changed})
    return overlays


def _clean(obj: Obj) -> Obj:
    """An object without the server's bookkeeping (managedFields, uid, resourceVersion)."""
    meta = {
        k: v
        for k, v in as_dict(obj.get("metadata")).items()
        if k in ("name", "namespace", "labels", "annotations", "creationTimestamp")
    }
    return {**{k: v for k, v in obj.items() if k != "metadata"}, "metadata": meta}


# --- small readers -------------------------------------------------------------------------


def _name(obj: Obj) -> str:
    return str(as_dict(obj.get("metadata")).get("name") or "")


def _labels(obj: Obj) -> dict[str, str]:
    labels = as_dict(as_dict(obj.get("metadata")).get("labels"))
    return {str(k): str(v) for k, v in labels.items()}


def _int_or_percent(value: Any) -> int | str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and re.fullmatch(r"\d+%?", value)):
        return value
    return None
