"""Plain Kubernetes clusters in a fleet rehearsal (SPEC H2-H7, X5): their state is every
static pod's image, kubelet and kube-proxy; the rules are each cluster's own (nothing
ties two clusters together); a cluster's steps may overlap (its pools roll side by side).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import msgspec

from kupgrade.cluster.backend import Backend
from kupgrade.controllers.kube.inventory import inventory
from kupgrade.controllers.kube.record import upgrade_record
from kupgrade.controllers.kube.request import current, in_progress, request_step
from kupgrade.errors import InputError
from kupgrade.plan.kube_fleet import plan_kube_fleet
from kupgrade.plan.steps import Plan
from kupgrade.sim.platform import FleetMember
from kupgrade.skew.inventory import kube_field
from kupgrade.skew.k8s import check
from kupgrade.skew.verdict import Violation


def components(api: Backend) -> dict[str, str]:
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


class KubeFleetRun:
    """Plain Kubernetes clusters in a fleet rehearsal; steps of one cluster may overlap."""

    one_at_a_time = False

    def __init__(self, members: dict[str, FleetMember], platform: str) -> None:
        self.members = members
        self.platform = platform  # what the fleet view shows as each member's role

    def policy(self, given: str | None) -> str:
        if given == "gdc":
            raise InputError("policy gdc does not apply to Kubernetes clusters", field="--policy")
        return given or "auto"

    def rules(self, policy: str) -> KubeRules:
        rules = KubeRules(policy)
        rules.apis = {n: m.api for n, m in self.members.items()}
        return rules

    def components(self, name: str) -> dict[str, str]:
        return components(self.members[name].api)

    def plan(self, target: str, available: list[str], policy: str) -> Plan:
        clusters: dict[str, Any] = {n: current(m.api) for n, m in self.members.items()}
        offered = [kube_field(v, "--available") for v in [*available, target]]
        return plan_kube_fleet(clusters, kube_field(target, "--to"), offered, policy)

    def start(self, name: str, step: dict[str, Any], policy: str) -> dict[str, Any]:
        member = self.members[name]
        obj = "control-plane" if step["kind"] == "control-plane" else f"nodepool/{step.get('pool')}"
        tool = member.spec.kube.kubeadm if member.spec.kube else None
        request_step(
            member.api,
            {"id": step["id"], "object": obj, "from": step["from"], "to": step["to"], "after": []},
            policy,
            msgspec.to_builtins(tool) if tool else None,
        )
        return {"id": step["id"]}

    def outcome(self, name: str, ticket: dict[str, Any]) -> tuple[str, str]:
        record = upgrade_record(self.members[name].api)
        entry = (record.parallel or {}).get(str(ticket.get("id"))) if record else None
        if entry is None:
            return "running", ""
        if entry.done is not None:
            return "done", ""
        held = entry.drain.held if entry.drain else None
        return "running", entry.blocked or (f"drain held: {held}" if held else "")

    def busy(self, name: str) -> str | None:
        running = in_progress(self.members[name].api)
        return None if running is None else running.target or "a fleet's steps"

    def refusal(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """The plan was checked state by state; a step is not judged again on its own."""
        return None

    def versions(self, name: str) -> str:
        found = components(self.members[name].api)
        planes = sorted({v for k, v in found.items() if k.startswith("kube-apiserver/")})
        kubelets = sorted({v for k, v in found.items() if k.startswith("kubelet/")})
        return f"control plane {', '.join(planes)}; kubelets {', '.join(kubelets)}"

    def role(self, name: str) -> tuple[str, str]:
        return self.platform, ""
