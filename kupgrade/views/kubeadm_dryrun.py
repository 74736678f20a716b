"""`kupgrade upgrade --to V --dry-run` on a plain Kubernetes cluster: the plan the request
would record (SPEC H6, H7) and, step by step, what kubeadm would change, as `kubeadm
upgrade apply --dry-run` (then `kubeadm upgrade node` on the other nodes) lists it;
nothing is written.

Followed: kubernetes/kubernetes cmd/kubeadm/app/cmd/upgrade/apply.go and its phases
(cmd/kubeadm/app/cmd/phases/upgrade/apply: preflight with EnforceVersionPolicies,
control-plane with phases/upgrade/staticpods.go writing the kube-apiserver,
kube-controller-manager, kube-scheduler and etcd manifests, upload-config writing
kube-system/kubeadm-config and kube-system/kubelet-config, kubelet-config writing
/var/lib/kubelet/config.yaml, addon writing the CoreDNS Deployment and the kube-proxy
DaemonSet), and phases/upgrade/compute.go for the etcd and CoreDNS versions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kupgrade.cluster.backend import Backend, Obj
from kupgrade.cluster.kubeadm import REGISTRY, STATIC, is_control_plane, node_pool, v
from kupgrade.controllers.kube.request import planned_upgrade
from kupgrade.errors import VersionError
from kupgrade.outputs.tabwriter import table
from kupgrade.plan.kube import CONTROL_PLANE
from kupgrade.plan.steps import PlanStep
from kupgrade.skew.kubeadm import FIXES, Upgrade, enforce, kubelet_skew_of
from kupgrade.versions import parse_kube
from kupgrade.views.kubeadm_compute import (
    coredns_for,
    dns_image,
    etcd_for,
    image_tag,
    kubelet_versions,
)

MANIFESTS = "/etc/kubernetes/manifests"
KUBELET_FILE = "/var/lib/kubelet/config.yaml"
KUBELET_GV = "kubelet.config.k8s.io/v1beta1"
STEP_KUBEADM = "each control-plane step's target (--kubeadm names another)"
KUBELET_WAS = "kind: KubeletConfiguration"


@dataclass(frozen=True)
class DryRunAsk:
    """What `upgrade --to V --dry-run` was asked: the target and kubeadm's flags."""

    to: str
    available: tuple[str, ...] = ()
    policy: str = "auto"
    kubeadm: str | None = None
    force: bool = False
    allow_experimental: bool = False
    allow_rcs: bool = False


@dataclass(frozen=True)
class Change:
    step: str
    kind: str
    name: str
    node: str
    current: str
    target: str

    def to_json(self) -> dict[str, str]:
        return {
            "step": self.step,
            "kind": self.kind,
            "name": self.name,
            "node": self.node,
            "current": self.current,
            "target": self.target,
        }


@dataclass
class DryRun:
    """The steps, the changes in order, kubeadm's findings, and where it would stop."""

    target: str
    cluster: str
    steps: list[PlanStep]
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    blocked: str | None = None
    kubeadm: str | None = None  # the binary named with --kubeadm (else each step's own)

    def to_json(self) -> dict[str, Any]:
        return {
            "dryRun": True,
            "target": self.target,
            "clusterVersion": self.cluster,
            "kubeadmVersion": self.kubeadm,
            "steps": [s.to_json() for s in self.steps],
            "changes": [c.to_json() for c in self.changes],
            "notes": self.notes,
            "blocked": self.blocked,
        }

    def lines(self) -> list[str]:
        out = [
            f'[upgrade/version] You have chosen to change the cluster version to "{self.target}"',
            f"[upgrade/versions] Cluster version: {self.cluster}",
            f"[upgrade/versions] kubeadm version: {self.kubeadm or STEP_KUBEADM}",
        ]
        steps = ", ".join(f"{s.id} {s.object} {v(s.frm)} -> {v(s.to)}" for s in self.steps)
        out.append(f"[dryrun] The upgrade would be carried out in these steps: {steps}")
        out += [f"[dryrun] {n}" for n in self.notes]
        if self.changes:
            header = ("STEP", "KIND", "NAME", "NODE", "CURRENT", "TARGET")
            rows = [
                (c.step, c.kind, c.name, c.node or "-", c.current, c.target) for c in self.changes
            ]
            out += ["", *table([header, *rows], padding=3), ""]
        if self.blocked:
            out.append(f"[dryrun] The upgrade would stop here: {self.blocked}")
        else:
            out.append("[upgrade/successful] Finished dryrunning successfully!")
        out.append("[dryrun] Nothing was changed.")
        return out


class _State:
    """The cluster as the dry-run walks it: images and versions, changed step by step."""

    def __init__(self, api: Backend) -> None:
        self.nodes = sorted(api.list("Node"), key=lambda n: n["metadata"]["name"])
        self.static: dict[tuple[str, str], str] = {}
        for pod in api.list("Pod"):
            labels = pod["metadata"].get("labels") or {}
            component = labels.get("component")
            if labels.get("tier") == "control-plane" and component in (*STATIC, "etcd"):
                self.static[(component, pod["spec"].get("nodeName", ""))] = _image(pod)
        self.kubelets = {n: vs for vs, names in kubelet_versions(api).items() for n in names}
        self.proxy = _proxy_image(api)
        self.dns = dns_image(api) or "-"
        self.configs = {
            name: api.get("ConfigMap", name, "kube-system") is not None
            for name in ("kubeadm-config", "kubelet-config")
        }


def _image(pod: Obj) -> str:
    return str(((pod.get("spec") or {}).get("containers") or [{}])[0].get("image", ""))


