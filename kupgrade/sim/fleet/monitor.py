"""The fleet's skew rules, checked on every state a rehearsal passes through (SPEC G2,
G4, H2-H6, X5).

A state is what each member's components run: for a distributed-cloud cluster every
node's version (its control plane's and each worker pool's), for a plain Kubernetes
cluster every static pod's image, kubelet and kube-proxy. Each change is recorded in the
fleet's event log (reason `VersionChanged`, object `CLUSTER/COMPONENT`, message
`OLD -> NEW`; the first state as `Version` events), so every recorded state can be
rebuilt and checked again.

While a distributed-cloud cluster upgrades, its control plane runs two versions at once.
The rules compare a cluster's version with its manager's and with its pools'; a state
holds only when every pairing of the versions actually running keeps them, which is
stricter than reading either status field (the status changes only when the upgrade
ends). A pool that goes along with its cluster's upgrade is judged once it has arrived:
bmctl checked that target when the upgrade began, and the upgrade moves the control
plane before the pools by design. A pool left behind is judged at every moment.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kupgrade.cluster import gdc as g
from kupgrade.cluster.backend import Backend
from kupgrade.controllers.kube.inventory import inventory
from kupgrade.skew.fleet import Fleet, History
from kupgrade.skew.gdc import WARNINGS, pool_rule, user_rules
from kupgrade.skew.k8s import check
from kupgrade.skew.verdict import Violation

PLANE = "control-plane"


def gdc_components(api: Backend) -> dict[str, str]:
    """`node/NAME` -> `POOL=VERSION` for control-plane and worker nodes (load balancers
    are outside the rules), and `nodepool/POOL` -> the version its spec asks for."""
    out = {}
    for node in api.list("Node"):
        labels = node["metadata"].get("labels") or {}
        if "node-role.kubernetes.io/load-balancer" in labels:
            continue
        pool = PLANE if "node-role.kubernetes.io/control-plane" in labels else g.pool_of(node)
        out[f"node/{node['metadata']['name']}"] = f"{pool}={g.node_version(node)}"
    for nodepool in api.list("NodePool"):
        if g.pool_role(nodepool) == g.WORKER:
            name, spec = nodepool["metadata"]["name"], nodepool["spec"]
            out[f"nodepool/{name}"] = str(spec.get("anthosBareMetalVersion", ""))
    return out


def kube_components(api: Backend) -> dict[str, str]:
    """`COMPONENT/NODE` -> version, as the skew rules read a Kubernetes cluster."""
    found = inventory(api)
    out = {f"kube-apiserver/{a.name}": a.version for a in found.apiservers}
    out |= {f"{c}/{i.name}": i.version for c, i in found.controllers()}
    for node in found.nodes:
        if node.kubelet:
            out[f"kubelet/{node.name}"] = node.kubelet
        if node.kube_proxy:
            out[f"kube-proxy/{node.name}"] = node.kube_proxy
    return out


@dataclass
class Finding:
    """A rule broken at a recorded state: which state, which rule, which objects."""

    at: float
    cluster: str
    change: str  # the change that led to the state
    violation: Violation

    def to_json(self) -> dict[str, Any]:
        v = self.violation
        return {"at": self.at, "cluster": self.cluster, "change": self.change, "rule": v.id,
                "objects": [v.object, *v.related], "message": v.message, "fix": v.fix}  # fmt: skip


class GdcRules:
    """SPEC G2/G4 on the versions running: every (manager, user) and (cluster, pool)
    pairing of the distinct versions each runs."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.history: History = fleet.history
        self.parse = functools.lru_cache(maxsize=4096)(self.history.parse)  # few versions

    def scope(self, name: str) -> list[str]:
        """What a change to `name` can break: its own pools and its pairing with its
        manager (a user cluster), or those of every user it manages (a manager)."""
        return [name, *self.fleet.users.get(name, [])]

    def check(self, names: list[str], states: dict[str, dict[str, str]]) -> list[Violation]:
        running: dict[str, tuple[set[str], dict[str, set[str]]]] = {}

        def of(name: str) -> tuple[set[str], dict[str, set[str]]]:
            if name not in running:
                running[name] = running_versions(states[name])
            return running[name]

        out: list[Violation] = []
        for name in names:
            cluster = self.fleet.clusters[name]
            planes, pools = of(name)
            manager = cluster.managed_by
            bosses = of(manager)[0] if manager in states else set()
            for version in planes:
                at = replace(cluster, version=self.parse(version))
                for pool, versions in pools.items():
                    for pv in versions:
                        out += pool_rule(at, pool, self.parse(pv), self.history)
                for mv in bosses:
                    boss = replace(self.fleet.clusters[str(manager)], version=self.parse(mv))
                    out += user_rules(boss, at, self.history)
        return _unique(v for v in out if v.id not in WARNINGS)


