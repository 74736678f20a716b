"""A simulated plain Kubernetes cluster (`--platform kubernetes`), as kubeadm leaves it
(SPEC H1-H6): control-plane nodes with kube-apiserver, kube-controller-manager,
kube-scheduler and etcd as static pods behind one load-balanced endpoint, a kubelet and
kube-proxy on every node, and the profile's workloads with their budgets."""

from __future__ import annotations

from kupgrade.cluster.kubeadm import (
    CONTROL_PLANE_ROLE,
    STATIC,
    kube_node,
    kubeadm_config,
    proxy_pod,
    static_pod,
    v,
)
from kupgrade.cluster.objects import workload_owner
from kupgrade.sim.profile import Kube, Machine, Profile, node_names
from kupgrade.sim.store import Store
from kupgrade.sim.workloads import add_workloads, schedule_changes
from kupgrade.versions.times import parse_rfc3339, rfc3339

ENDPOINT_PORT = 6443


def populate_kube(store: Store, name: str, profile: Profile) -> None:
    spec = profile.spec
    now = parse_rfc3339(spec.start)
    stamp = rfc3339(now)
    store.set_meta("name", name)
    store.set_meta("now", now)
    store.set_meta("seed", spec.seed)
    version = spec.version.lstrip("v")
    shape = spec.kube or Kube()
    store.put(kubeadm_config(version, f"{name}-api.cluster.local:{ENDPOINT_PORT}"))
    for pool in spec.pools:
        role = CONTROL_PLANE_ROLE if CONTROL_PLANE_ROLE in (pool.name, pool.role) else "worker"
        at = (pool.version or version).lstrip("v")
        machines = pool.machines or [Machine(n) for n in node_names(pool)]
        for i, machine in enumerate(machines):
            zone = machine.zone or (pool.zones[i % len(pool.zones)] if pool.zones else None)
            node = kube_node(machine.name, pool.name, role, at, created=stamp, zone=zone)
            proxy = shape.kube_proxy.get(machine.name, at).lstrip("v")
            node["status"]["nodeInfo"]["kubeProxyVersion"] = v(proxy)
            store.put(node)
            store.put(proxy_pod(machine.name, proxy, stamp))
            if role == CONTROL_PLANE_ROLE:
                runs = shape.static_pods.get(machine.name) or dict.fromkeys(STATIC, version)
                for component, at_version in {**runs, "etcd": version}.items():
                    store.put(static_pod(component, machine.name, at_version.lstrip("v"), stamp))
    nodes = sum(len(p.machines) or len(node_names(p)) for p in spec.pools)
    store.put(
        workload_owner(
            "DaemonSet",
            "kube-proxy",
            "kube-system",
            nodes,
            created=stamp,
            labels={"k8s-app": "kube-proxy"},
        )
    )
    add_workloads(store, spec, stamp)
    schedule_changes(store, spec, now)
