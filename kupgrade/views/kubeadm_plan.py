"""`kubeadm upgrade plan`'s view of a plain Kubernetes cluster: the UpgradePlan document
(output.kubeadm.k8s.io/v1alpha3, what `kubeadm upgrade plan -o json` prints) made from the
upgrades kubeadm computed, and the text kubeadm prints for it.

Ported from kubernetes/kubernetes cmd/kubeadm/app/cmd/upgrade/plan.go (genUpgradePlan,
genAvailableUpgrade, upgradePlanTextPrinter); the text is kubeadm's byte for byte, tables
written by Go's text/tabwriter (minwidth 10, padding 3), because users compare it with
the real tool's and search for its sentences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kupgrade.errors import InputError, VersionError
from kupgrade.outputs.tabwriter import tabwrite
from kupgrade.versions import parse_kube

Doc = dict[str, Any]
API_VERSION = "output.kubeadm.k8s.io/v1alpha3"
KUBELET, KUBEADM = "kubelet", "kubeadm"
APISERVER, MANAGER, SCHEDULER = "kube-apiserver", "kube-controller-manager", "kube-scheduler"
PROXY, COREDNS, ETCD = "kube-proxy", "CoreDNS", "etcd"
SEPARATOR = "_____________________________________________________________________\n\n"
MANUAL = (
    "Components that must be upgraded manually after you have upgraded the control plane "
    "with 'kubeadm upgrade apply':\n"
)
CONFIGS_INTRO = (
    "\nThe table below shows the current state of component configs as understood by this "
    "version of kubeadm.\n"
    'Configs that have a "yes" mark in the "MANUAL UPGRADE REQUIRED" column require manual '
    "config upgrade or\n"
    "resetting to kubeadm defaults before a successful upgrade can be performed. The version "
    "to manually\n"
    'upgrade to is denoted in the "PREFERRED VERSION" column.\n\n'
)


@dataclass
class ClusterState:
    """compute.go ClusterState: the versions before an upgrade (per-node maps keyed by
    version, nodes in the order the API lists them) or after it (the single versions)."""

    kube_version: str = ""
    dns_version: str = ""
    kubeadm_version: str = ""
    etcd_version: str = ""
    apiservers: dict[str, list[str]] = field(default_factory=dict)
    controller_managers: dict[str, list[str]] = field(default_factory=dict)
    schedulers: dict[str, list[str]] = field(default_factory=dict)
    etcds: dict[str, list[str]] = field(default_factory=dict)
    kubelets: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Upgrade:
    """compute.go Upgrade: one upgrade kubeadm offers ("version in the v1.30 series",
    "stable version", "release candidate version", "experimental version")."""

    description: str
    before: ClusterState
    after: ClusterState

    def can_upgrade_kubelets(self) -> bool:
        """compute.go CanUpgradeKubelets: several kubelet versions, or one that is not
        the target; nothing when the kubelets are unknown."""
        if len(self.before.kubelets) > 1:
            return True
        if not self.before.kubelets:
            return False
        return self.after.kube_version not in self.before.kubelets


@dataclass(frozen=True)
class ConfigVersion:
    """output ComponentConfigVersionState: a component config group as kubeadm reads it."""

    group: str
    current: str
    preferred: str
    manual_upgrade_required: bool = False

    def to_json(self) -> Doc:
        return {
            "group": self.group,
            "currentVersion": self.current,
            "preferredVersion": self.preferred,
            "manualUpgradeRequired": self.manual_upgrade_required,
        }


def _component(name: str, current: str, new: str, node: str = "") -> Doc:
    """newComponentUpgradePlan; nodeName is omitempty in the API."""
    out: Doc = {"name": name, "currentVersion": current, "newVersion": new}
    if node:
        out["nodeName"] = node
    return out


def _per_node(name: str, versions: dict[str, list[str]], new: str) -> list[Doc]:
    """Versions in sort.Strings order (byte order), each version's nodes as listed."""
    return [_component(name, old, new, n) for old in sorted(versions) for n in versions[old]]