def running_versions(state: dict[str, str]) -> tuple[set[str], dict[str, set[str]]]:
    """The control plane's versions, and each settled worker pool's. A pool whose nodes
    do not all run what its spec asks is on its way there with its cluster's upgrade
    (bmctl judged that target when the upgrade began, SPEC G3/G4): it is left out until
    it arrives, as the upgrade moves the control plane before the pools by design."""
    planes: set[str] = set()
    pools: dict[str, set[str]] = {}
    for key, value in state.items():
        if key.startswith("nodepool/"):
            continue
        pool, version = value.split("=", 1)
        (planes if pool == PLANE else pools.setdefault(pool, set())).add(version)
    for pool, versions in list(pools.items()):
        wanted = state.get(f"nodepool/{pool}")
        if wanted and versions != {wanted}:
            del pools[pool]
    return planes, pools


def _unique(found: Any) -> list[Violation]:
    seen: set[tuple[str, str]] = set()
    out = []
    for v in found:
        if (v.id, v.object) not in seen:
            seen.add((v.id, v.object))
            out.append(v)
    return out


class KubeRules:
    """SPEC H on one Kubernetes cluster: nothing ties two clusters together."""

    def __init__(self, policy: str) -> None:
        self.policy = policy
        self.apis: dict[str, Backend] = {}

    def scope(self, name: str) -> list[str]:
        return [name]

    def check(self, names: list[str], states: dict[str, dict[str, str]]) -> list[Violation]:
        out = []
        for name in names:
            found = check(inventory(self.apis[name]), self.policy)
            out += [replace(v, object=f"{name}/{v.object}") for v in found]
        return out


Rules = GdcRules | KubeRules
Record = Callable[[float, str, str, str], None]


class Monitor:
    """The last recorded state of every member; each change recorded, then checked."""

    def __init__(self, rules: Rules, read: Callable[[str], dict[str, str]], record: Record) -> None:
        self.rules = rules
        self.read = read
        self.record = record
        self.states: dict[str, dict[str, str]] = {}

    def load(self, names: list[str]) -> None:
        """The state as the stores hold it (a resumed run: recorded already)."""
        self.states = {name: self.read(name) for name in names}

    def check_all(self, names: list[str]) -> list[Violation]:
        """Every rule the loaded state breaks, scope by scope."""
        return _unique(
            v for name in names for v in self.rules.check(self.rules.scope(name), self.states)
        )

    def first(self, names: list[str], at: float) -> None:
        """The rehearsal's first state, recorded whole (checked before: `check_all`)."""
        self.load(names)
        for name in names:
            for component, version in sorted(self.states[name].items()):
                self.record(at, f"{name}/{component}", "Version", version)

    def observe(self, name: str, at: float) -> list[Finding]:
        """Record what changed in `name` since the last state; the rules broken now."""
        new = self.read(name)
        old = self.states.get(name, {})
        changes = []
        for component in sorted(old.keys() | new.keys()):
            before, after = old.get(component, "absent"), new.get(component, "absent")
            if before != after:
                self.record(at, f"{name}/{component}", "VersionChanged", f"{before} -> {after}")
                changes.append(f"{name}/{component} {before} -> {after}")
        if not changes:
            return []
        self.states[name] = new
        found = self.rules.check(self.rules.scope(name), self.states)
        return [Finding(at, name, "; ".join(changes), v) for v in found]
