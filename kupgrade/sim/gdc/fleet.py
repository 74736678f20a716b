"""Simulated distributed-cloud clusters as a fleet (SPEC G2-G4, X5): each cluster as the
fleet format of `kupgrade skew check` writes it, every such cluster of the kupgrade home
as one fleet, and how distributed-cloud clusters take part in a fleet rehearsal (their
state, the rules over it, the plan, and each step asked of bmctl).

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
from dataclasses import replace
from pathlib import Path
from typing import Any

from kupgrade.cluster import gdc as g
from kupgrade.cluster.backend import Backend
from kupgrade.controllers.gdc.request import request_upgrade, upgrade_record
from kupgrade.errors import InputError
from kupgrade.plan.gdc_fleet import Goal, plan_fleet
from kupgrade.plan.steps import Plan
from kupgrade.sim.fleet.monitor import unique
from kupgrade.sim.homes import cluster_names, home, opened
from kupgrade.sim.platform import FleetMember
from kupgrade.sim.store import Store
from kupgrade.skew.fleet import Fleet, History, parse_fleet
from kupgrade.skew.gdc import WARNINGS, Request, judge_request, pool_rule, user_rules
from kupgrade.skew.verdict import Violation

PLANE = "control-plane"


def fleet_entry(store: Store) -> dict[str, Any]:
    """One cluster as the fleet format of `kupgrade skew check` writes it."""
    cluster = store.list("Cluster")[0]
    notes = cluster["metadata"].get("annotations") or {}
    entry: dict[str, Any] = {
        "version": cluster["status"]["anthosBareMetalVersion"],
        "role": cluster["spec"]["type"],
        "pools": {
            p["metadata"]["name"]: p["status"]["anthosBareMetalVersion"]
            for p in store.list("NodePool")
            if g.pool_role(p) == g.WORKER
            and p["metadata"]["namespace"] == g.namespace_of(cluster["metadata"]["name"])
        },
    }
    if notes.get(g.MANAGED_BY):
        entry["managed_by"] = notes[g.MANAGED_BY]
    kept = {k: v for k, v in notes.items() if k != g.MANAGED_BY}
    if kept:
        entry["annotations"] = kept
    return entry


def sim_fleet(entries: dict[str, dict[str, Any]], history: History | None, where: Path) -> Fleet:
    """The fleet of every simulated distributed-cloud cluster, for the skew rules."""
    try:
        return parse_fleet({"clusters": entries}, str(where), history)
    except InputError as exc:
        raise InputError(
            f"the simulated clusters do not form a valid fleet: {exc.message}",
            file=str(where),
            hint="create a user cluster's management cluster first "
            "(`kupgrade cluster create ADMIN --platform gdc --role admin`)",
        ) from None


def gdc_fleet(history: History | None) -> Fleet:
    """Every simulated distributed-cloud cluster of the kupgrade home (a store that holds
    its own Cluster object), as one fleet for the skew rules."""
    entries: dict[str, dict[str, Any]] = {}
    for name in cluster_names():
        with opened(name) as (_, store, _spec):
            if g.own_clusters(store.list("Cluster")):
                entries[name] = fleet_entry(store)
    return sim_fleet(entries, history, home() / "clusters")


# --- a fleet rehearsal ---------------------------------------------------------------


def components(api: Backend) -> dict[str, str]:
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
        return unique(v for v in out if v.id not in WARNINGS)


class GdcFleetRun:
    """Distributed-cloud clusters in a fleet rehearsal: one upgrade of a cluster at a
    time (bmctl), each step judged by the skew rules of the whole fleet before it starts
    (SPEC G3, X4), as `bmctl upgrade` does."""

    one_at_a_time = True

    def __init__(self, members: dict[str, FleetMember], document: dict[str, Any]) -> None:
        self.members = members
        self.history = parse_fleet(document, "the fleet file").history
        # Management groups (a management cluster and its users): the rules of a step
        # reach no further (SPEC G2-G4), so a step is judged on its group alone.
        clusters = document.get("clusters") or {}
        self.groups: dict[str, list[str]] = {}
        for name in members:
            body = clusters.get(name) if isinstance(clusters, dict) else None
            head = body.get("managed_by") if isinstance(body, dict) else None
            self.groups.setdefault(str(head or name), []).append(name)
        self.group_of = {n: head for head, names in self.groups.items() for n in names}

    def policy(self, given: str | None) -> str:
        if given not in (None, "gdc", "auto"):
            raise InputError(
                f"policy {given!r} does not apply to a distributed-cloud fleet",
                field="--policy",
                hint="use --policy gdc",
            )
        return given or "gdc"

    def fleet(self) -> Fleet:
        entries = {n: fleet_entry(m.store) for n, m in self.members.items()}
        return sim_fleet(entries, self.history, Path("fleet"))

    def group(self, name: str) -> Fleet:
        """The management group of cluster `name` (its manager and the manager's users)."""
        head = self.group_of.get(name, name)
        names = sorted({head, *self.groups.get(head, [name])} & set(self.members))
        entries = {n: fleet_entry(self.members[n].store) for n in names}
        return sim_fleet(entries, self.history, Path("fleet"))

    def rules(self, policy: str) -> GdcRules:
        return GdcRules(self.fleet())

    def components(self, name: str) -> dict[str, str]:
        return components(self.members[name].api)

    def plan(self, target: str, available: list[str], policy: str) -> Plan:
        return plan_fleet(self.fleet(), Goal.of(target, available, self.history))

    def start(self, name: str, step: dict[str, Any], policy: str) -> dict[str, Any]:
        made = request_upgrade(
            self.members[name].api,
            step["to"],
            bmctl=step["to"],
            pool=step.get("pool"),
            leave_pools=step.get("leavePools") or [],
        )
        return {"serial": made.serial}

    def outcome(self, name: str, ticket: dict[str, Any]) -> tuple[str, str]:
        record = upgrade_record(self.members[name].api)
        if record is None or record.serial != ticket.get("serial"):
            return "running", ""
        if record.failed:
            return "failed", record.failed
        return ("done", "") if record.completed else ("running", "")

    def busy(self, name: str) -> str | None:
        record = upgrade_record(self.members[name].api)
        return record.target if record is not None and record.running else None

    def refusal(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """What `bmctl upgrade` checks before it changes anything (SPEC G3, X4)."""
        to = self.history.parse(record["to"])
        request = Request(
            record["cluster"],
            to,
            pool=record.get("pool"),
            bmctl=to,
            leave_pools=tuple(record.get("leavePools") or ()),
        )
        verdict = judge_request(self.group(record["cluster"]), request)
        if not verdict.rules:
            return None
        first = verdict.findings[0]
        return {
            "why": f"{', '.join(verdict.rules)}: {first.message}; {first.fix}",
            "objects": [first.object, *first.related],
            "rules": list(verdict.rules),
        }

    def versions(self, name: str) -> str:
        entry = fleet_entry(self.members[name].store)
        pools = ", ".join(f"{p} {v}" for p, v in sorted(entry["pools"].items()))
        return f"{entry['version']}" + (f"; pools {pools}" if pools else "")

    def role(self, name: str) -> tuple[str, str]:
        entry = fleet_entry(self.members[name].store)
        return entry["role"], entry.get("managed_by", "")
