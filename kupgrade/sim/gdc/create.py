"""Simulated distributed-cloud (bare metal) clusters, created settled at their version
(SPEC G1, G6).

A cluster's store holds its Cluster and NodePool objects in namespace `cluster-NAME`
(for a user cluster they would live in its admin cluster; each simulated cluster keeps
its own so that it can be created, upgraded and deleted on its own), its nodes labelled
with their pool, the components of SPEC G6 as Deployments, and the profile's workloads.
"""

from __future__ import annotations

from typing import Any

from kupgrade.cluster import gdc as g
from kupgrade.cluster import objects as o
from kupgrade.controllers.gdc.rollout import pool_status
from kupgrade.sim.profile import Gdc, Machine, Profile, components_of, node_names, pool_role
from kupgrade.sim.store import Store
from kupgrade.sim.workloads import PlatformPods, add_workloads, schedule_changes
from kupgrade.versions.times import parse_rfc3339, rfc3339

PROFILE_POOL = "kupgrade.io/pool"  # the pool's name in the profile (workloads name it)
ROLE_LABELS = {g.CONTROL_PLANE: "control-plane", g.LOAD_BALANCER: "load-balancer"}

# A fresh bare-metal cluster's own pods: Dataplane V2's agent and the log forwarder on
# every node, the control plane's static pods on the control-plane nodes.
PLATFORM_PODS = PlatformPods(
    daemonsets=(("kube-system", "anetd"), ("kube-system", "stackdriver-log-forwarder")),
    static=(
        ("kube-system", "etcd"),
        ("kube-system", "kube-apiserver"),
        ("kube-system", "kube-controller-manager"),
        ("kube-system", "kube-scheduler"),
    ),
    control_plane=lambda pool: pool_role(pool) == g.CONTROL_PLANE,
)


def populate_gdc(store: Store, name: str, profile: Profile) -> None:
    spec = profile.spec
    gdc = spec.gdc or Gdc()
    now = parse_rfc3339(spec.start)
    stamp = rfc3339(now)
    store.set_meta("name", name)
    store.set_meta("now", now)
    store.set_meta("seed", spec.seed)
    roles = [pool_role(p) for p in spec.pools]
    store.put(
        g.cluster_object(
            name,
            gdc.role,
            spec.version,
            stamp,
            managed_by=gdc.managed_by,
            annotations=gdc.annotations,
            load_balancer_pool=g.LOAD_BALANCER in roles,
            load_balancer_mode=gdc.load_balancer,
            concurrent_node_pools=gdc.concurrent_node_pools,
        )
    )
    for pool, role in zip(spec.pools, roles, strict=True):
        pool_name = g.pool_name(name, role, pool.name)
        version = pool.version or spec.version
        upgrade = {"concurrentNodes": pool.concurrent_nodes}
        if pool.minimum_available:
            upgrade["minimumAvailable"] = pool.minimum_available
        nodes = []
        machines = pool.machines or [Machine(n) for n in node_names(pool)]
        for i, machine in enumerate(machines):
            zone = machine.zone or (pool.zones[i % len(pool.zones)] if pool.zones else None)
            created = machine.created or (
                pool.created[i] if i < len(pool.created) else rfc3339(now - 86400 + i)
            )
            node = _node(
                machine.name,
                pool.name,
                pool_name,
                role,
                zone=zone,
                version=version,
                created=created,
            )
            store.put(node)
            nodes.append(node)
        nodepool = g.node_pool(name, pool_name, role, version, created=stamp, upgrade=upgrade)
        nodepool["spec"]["nodes"] = [{"address": n["metadata"]["name"]} for n in nodes]
        nodepool["status"] = {**pool_status(nodes, None), "conditions": []}
        store.put(nodepool)
    for component in components_of(gdc):
        store.put(g.component(component.name, component.stage, spec.version, stamp))
    add_workloads(store, spec, stamp, PLATFORM_PODS)
    schedule_changes(store, spec, now)


def _node(
    name: str,
    profile_pool: str,
    pool: str,
    role: str,
    *,
    zone: str | None,
    version: str,
    created: str,
) -> dict[str, Any]:
    labels = {g.POOL_LABEL: pool, PROFILE_POOL: profile_pool, "kubernetes.io/hostname": name}
    if role in ROLE_LABELS:
        labels[f"node-role.kubernetes.io/{ROLE_LABELS[role]}"] = ""
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": o.meta(
            name, labels=labels, annotations={g.NODE_VERSION: version}, creationTimestamp=created
        ),
        "spec": {},
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": created}],
            "nodeInfo": o.node_info(name, g.kubelet_version(version)),
        },
    }
