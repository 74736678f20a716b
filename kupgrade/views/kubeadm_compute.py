"""Which upgrades `kubeadm upgrade plan` offers a plain Kubernetes cluster, and the
versions it reads from the cluster to say so.

Ported from kubernetes/kubernetes cmd/kubeadm/app/phases/upgrade/compute.go
(GetAvailableUpgrades and its helpers), versiongetter.go (KubeVersionGetter) and
cmd/kubeadm/app/util/version.go (KubernetesReleaseVersion, validateStableVersion). kubeadm
resolves the labels of dl.k8s.io (`stable`, `stable-1.30`, `latest`, `latest-1.31`); we
resolve them over the releases the user names with `--available`, the same list
`kupgrade upgrade --to` plans its steps on (SPEC H7): `stable` is the newest release
without a pre-release, `stable-1.X` the newest of minor X, `latest` the newest of all,
`latest-1.X` the newest of minor X pre-releases included.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.kubeadm import ETCD, v
from kupgrade.errors import InputError, VersionError
from kupgrade.versions import SemVer, parse_kube
from kupgrade.views.kubeadm_plan import (
    APISERVER,
    MANAGER,
    SCHEDULER,
    ClusterState,
    ConfigVersion,
    Upgrade,
)

# constants.CoreDNSVersion of each kubeadm minor: the CoreDNS image a kubeadm installs.
COREDNS = {28: "v1.10.1", 29: "v1.11.1", 30: "v1.11.1", 31: "v1.11.3", 32: "v1.11.3"}
COREDNS |= {33: "v1.12.0", 34: "v1.12.1"}
# componentconfigs `known`, in kubeadm's order: group, ConfigMap, its key, the version.
CONFIGS = (
    ("kubeproxy.config.k8s.io", "kube-proxy", "config.conf", "v1alpha1"),
    ("kubelet.config.k8s.io", "kubelet-config", "kubelet", "v1beta1"),
)
_API_VERSION = re.compile(r"^apiVersion:\s*['\"]?([\w.-]+)/(\w+)", re.M)


class LabelError(Exception):
    """A release label none of the available releases answers (kubeadm's fetch error)."""


def nearest(table: dict[int, str], minor: int) -> str:
    """constants.EtcdSupportedVersion: the minor's own entry, else the nearest end's."""
    if minor in table:
        return table[minor]
    return table[min(table)] if minor < min(table) else table[max(table)]


def etcd_for(kube_version: str) -> str:
    """getSuggestedEtcdVersion of a local etcd: the etcd kubeadm pairs with that minor."""
    return nearest(ETCD, parse_kube(kube_version).minor)


def coredns_for(kubeadm_version: str) -> str:
    return nearest(COREDNS, parse_kube(kubeadm_version).minor)


@dataclass(frozen=True)
class Releases:
    """The simulated dl.k8s.io: the labels kubeadm reads, over the available releases."""

    versions: tuple[SemVer, ...]

    @staticmethod
    def of(texts: Iterable[str]) -> Releases:
        found = []
        for text in texts:
            try:
                found.append(parse_kube(text))
            except VersionError as exc:
                raise InputError(str(exc), field="--available") from None
        return Releases(tuple(sorted(set(found))))

    def label(self, name: str) -> SemVer | None:
        kind, _, series = name.partition("-")
        pool = [r for r in self.versions if kind == "latest" or not r.pre]
        if series:
            major, minor = (int(p) for p in series.split("."))
            pool = [r for r in pool if (r.major, r.minor) == (major, minor)]
        return max(pool) if pool else None


def release_version(releases: Releases, label: str, description: str, kubeadm: SemVer) -> SemVer:
    """KubeVersionGetter.VersionFromCILabel through KubernetesReleaseVersion: a release
    of a newer minor than the kubeadm binary's is replaced by the newest of kubeadm's own
    minor (validateStableVersion), whatever the label."""
    found = releases.label(label)
    if found is not None and (found.major, found.minor) > (kubeadm.major, kubeadm.minor):
        label = f"stable-{kubeadm.major}.{kubeadm.minor}"
        found = releases.label(label)
    if found is None:
        raise LabelError(
            f"Couldn't fetch latest {description} from the internet: no release answers "
            f'"{label}" among the available versions (--available)'
        )
    return found


def image_tag(image: str) -> str:
    """image.TagFromImage, `_` read as `+` (convertImageTagMetadataToSemver)."""
    name = image.split("@", 1)[0].rsplit("/", 1)[-1]
    return name.rsplit(":", 1)[1].replace("_", "+") if ":" in name else ""


def component_versions(api: Backend, component: str) -> dict[str, list[str]]:
    """ComponentVersions: kube-system pods labelled component=NAME,tier=control-plane,
    version (their first container's image tag) to nodes, in the order listed."""
    found: dict[str, list[str]] = {}
    for pod in api.list("Pod"):
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        if meta.get("namespace") != "kube-system":
            continue
        if labels.get("component") != component or labels.get("tier") != "control-plane":
            continue
        containers = (pod.get("spec") or {}).get("containers") or [{}]
        tag = image_tag(str(containers[0].get("image", "")))
        found.setdefault(tag, []).append(str((pod.get("spec") or {}).get("nodeName", "")))
    return found


def kubelet_versions(api: Backend) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for node in api.list("Node"):
        info = (node.get("status") or {}).get("nodeInfo") or {}
        found.setdefault(str(info.get("kubeletVersion", "")), []).append(node["metadata"]["name"])
    return found


def dns_image(api: Backend) -> str:
    """dns.DeployedDNSAddon's Deployment: the kube-dns-labelled one's image ("" when
    none)."""
    found = [
        d
        for d in api.list("Deployment")
        if (d.get("metadata") or {}).get("namespace") == "kube-system"
        and ((d["metadata"].get("labels") or {}).get("k8s-app") == "kube-dns")
    ]
    if len(found) > 1:
        names = " ".join(d["metadata"]["name"] for d in found)
        raise InputError(f"multiple DNS addon deployments found: [{names}]", field="--cluster")
    if not found:
        return ""
    pod = ((found[0].get("spec") or {}).get("template") or {}).get("spec") or {}
    return str(((pod.get("containers") or [{}])[0]).get("image", ""))


def dns_version(api: Backend) -> str:
    """dns.DeployedDNSAddon: the DNS Deployment's image tag ("" when none)."""
    image = dns_image(api)
    return image.rsplit(":", 1)[-1] if image else ""


def config_versions(api: Backend) -> list[ConfigVersion]:
    """componentconfigs.GetVersionStates: each group kubeadm knows, from its ConfigMap in
    kube-system; a version kubeadm does not read needs a manual upgrade, a missing one
    is regenerated ("-")."""
    out = []
    for group, name, key, version in CONFIGS:
        cm = api.get("ConfigMap", name, "kube-system")
        text = str(((cm or {}).get("data") or {}).get(key, ""))
        said = _API_VERSION.search(text)
        if said is None or said.group(1) != group:
            out.append(ConfigVersion(group, "", version))
        elif said.group(2) == version:
            out.append(ConfigVersion(group, version, version))
        else:
            out.append(ConfigVersion(group, said.group(2), version, True))
    return out


@dataclass
class Computed:
    """What GetAvailableUpgrades returns, what its printer says on standard output (text
    only) and what klog warns about."""

    upgrades: list[Upgrade] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def cluster_version(apiservers: dict[str, list[str]]) -> SemVer:
    """getLatestClusterVersion: the newest kube-apiserver."""
    if not apiservers:
        raise InputError(
            "no kube-apiserver static pod found (component=kube-apiserver, "
            "tier=control-plane in kube-system)",
            field="--cluster",
            hint="`upgrade plan` reads a kubeadm cluster's static pods",
        )
    found = []
    for text, nodes in apiservers.items():
        try:
            found.append(parse_kube(text))
        except VersionError:
            raise InputError(
                f"couldn't parse kube-apiserver version {text} from nodes [{' '.join(nodes)}]",
                field="--cluster",
            ) from None
    return max(found)


def default_kubeadm(api: Backend, releases: Releases) -> str:
    """The kubeadm a user runs `upgrade plan` with, as kubeadm's upgrade guide has it
    installed: the newest available release at most one minor past the cluster's (kubeadm
    upgrades one minor at a time), else the cluster's own version."""
    current = cluster_version(component_versions(api, APISERVER))
    fits = [
        r
        for r in releases.versions
        if not r.pre and (r.major, r.minor) <= (current.major, current.minor + 1)
    ]
    return v(str(max(fits) if fits else current))


def available_upgrades(
    api: Backend, releases: Releases, kubeadm: str, experimental: bool, rcs: bool
) -> Computed:
    """compute.go GetAvailableUpgrades: the patch release of the cluster's minor, the
    stable release when it is past that patch, and with the flags the release candidate
    and experimental releases; etcd from kubeadm's table unless it is external."""
    out = Computed(said=["[upgrade] Fetching available versions to upgrade to"])
    apiservers = component_versions(api, APISERVER)
    if len(apiservers) > 1:
        each = ", ".join(f"{k} on nodes [{' '.join(n)}]" for k, n in sorted(apiservers.items()))
        out.warnings.append(
            f"Different API server versions in the cluster were discovered: {each}. Please "
            "upgrade your control plane nodes to the same version of Kubernetes"
        )
    cluster = cluster_version(apiservers)
    out.said.append(f"[upgrade/versions] Cluster version: {cluster}")
    tool = parse_kube(kubeadm)
    out.said.append(f"[upgrade/versions] kubeadm version: {kubeadm}")
    try:
        stable = release_version(releases, "stable", "stable version", tool)
        stable_text = v(str(stable))
        out.said.append(f"[upgrade/versions] Target version: {stable_text}")
    except LabelError as exc:
        out.warnings.append(f"[upgrade/versions] WARNING: {exc}")
        out.warnings.append(
            "[upgrade/versions] WARNING: Falling back to current kubeadm version as latest "
            "stable version"
        )
        stable, stable_text = tool, kubeadm
    etcds = component_versions(api, "etcd")
    external = not etcds
    before = ClusterState(
        kube_version=str(cluster),
        dns_version=dns_version(api),
        kubeadm_version=kubeadm,
        apiservers=apiservers,
        controller_managers=component_versions(api, MANAGER),
        schedulers=component_versions(api, SCHEDULER),
        etcds=etcds,
        kubelets=kubelet_versions(api),
    )
    dns = coredns_for(kubeadm)

    def after(kube: str, kubeadm_after: str) -> ClusterState:
        etcd = "" if external else etcd_for(kube)
        return ClusterState(kube, dns, kubeadm_after, etcd)

    minor_possible = cluster < stable
    if stable >= cluster:  # patchVersionBranchExists
        branch = f"{cluster.major}.{cluster.minor}"
        description = f"version in the v{branch} series"
        try:
            patch = release_version(releases, f"stable-{branch}", description, tool)
        except LabelError as exc:
            out.warnings.append(f"[upgrade/versions] WARNING: {exc}")
        else:
            patch_text = v(str(patch))
            out.said.append(f"[upgrade/versions] Latest {description}: {patch_text}")
            minor_possible = patch < stable
            if cluster < patch:
                new_kubeadm = kubeadm if tool >= patch else patch_text
                out.upgrades.append(Upgrade(description, before, after(patch_text, new_kubeadm)))
    if minor_possible:
        out.upgrades.append(Upgrade("stable version", before, after(stable_text, stable_text)))
    if experimental or rcs:
        flags = (experimental, rcs)
        _unstable(out, releases, tool, cluster=cluster, flags=flags, states=(before, after))
    return out


def _unstable(
    out: Computed,
    releases: Releases,
    tool: SemVer,
    *,
    cluster: SemVer,
    flags: tuple[bool, bool],
    states: tuple[ClusterState, Callable[[str, str], ClusterState]],
) -> None:
    """The release candidate (from the previous branch's latest) and the experimental
    release (the newest, or that previous branch's when the newest is an alpha.0)."""
    before, after = states
    experimental, rcs = flags
    try:
        latest = release_version(releases, "latest", "experimental version", tool)
        out.said.append(f"[upgrade/versions] Latest experimental version: {v(str(latest))}")
        branch = f"latest-{latest.major}.{latest.minor - 1}"
        previous = release_version(releases, branch, "previous version", tool)
    except LabelError as exc:
        raise InputError(
            f"[upgrade/versions] FATAL: {exc}",
            field="--available",
            hint="add the pre-releases to try to --available",
        ) from None
    out.said.append(f"[upgrade/versions] Latest previous version: {v(str(previous))}")
    if rcs and ".".join(previous.pre).startswith("rc") and cluster < previous:
        text = v(str(previous))
        out.upgrades.append(Upgrade("release candidate version", before, after(text, text)))
    if experimental and cluster < latest:
        unstable = previous if ".".join(latest.pre) == "alpha.0" else latest
        text = v(str(unstable))
        out.upgrades.append(Upgrade("experimental version", before, after(text, text)))
