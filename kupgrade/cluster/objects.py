"""Kubernetes/OpenShift object shapes the controllers read and write.

Plain dicts in the API's own shape (`apiVersion`, `kind`, `metadata`, `spec`,
`status`), so `get -o yaml` shows what `oc get -o yaml` would, and a real cluster
backend can hand the same objects to the same controllers.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec

from kupgrade.cluster import mco

Obj = dict[str, Any]


def meta(name: str, namespace: str = "", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if namespace:
        out["namespace"] = namespace
    out.update({k: v for k, v in extra.items() if v})
    return out


def cluster_version(
    cluster_id: str, channel: str, upstream: str, desired: dict[str, Any], created: str
) -> Obj:
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": meta("version", creationTimestamp=created),
        "spec": {"clusterID": cluster_id, "channel": channel, "upstream": upstream},
        "status": {
            "desired": desired,
            "history": [],
            "conditions": [],
            "availableUpdates": None,
            "observedGeneration": 1,
            "versionHash": "",
        },
    }


def cluster_operator(
    name: str, version: str, created: str, annotations: dict[str, str] | None = None
) -> Obj:
    """`annotations`: its manifest's (the release profiles it is included in)."""
    extra: dict[str, Any] = {"annotations": dict(annotations)} if annotations else {}
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterOperator",
        "metadata": meta(name, creationTimestamp=created, **extra),
        "spec": {},
        "status": {
            "conditions": [
                {"type": "Available", "status": "True", "lastTransitionTime": created},
                {"type": "Progressing", "status": "False", "lastTransitionTime": created},
                {"type": "Degraded", "status": "False", "lastTransitionTime": created},
            ],
            "versions": [{"name": "operator", "version": version}],
        },
    }


def machine_config_pool(
    name: str, rendered: str, max_unavailable: int | str | None, created: str
) -> Obj:
    labels = {"pools.operator.machineconfiguration.openshift.io/" + name: ""}
    if name == "master":
        labels["operator.machineconfiguration.openshift.io/required-for-upgrade"] = ""
    spec: dict[str, Any] = {
        "configuration": {"name": rendered},
        "nodeSelector": {"matchLabels": {f"node-role.kubernetes.io/{name}": ""}},
        "paused": False,
    }
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return {
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfigPool",
        "metadata": meta(name, labels=labels, creationTimestamp=created),
        "spec": spec,
        "status": {"configuration": {"name": rendered}, "conditions": []},
    }


def machine_config(rendered: str, release: str, created: str) -> Obj:
    """A rendered MachineConfig, annotated with the release it was rendered from."""
    return {
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfig",
        "metadata": meta(
            rendered, creationTimestamp=created, annotations={mco.RELEASE_IMAGE_VERSION: release}
        ),
        "spec": {},
    }


def openshift_kubelet(release: str) -> str:
    """The kubelet version an OpenShift release ships: 4.N runs Kubernetes 1.(N+13) (the
    patch is not modelled)."""
    parts = release.split(".")
    minor = int(parts[1]) + 13 if len(parts) > 1 and parts[1].isdecimal() else 26
    return f"v1.{minor}.0"


def node(name: str, pool: str, zone: str | None, rendered: str, created: str) -> Obj:
    labels = {f"node-role.kubernetes.io/{pool}": "", "kubernetes.io/hostname": name}
    if zone:
        labels[mco.ZONE_LABEL] = zone
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(
            name,
            labels=labels,
            annotations={
                mco.CURRENT: rendered,
                mco.DESIRED: rendered,
                mco.STATE: mco.DONE,
                mco.REASON: "",
                mco.DESIRED_DRAIN: f"uncordon-{rendered}",
                mco.LAST_APPLIED_DRAIN: f"uncordon-{rendered}",
            },
            creationTimestamp=created,
        ),
        "spec": {},
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": created}]
        },
    }


# NodeSystemInfo's fields a simulated kubelet reports beside its version: all of them are
# required (strict clients, the official Python client's models, refuse a node without).
NODE_SYSTEM = {
    "architecture": "amd64",
    "operatingSystem": "linux",
    "osImage": "kupgrade simulated node",
    "kernelVersion": "simulated",
    "containerRuntimeVersion": "simulated://kupgrade",
}


