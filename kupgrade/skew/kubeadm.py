"""kubeadm's version policies for `kubeadm upgrade apply` (EnforceVersionPolicies).

Stricter than upstream skew: one minor at a time up or down, never past the kubeadm
binary's own minor, no pre-releases without a flag, and kubelets no further behind than
kubeadm's own skew (3 from kubeadm 1.29, 1 before). Mandatory findings stop the upgrade;
skippable ones stop it unless `--force`. Messages are kubeadm's, word for word, because
users search for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kupgrade.errors import VersionError
from kupgrade.versions import SemVer, parse_kube


@dataclass(frozen=True)
class Finding:
    id: str  # P0-P10 (conformance/skew/README.md section 4)
    message: str


@dataclass
class Policies:
    mandatory: list[Finding] = field(default_factory=list)
    skippable: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class Upgrade:
    cluster: str | None  # None: the lookup failed (lookup_errors says why)
    kubelets: list[str] | None
    kubeadm: str | None
    new: str
    kubelet_skew: int = 3
    min_control_plane: str | None = None
    allow_experimental: bool = False
    allow_rcs: bool = False
    lookup_errors: dict[str, str] = field(default_factory=dict)


def kubelet_skew_of(kubeadm: SemVer) -> int:
    """How far kubelets may trail, by the kubeadm release (3 from 1.29, 1 before)."""
    return 3 if (kubeadm.major, kubeadm.minor) >= (1, 29) else 1


def _pre(version: SemVer) -> str:
    return ".".join(version.pre)


def enforce(up: Upgrade) -> Policies:
    """The findings in kubeadm's order (P0 … P10)."""
    out = Policies()
    new = parse_kube(up.new)
    if up.cluster is None:
        why = up.lookup_errors.get("cluster", "unknown error")
        out.mandatory.append(Finding("P0", f"Unable to fetch cluster version: {why}"))
        return out
    if up.kubeadm is None:
        why = up.lookup_errors.get("kubeadm", "unknown error")
        out.mandatory.append(Finding("P1", f"Unable to fetch kubeadm version: {why}"))
        return out
    cluster, kubeadm = parse_kube(up.cluster), parse_kube(up.kubeadm)
    if up.kubelets is None:
        why = up.lookup_errors.get("kubelets", "unknown error")
        out.skippable.append(Finding("P2", f"Unable to fetch kubelet version: {why}"))
    if up.min_control_plane is not None and new < parse_kube(up.min_control_plane):
        # kubeadm quotes the cluster's version as "the minimum": its text, kept as it is.
        out.mandatory.append(
            Finding(
                "P3",
                f'Specified version to upgrade to "{up.new}" is equal to or lower than the minimum '
                f'supported version "{up.cluster}". Please specify a higher version to upgrade to',
            )
        )
    unstable = bool(new.pre)
    severity = out.skippable if unstable else out.mandatory
    if new.minor > cluster.minor + 1:
        severity.append(
            Finding(
                "P4",
                f'Specified version to upgrade to "{up.new}" is too high; kubeadm can upgrade only '
                "1 minor version at a time",
            )
        )
    if new.minor < cluster.minor - 1:
        severity.append(
            Finding(
                "P5",
                f'Specified version to downgrade to "{up.new}" is too low; kubeadm can downgrade '
                "only 1 minor version at a time",
            )
        )
    if kubeadm < new:
        if new.minor > kubeadm.minor:
            severity.append(
                Finding(
                    "P6",
                    f'Specified version to upgrade to "{up.new}" is at least one minor release higher '
                    f"than the kubeadm minor release ({new.minor} > {kubeadm.minor}). Such an "
                    "upgrade is not supported",
                )
            )
        else:
            out.skippable.append(
                Finding(
                    "P7",
                    f'Specified version to upgrade to "{up.new}" is higher than the kubeadm version '
                    f'"{up.kubeadm}". Upgrade kubeadm first using the tool you used to install kubeadm',
                )
            )
    if kubeadm.major > new.major or kubeadm.minor > new.minor:
        out.skippable.append(
            Finding(
                "P8",
                f"Kubeadm version {up.kubeadm} can only be used to upgrade to Kubernetes version "
                f"{kubeadm.major}.{kubeadm.minor}",
            )
        )
    allowed = up.allow_experimental or (_pre(new).startswith("rc") and up.allow_rcs)
    if unstable and not allowed:
        out.skippable.append(
            Finding(
                "P9",
                f'Specified version to upgrade to "{up.new}" is an unstable version and such '
                "upgrades weren't allowed via setting the --allow-*-upgrades flags",
            )
        )
    if up.kubelets is not None:
        old = sorted({k for k in up.kubelets if new.minor > _minor(k) + up.kubelet_skew})
        if old:
            out.skippable.append(
                Finding(
                    "P10",
                    "There are kubelets in this cluster that are too old that have these versions "
                    f"[{' '.join(old)}]",
                )
            )
    return out


def _minor(text: str) -> int:
    try:
        return parse_kube(text).minor
    except VersionError:
        raise VersionError(f"couldn't parse kubelet version {text}") from None


FIXES = {
    "P0": "make the cluster's version readable (is the API server up?)",
    "P1": "use a released kubeadm binary",
    "P2": "make the nodes' kubelet versions readable, or pass --force",
    "P3": "upgrade to a newer Kubernetes version",
    "P4": "upgrade one minor at a time",
    "P5": "downgrade one minor at a time",
    "P6": "upgrade kubeadm to the target's minor first",
    "P7": "upgrade kubeadm first, or pass --force",
    "P8": "use the kubeadm of the target's minor, or pass --force",
    "P9": "pass --allow-experimental-upgrades (or --allow-release-candidate-upgrades)",
    "P10": "upgrade the old kubelets first, or pass --force",
}


def kubeadm_version(policy: str, target: SemVer) -> str:
    """`kubeadm-1.31[.2]`: the kubeadm binary in use; without a patch, the target's own
    patch when it is of that minor (the usual case), else .0."""
    text = policy.removeprefix("kubeadm-")
    parts = text.split(".")
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        major, minor = int(parts[0]), int(parts[1])
        patch = target.patch if (target.major, target.minor) == (major, minor) else 0
        return f"v{major}.{minor}.{patch}"
    return text if text.startswith("v") else f"v{text}"
