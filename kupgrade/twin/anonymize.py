"""A twin that can be shared (SPEC X7): the user's names replaced by stable hashes.

Nodes, the user's namespaces, workloads, pods, budgets and label values become
`<prefix>-<hash>`, the same hash for the same name everywhere (a budget's selector still
selects its pods, a pod still runs on its node), and the same on every import, so two
twins of one cluster compare. The platform's own names stay: ClusterOperators, pools,
the ClusterVersion, namespaces of the platform (openshift-*, kube-*, default), operator
packages and API names, which say nothing about the user and which the rehearsal reads.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from msgspec import structs

from kupgrade.sim.profile import Fault, Machine, NodePhases, PodAt, Profile, Workload
from kupgrade.twin.shapes import as_list

SYSTEM_PREFIXES = ("openshift-", "kube-", "default", "olm", "operators", "gke-", "kupgrade")
# Objects kept in a twin whose names are the platform's, not the user's.
PLATFORM_KINDS = ("ClusterVersion", "ClusterOperator", "APIRequestCount", "ConfigMap")


def hashed(prefix: str, name: str) -> str:
    return f"{prefix}-{hashlib.sha256(name.encode()).hexdigest()[:10]}"


def _system(namespace: str) -> bool:
    return namespace.startswith(SYSTEM_PREFIXES)


class _Names:
    """One consistent renaming: nodes always, the rest in the user's namespaces."""

    def __init__(self, nodes: list[str]) -> None:
        self.nodes = {n: hashed("node", n) for n in nodes}

    def node(self, name: str) -> str:
        return self.nodes.get(name) or hashed("node", name)

    def namespace(self, namespace: str) -> str:
        return namespace if _system(namespace) else hashed("ns", namespace)

    def name(self, namespace: str, name: str, prefix: str) -> str:
        return name if _system(namespace) else hashed(prefix, name)

    def labels(self, namespace: str, labels: dict[str, Any]) -> dict[str, Any]:
        if _system(namespace):
            return dict(labels)
        return {k: hashed("v", str(v)) for k, v in labels.items()}


def anonymized(profile: Profile) -> Profile:
    """A copy of the twin's profile with the user's names hashed."""
    spec = profile.spec
    names = _Names([m.name for p in spec.pools for m in p.machines])
    pools = [
        structs.replace(p, machines=[_machine(m, names) for m in p.machines]) for p in spec.pools
    ]
    workloads = [_workload(w, names) for w in spec.workloads]
    objects = [_object(o, names) for o in spec.objects]
    overrides = {names.node(n): t for n, t in spec.node_phases.overrides.items()}
    faults = [_fault(f, names) for f in spec.faults]
    new_spec = structs.replace(
        spec,
        pools=pools,
        workloads=workloads,
        objects=objects,
        faults=faults,
        node_phases=NodePhases(spec.node_phases.update, spec.node_phases.reboot, overrides),
    )
    meta = {**profile.metadata, "annotations": {"kupgrade.io/anonymized": "true"}}
    return structs.replace(profile, spec=new_spec, metadata=meta)


def _machine(m: Machine, names: _Names) -> Machine:
    return structs.replace(m, name=names.node(m.name))


def _workload(w: Workload, names: _Names) -> Workload:
    ns = w.namespace
    renamed = names.name(ns, w.name, "w")
    return structs.replace(
        w,
        name=renamed,
        namespace=names.namespace(ns),
        node=names.node(w.node) if w.node else None,
        labels=names.labels(ns, w.labels),
        pods=[PodAt(names.node(p.node), None, p.ready) for p in w.pods],
    )


def _fault(f: Fault, names: _Names) -> Fault:
    node = names.node(f.node) if f.node else None
    pod = f.pod
    if pod and "/" in pod:
        ns, name = pod.split("/", 1)
        pod = f"{names.namespace(ns)}/{names.name(ns, name, 'w')}"
    return structs.replace(f, node=node, pod=pod)


def _object(obj: dict[str, Any], names: _Names) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    kind = out.get("kind")
    if kind == "Node":
        meta["name"] = names.node(meta["name"])
        return out
    if kind in PLATFORM_KINDS:
        _users(out, names)
        return out
    ns = str(meta.get("namespace") or "")
    meta["name"] = names.name(ns, meta["name"], kind.lower() if isinstance(kind, str) else "o")
    if ns:
        meta["namespace"] = names.namespace(ns)
    if not _system(ns):
        meta.pop("annotations", None)
        spec = out.get("spec")
        selector = spec.get("selector") if isinstance(spec, dict) else None
        if isinstance(selector, dict):
            _selector(selector, ns, names)
    return out


def _selector(selector: dict[str, Any], ns: str, names: _Names) -> None:
    labels = selector.get("matchLabels")
    if isinstance(labels, dict):
        selector["matchLabels"] = names.labels(ns, labels)
    for expr in as_list(selector.get("matchExpressions")):
        if isinstance(expr, dict) and isinstance(expr.get("values"), list):
            expr["values"] = [hashed("v", str(v)) for v in expr["values"]]


def _users(obj: dict[str, Any], names: _Names) -> None:
    """APIRequestCounts name the users and nodes that made the requests."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return
    hours = [status.get("currentHour"), *as_list(status.get("last24h"))]
    for hour in hours:
        for by_node in as_list(hour.get("byNode")) if isinstance(hour, dict) else []:
            if not isinstance(by_node, dict):
                continue
            if isinstance(by_node.get("nodeName"), str):
                by_node["nodeName"] = names.node(by_node["nodeName"])
            for user in as_list(by_node.get("byUser")):
                name = user.get("username") if isinstance(user, dict) else None
                if isinstance(name, str) and not name.startswith("system:"):
                    user["username"] = hashed("user", name)