def node_info(name: str, kubelet: str, *, proxy: str = "", **more: str) -> dict[str, str]:
    """A node's status.nodeInfo, its ids made from its name (stable across runs)."""
    made = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.node.kupgrade.io"))
    return {
        **NODE_SYSTEM,
        "bootID": made,
        "machineID": made.replace("-", ""),
        "systemUUID": made,
        "kubeletVersion": kubelet,
        "kubeProxyVersion": proxy,
        **more,
    }


OWNER_API = {
    "ReplicaSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "Node": "v1",
}
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def pod(
    name: str,
    namespace: str,
    *,
    owner: str,
    labels: dict[str, str],
    node_name: str,
    created: str,
    owner_kind: str | None = "ReplicaSet",
) -> Obj:
    """A pod; `owner_kind` None is a bare pod (no controller), "Node" a static pod's mirror."""
    owners = (
        [
            {
                "apiVersion": OWNER_API[owner_kind],
                "kind": owner_kind,
                "name": owner,
                "controller": True,
            }
        ]
        if owner_kind is not None
        else []
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(
            name,
            namespace,
            labels=labels,
            ownerReferences=owners,
            creationTimestamp=created,
        ),
        "spec": {"nodeName": node_name},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": created}],
        },
    }


def workload_owner(
    kind: str,
    name: str,
    namespace: str,
    replicas: int,
    *,
    created: str,
    owner: str = "",
    labels: dict[str, str] | None = None,
) -> Obj:
    """A Deployment, ReplicaSet or DaemonSet whose pods carry `app: name` (k8s.io/api
    apps/v1): the spec only; its status is counted from its pods when it is read, as the
    owning controller keeps it. `owner` names the Deployment that owns a ReplicaSet."""
    labels = labels or {"app": name}
    spec: dict[str, Any] = {
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": {"containers": []}},
    }
    if kind == "DaemonSet":
        spec["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}
    else:
        spec["replicas"] = replicas
    if kind == "Deployment":
        spec["strategy"] = {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
        }
    refs = (
        [{"apiVersion": "apps/v1", "kind": "Deployment", "name": owner, "controller": True}]
        if owner
        else []
    )
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": meta(
            name,
            namespace,
            labels=labels,
            generation=1,
            ownerReferences=refs,
            creationTimestamp=created,
        ),
        "spec": spec,
    }


def pdb(name: str, namespace: str, selector: dict[str, str], budget: dict[str, Any]) -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta(name, namespace),
        "spec": {"selector": {"matchLabels": selector}, **budget},
        "status": {},
    }


def copied(obj: Obj) -> Obj:
    """A deep copy of an API object to change and compare with the original. Objects are
    JSON (that is how they are stored and served), so a msgpack round trip copies them
    exactly (a tuple comes back a list, as it would from the store), several times faster
    than copy.deepcopy (which took a third of the OLM controller's time)."""
    return msgspec.msgpack.decode(msgspec.msgpack.encode(obj))  # type: ignore[no-any-return]


def key_of(obj: Obj) -> str:
    """kind/namespace/name as `oc` names objects in messages."""
    m = obj["metadata"]
    ns = m.get("namespace")
    return f"{obj['kind'].lower()}/{ns + '/' if ns else ''}{m['name']}"


def is_ready_pod(obj: Obj) -> bool:
    if obj["metadata"].get("deletionTimestamp"):
        return False
    # A loop, not any() over a generator: a 5,000-node rehearsal asks ~1M times.
    for c in obj.get("status", {}).get("conditions") or ():  # noqa: SIM110
        if c.get("type") == "Ready" and c.get("status") == "True":
            return True
    return False


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge key by key, null removes, the rest replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def applies_nothing(existing: Obj, wanted: Obj) -> bool:
    """Applying `wanted` would change nothing the manifest sets."""
    for key in ("spec", "data"):
        if existing.get(key) != wanted.get(key):
            return False
    have = existing.get("metadata", {})
    return all(have.get(k) == v for k, v in wanted.get("metadata", {}).items())