def _proxy_image(api: Backend) -> str:
    """The kube-proxy DaemonSet's image, or its pods' where the DaemonSet names none."""
    ds = api.get("DaemonSet", "kube-proxy", "kube-system")
    containers = (((ds or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
    named = [str(c.get("image", "")) for c in containers.get("containers") or []]
    if named:
        return named[0]
    pods = {
        _image(p)
        for p in api.list("Pod")
        if (p["metadata"].get("labels") or {}).get("k8s-app") == "kube-proxy"
    }
    return ", ".join(sorted(pods)) or "-"


def _newer(now: str, new: str) -> bool:
    """staticpods.go: an equal manifest is skipped, an etcd not newer too."""
    if now == new:
        return False
    try:
        return parse_kube(image_tag(new)) > parse_kube(image_tag(now))
    except VersionError:
        return True


def _retag(image: str, tag: str, name: str) -> str:
    base = image.rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else ""
    return f"{base or f'{REGISTRY}/{name}'}:{tag}"


def dry_run(api: Backend, ask: DryRunAsk) -> DryRun:
    """The plan `upgrade --to` would record, each of its steps' changes, and the first
    step kubeadm's version policies would stop."""
    to, found, plan = planned_upgrade(api, ask.to, list(ask.available), ask.policy)
    state = _State(api)
    out = DryRun(v(str(to)), v(str(found.control_plane)), plan.steps)
    out.kubeadm = v(ask.kubeadm) if ask.kubeadm else None
    for step in plan.steps:
        if step.object == CONTROL_PLANE:
            if not _control_plane(out, state, step, ask):
                break
        else:
            pool = step.object.removeprefix("nodepool/")
            names = [n for n in state.nodes if node_pool(n) == pool and not is_control_plane(n)]
            _kubelets(out, state, step, names)
    return out


def _control_plane(out: DryRun, state: _State, step: PlanStep, ask: DryRunAsk) -> bool:
    """`kubeadm upgrade apply` then `kubeadm upgrade node` on the other control-plane
    nodes: False when kubeadm's version policies stop it (the controller's rule: P10 and,
    with --force, every skippable finding pass)."""
    target = v(step.to)
    kubeadm = v(ask.kubeadm or step.to)
    found = enforce(
        Upgrade(
            cluster=v(step.frm),
            kubelets=[v(k) for k in state.kubelets.values()],
            kubeadm=kubeadm,
            new=target,
            kubelet_skew=kubelet_skew_of(parse_kube(kubeadm)),
            allow_experimental=ask.allow_experimental,
            allow_rcs=ask.allow_rcs,
        )
    )
    forced = [f for f in found.skippable if ask.force or f.id == "P10"]
    stops = [*found.mandatory, *(f for f in found.skippable if f not in forced)]
    if stops:
        first = stops[0]
        out.blocked = f"{step.id}: kubeadm {first.id}: {first.message}; {FIXES.get(first.id, '')}"
        return False
    for f in forced:
        out.notes.append(f"{step.id}: kubeadm {f.id} passed with --force: {f.message}")
    planes = [n["metadata"]["name"] for n in state.nodes if is_control_plane(n)]
    etcd = etcd_for(target)
    for node in planes:
        for component in (*STATIC, "etcd"):
            now = state.static.get((component, node))
            if now is None:
                continue
            tag = etcd if component == "etcd" else target
            new = _retag(now, tag, component)
            if not _newer(now, new):
                continue  # kubeadm skips a manifest that is equal, and never downgrades etcd
            out.changes.append(
                Change(step.id, "StaticPod", f"{MANIFESTS}/{component}.yaml", node, now, new)
            )
            state.static[(component, node)] = new
    config = "kubernetesVersion: "
    was = "-" if not state.configs["kubeadm-config"] else config + v(step.frm)
    out.changes.append(
        Change(step.id, "ConfigMap", "kube-system/kubeadm-config", "", was, config + target)
    )
    had = KUBELET_WAS if state.configs["kubelet-config"] else "-"
    out.changes.append(
        Change(
            step.id,
            "ConfigMap",
            "kube-system/kubelet-config",
            "",
            had,
            f"{KUBELET_GV} for {target}",
        )
    )
    state.configs = dict.fromkeys(state.configs, True)
    dns = _retag(state.dns, coredns_for(kubeadm), "coredns/coredns")
    if dns != state.dns:
        out.changes.append(Change(step.id, "Deployment", "kube-system/coredns", "", state.dns, dns))
    state.dns = dns
    proxy = _retag(state.proxy.split(", ")[0], target, "kube-proxy")
    if proxy != state.proxy:
        out.changes.append(
            Change(step.id, "DaemonSet", "kube-system/kube-proxy", "", state.proxy, proxy)
        )
    state.proxy = proxy
    names = [n for n in state.nodes if is_control_plane(n)]
    _kubelets(out, state, step, names)
    return True


def _kubelets(out: DryRun, state: _State, step: PlanStep, nodes: list[Obj]) -> None:
    """Each node drained, its kubelet config rewritten by kubeadm (`upgrade apply` or
    `upgrade node`), its kubelet package upgraded and restarted."""
    target = v(step.to)
    for node in nodes:
        name = node["metadata"]["name"]
        was = state.kubelets.get(name, "")
        if was and parse_kube(was) >= parse_kube(target):
            continue
        out.changes.append(
            Change(step.id, "File", KUBELET_FILE, name, KUBELET_WAS, f"{KUBELET_GV} for {target}")
        )
        out.changes.append(Change(step.id, "Kubelet", "kubelet", name, was or "-", target))
        state.kubelets[name] = target
