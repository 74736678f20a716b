"""A simulated OpenShift cluster, created settled at the profile's release: every operator
Available at that version, every node Done with the pool's rendered config, the
release's manifests applied, a Completed history entry — what a freshly installed
cluster looks like."""

from __future__ import annotations

import uuid
from pathlib import Path

from kupgrade.cluster import mco
from kupgrade.cluster import objects as o
from kupgrade.controllers.nodes.controller import NodeController
from kupgrade.release.payload import LoadOptions, load_payload
from kupgrade.release.sources import open_payload
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.openshift.olm import start_with
from kupgrade.sim.openshift.releases import model_image, rendered_config
from kupgrade.sim.profile import Machine, Profile, Spec, node_names, operators_of
from kupgrade.sim.store import Store
from kupgrade.sim.workloads import PlatformPods, add_workloads, schedule_changes
from kupgrade.versions.times import parse_rfc3339, rfc3339

# A fresh cluster's own pods (openshift/machine-config-operator, cluster-dns-operator,
# cluster-network-operator, cluster-monitoring-operator manifests): the node DaemonSets
# and the control plane's static pods on the masters.
PLATFORM_PODS = PlatformPods(
    daemonsets=(
        ("openshift-machine-config-operator", "machine-config-daemon"),
        ("openshift-dns", "dns-default"),
        ("openshift-multus", "multus"),
        ("openshift-ovn-kubernetes", "ovnkube-node"),
        ("openshift-monitoring", "node-exporter"),
    ),
    static=(
        ("openshift-etcd", "etcd"),
        ("openshift-kube-apiserver", "kube-apiserver"),
        ("openshift-kube-controller-manager", "kube-controller-manager"),
        ("openshift-kube-scheduler", "openshift-kube-scheduler"),
    ),
    control_plane=lambda pool: pool.name == "master",
)


def populate_openshift(root: Path, store: Store, name: str, profile: Profile) -> None:
    """The cluster settled at the profile's release, in `store` (its home is `root`)."""
    spec = profile.spec
    now = parse_rfc3339(spec.start)
    stamp = rfc3339(now)
    store.set_meta("name", name)
    store.set_meta("now", now)
    store.set_meta("seed", spec.seed)
    image = model_image(spec, spec.version, root)
    payload = load_payload(
        open_payload(str(root / "releases" / spec.version)).files,
        LoadOptions(release_image=image),
    )
    release = {**payload.release_json(), "image": image}
    cv = o.cluster_version(
        str(uuid.UUID(int=spec.seed)), spec.channel, spec.upstream, release, stamp
    )
    cv["status"]["history"] = [
        {
            "state": "Completed",
            "version": spec.version,
            "image": image,
            "startedTime": stamp,
            "completionTime": stamp,
            "verified": False,
            "acceptedRisks": "",
        }
    ]
    cv["status"]["versionHash"] = payload.version_hash
    cv["status"]["conditions"] = [
        {
            "type": "Available",
            "status": "True",
            "message": f"Done applying {spec.version}",
            "lastTransitionTime": stamp,
        },
        {"type": "Failing", "status": "False", "lastTransitionTime": stamp},
        {
            "type": "Progressing",
            "status": "False",
            "message": f"Cluster version is {spec.version}",
            "lastTransitionTime": stamp,
        },
        {"type": "RetrievedUpdates", "status": "False", "lastTransitionTime": stamp},
    ]
    store.put(cv)
    for manifest in payload.included:
        obj = {k: v for k, v in manifest.obj.items() if k != "status"}
        obj["metadata"] = {**obj["metadata"], "creationTimestamp": stamp}
        if obj["kind"] != "ClusterOperator":
            store.put(obj)
    profiles = {
        m.obj["metadata"]["name"]: m.obj["metadata"].get("annotations") or {}
        for m in payload.included
        if m.obj["kind"] == "ClusterOperator"
    }
    for op in operators_of(spec):
        store.put(o.cluster_operator(op.name, spec.version, stamp, profiles.get(op.name)))
        store.set_meta(f"op:{op.name}", {"target": spec.version, "rolled": True, "reported": True})
    _nodes(store, spec, stamp, now)
    add_workloads(store, spec, stamp, PLATFORM_PODS)
    schedule_changes(store, spec, now)
    store.set_meta(
        "state:version",
        {
            "image": image,
            "version": spec.version,
            "completed": True,
            "release": release,
            "versionHash": payload.version_hash,
            "mode": "Reconciling",
            "done": payload.total,
            "total": payload.total,
        },
    )
    _settle_pools(store)
    if spec.olm is not None:  # the first `controller run` installs them (SPEC F)
        start_with(SimCluster(store), spec.olm)


def _settle_pools(store: Store) -> None:
    """Pool status as the node controller reports it for the settled nodes."""

    NodeController(SimCluster(store)).sync()


def _nodes(store: Store, spec: Spec, stamp: str, now: float) -> None:
    for pool in spec.pools:
        rendered = rendered_config(pool.name, spec.version)
        store.put(o.machine_config_pool(pool.name, rendered, pool.max_unavailable, stamp))
        store.put(o.machine_config(rendered, spec.version, stamp))
        store.set_meta(f"release-of:{rendered}", spec.version)
        store.get("MachineConfigPool", pool.name)["metadata"].setdefault("annotations", {})[  # type: ignore[index]
            mco.DRAIN_FLAGS
        ] = " ".join(pool.drain.args())
        if pool.paused:
            store.get("MachineConfigPool", pool.name)["spec"]["paused"] = True  # type: ignore[index]
        machines = pool.machines or [Machine(name) for name in node_names(pool)]
        for i, machine in enumerate(machines):
            zone = machine.zone or (pool.zones[i % len(pool.zones)] if pool.zones else None)
            created = machine.created or (
                pool.created[i] if i < len(pool.created) else rfc3339(now - 86400 + i)
            )
            made = o.node(machine.name, pool.name, zone, rendered, created)
            made["status"]["nodeInfo"] = o.node_info(
                machine.name, o.openshift_kubelet(spec.version)
            )
            store.put(made)