def available_upgrade(up: Upgrade) -> Doc:
    """plan.go genAvailableUpgrade: kubelets (only when one can be upgraded), the static
    pods per node, kube-proxy, CoreDNS and kubeadm when either side is known, etcd per
    node (none with an external etcd)."""
    before, after = up.before, up.after
    components: list[Doc] = []
    if up.can_upgrade_kubelets():
        components += _per_node(KUBELET, before.kubelets, after.kube_version)
    components += _per_node(APISERVER, before.apiservers, after.kube_version)
    components += _per_node(MANAGER, before.controller_managers, after.kube_version)
    components += _per_node(SCHEDULER, before.schedulers, after.kube_version)
    components.append(_component(PROXY, before.kube_version, after.kube_version))
    if before.dns_version or after.dns_version:
        components.append(_component(COREDNS, before.dns_version, after.dns_version))
    if before.kubeadm_version or after.kubeadm_version:
        components.append(_component(KUBEADM, before.kubeadm_version, after.kubeadm_version))
    components += _per_node(ETCD, before.etcds, after.etcd_version)
    return {"description": up.description, "components": components}


def upgrade_plan(upgrades: list[Upgrade], configs: list[ConfigVersion]) -> Doc:
    """plan.go genUpgradePlan: the UpgradePlan document `-o json` prints."""
    return {
        "kind": "UpgradePlan",
        "apiVersion": API_VERSION,
        "availableUpgrades": [available_upgrade(u) for u in upgrades],
        "configVersions": [c.to_json() for c in configs],
    }


def _table(rows: list[list[str]]) -> str:
    """tabwriter.NewWriter(w, 10, 4, 3, ' ', 0), flushed."""
    return tabwrite("".join("\t".join(r) + "\n" for r in rows), minwidth=10, padding=3)


def _unstable_flag(kube_version: str) -> str:
    try:
        pre = parse_kube(kube_version).pre
    except VersionError:
        raise InputError(
            f"Unable to parse normalized version {kube_version!r} as a semantic version",
            field="UpgradePlan",
        ) from None
    if not pre:
        return ""
    if ".".join(pre).startswith("rc"):
        return " --allow-release-candidate-upgrades"
    return " --allow-experimental-upgrades"


def render_available(upgrade: Doc) -> str:
    """upgradePlanTextPrinter.printAvailableUpgrade: the kubelets to upgrade by hand, the
    control plane's table, the command, and a note when kubeadm itself must be updated."""
    components: list[Doc] = upgrade.get("components") or []
    kube_version = before_kubeadm = after_kubeadm = ""
    for c in components:
        if c["name"] == APISERVER:
            kube_version = c["newVersion"]
        if c["name"] == KUBEADM:
            before_kubeadm, after_kubeadm = c["currentVersion"], c["newVersion"]
    flag = _unstable_flag(kube_version)
    header = ["COMPONENT", "NODE", "CURRENT", "TARGET"]

    def row(c: Doc) -> list[str]:
        return [c["name"], c.get("nodeName", ""), c["currentVersion"], c["newVersion"]]

    out = [MANUAL, _table([header, *(row(c) for c in components if c["name"] == KUBELET)])]
    out += ["\n", f"Upgrade to the latest {upgrade['description']}:\n", "\n"]
    rest = [row(c) for c in components if c["name"] not in (KUBELET, KUBEADM)]
    out += [_table([header, *rest]), "\n"]
    out += ["You can now apply the upgrade by executing the following command:\n", "\n"]
    out += [f"\tkubeadm upgrade apply {kube_version}{flag}\n", "\n"]
    if before_kubeadm != after_kubeadm:
        out.append(
            f"Note: Before you can perform this upgrade, you have to update kubeadm to "
            f"{after_kubeadm}.\n\n"
        )
    out.append(SEPARATOR)
    return "".join(out)


def render_configs(configs: list[Doc]) -> str:
    """printComponentConfigVersionStates: the component config groups and whether each
    needs a manual config upgrade ("-" for a version kubeadm did not find)."""
    if not configs:
        return "No information available on component configs.\n"
    header = ["API GROUP", "CURRENT VERSION", "PREFERRED VERSION", "MANUAL UPGRADE REQUIRED"]
    rows = [
        [
            c["group"],
            c["currentVersion"] or "-",
            c["preferredVersion"] or "-",
            "yes" if c["manualUpgradeRequired"] else "no",
        ]
        for c in configs
    ]
    return CONFIGS_INTRO + _table([header, *rows]) + SEPARATOR


def render_plan(plan: Doc) -> str:
    """upgradePlanTextPrinter.PrintObj: every available upgrade, then the config table."""
    text = "".join(render_available(u) for u in plan.get("availableUpgrades") or [])
    return text + render_configs(plan.get("configVersions") or [])
