"""What each rule id in kupgrade's skew findings and refusals means, so that an id a user
sees ("G3.users-first", "H6.order", "P4") can be looked up (`kupgrade explain ID`).

The texts say the rule, where it comes from and how to get out of it; the sources are
the platforms' own documents (SPEC G2-G4, H1-H7; kubeadm's P0-P10) (Kubernetes' version-skew policy, kubeadm's
EnforceVersionPolicies, Google Distributed Cloud's bare-metal upgrade pages).
"""

from __future__ import annotations

from dataclasses import dataclass

K8S = "Kubernetes version-skew policy"
KUBEADM = "kubeadm cmd/kubeadm/app/phases/upgrade/policy.go (EnforceVersionPolicies)"
GDC = "Google Distributed Cloud (bare metal): lifecycle and stages of cluster upgrades"


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str  # violation | refusal | warning | kubeadm
    rule: str
    source: str


_RULES = [
    Rule(
        "H1.major",
        "violation",
        "Every component runs the same major version as the "
        "kube-apiservers (the first apiserver's major is the reference).",
        K8S,
    ),
    Rule(
        "H2",
        "violation",
        "In a highly available cluster the newest and oldest "
        "kube-apiserver are at most one minor apart.",
        K8S,
    ),
    Rule(
        "H3.newer",
        "violation",
        "A kubelet is never newer than a kube-apiserver it may talk to.",
        K8S,
    ),
    Rule(
        "H3.older",
        "violation",
        "A kubelet is at most three minors older than the "
        "kube-apiservers (two before Kubernetes 1.28, or when the kubelet is older than "
        "1.25).",
        K8S,
    ),
    Rule(
        "H4.newer",
        "violation",
        "kube-controller-manager, kube-scheduler and "
        "cloud-controller-manager are never newer than an apiserver they talk to.",
        K8S,
    ),
    Rule(
        "H4.older",
        "violation",
        "kube-controller-manager, kube-scheduler and "
        "cloud-controller-manager are at most one minor older than the apiservers they "
        "talk to.",
        K8S,
    ),
    Rule(
        "H5",
        "violation",
        "kubectl is within one minor (older or newer) of the kube-apiserver.",
        K8S,
    ),
    Rule("H6.proxy-newer", "violation", "kube-proxy is never newer than the kube-apiserver.", K8S),
    Rule(
        "H6.proxy-older",
        "violation",
        "kube-proxy is at most three minors older than the "
        "kube-apiserver (two under the older policy).",
        K8S,
    ),
    Rule(
        "H6.proxy-kubelet",
        "violation",
        "kube-proxy is within three minors of the kubelet "
        "on its node (the same minor under the older policy).",
        K8S,
    ),
    Rule("H6.no-minor-skip", "refusal", "The kube-apiservers move one minor at a time.", K8S),
    Rule(
        "H6.order",
        "refusal",
        "Upgrade order: apiservers first, then controller-manager, "
        "scheduler and cloud-controller-manager, then kubelets and kube-proxy; none moves "
        "to a minor an apiserver it talks to has not reached.",
        K8S,
    ),
    Rule(
        "H6.drain-before-minor",
        "refusal",
        "A kubelet minor upgrade happens on a drained "
        "node; in-place minor upgrades of the kubelet are not supported.",
        K8S,
    ),
    Rule(
        "H6.webhooks",
        "warning",
        "Before an apiserver minor upgrade, admission webhooks must handle the new API versions.",
        K8S,
    ),
    Rule(
        "H6.kubelet-prereq",
        "warning",
        "The upgrade prerequisite asks for kubelets at most "
        "two minors behind the new apiserver, although the skew policy allows three.",
        K8S,
    ),
    Rule(
        "H7.latest-patch-first",
        "warning",
        "A control-plane minor upgrade starts from the "
        "latest patch of the current minor and lands on the latest patch of the next.",
        K8S,
    ),
    Rule(
        "G2.user-newer",
        "violation",
        "A user cluster is never newer than its management (admin or hybrid) cluster.",
        GDC,
    ),
    Rule(
        "G2.user-too-old",
        "violation",
        "A user cluster is at most one release-line minor "
        "behind a management cluster at 1.28 or older, two from 1.29 (1.16 to 1.28 counts "
        "as one minor).",
        GDC,
    ),
    Rule(
        "G2.user-mixed-minors",
        "warning",
        "A management cluster at 1.28 or older expects "
        "all its user clusters on one minor; it must be so before its next minor upgrade.",
        GDC,
    ),
    Rule("G3.downgrade", "refusal", "Clusters and node pools are never downgraded.", GDC),
    Rule(
        "G3.tool-version",
        "refusal",
        "A cluster is upgraded only to the version of the bmctl in use.",
        GDC,
    ),
    Rule(
        "G3.skip-minor",
        "refusal",
        "A cluster moves one release-line minor at a time; two or more minors ahead is an error.",
        GDC,
    ),
    Rule(
        "G3.users-first",
        "refusal",
        "Before a management cluster moves to a new minor its "
        "user clusters must be ready: on its current minor (target up to 1.28), or within "
        "two minors of the target (from 1.29).",
        GDC,
    ),
    Rule("G4.pool-newer", "violation", "A worker node pool is never newer than its cluster.", GDC),
    Rule(
        "G4.pool-skew",
        "violation",
        "A node pool is at most one minor behind its cluster "
        "(two from 1.29, or at 1.28 with the two-minor node-pool preview enabled).",
        GDC,
    ),
    Rule(
        "G4.pool-released-after",
        "violation",
        "A node pool never runs a release that came "
        "out after its cluster's version (the release history comes from you).",
        GDC,
    ),
    Rule("P0", "kubeadm", "The cluster's version could not be read (mandatory).", KUBEADM),
    Rule("P1", "kubeadm", "kubeadm's own version could not be read (mandatory).", KUBEADM),
    Rule("P2", "kubeadm", "The kubelets' versions could not be read (skippable).", KUBEADM),
    Rule(
        "P3",
        "kubeadm",
        "The new version is below the minimum control plane this kubeadm supports (mandatory).",
        KUBEADM,
    ),
    Rule(
        "P4",
        "kubeadm",
        "The new version is more than one minor above the cluster's "
        "(mandatory; skippable for a pre-release).",
        KUBEADM,
    ),
    Rule(
        "P5",
        "kubeadm",
        "The new version is more than one minor below the cluster's "
        "(mandatory; skippable for a pre-release).",
        KUBEADM,
    ),
    Rule(
        "P6",
        "kubeadm",
        "kubeadm is older than the new version by a minor (mandatory; "
        "skippable for a pre-release).",
        KUBEADM,
    ),
    Rule(
        "P7",
        "kubeadm",
        "kubeadm is older than the new version within its minor (skippable).",
        KUBEADM,
    ),
    Rule(
        "P8", "kubeadm", "kubeadm's major or minor is above the new version's (skippable).", KUBEADM
    ),
    Rule(
        "P9",
        "kubeadm",
        "The new version is a pre-release and --allow-experimental-upgrades "
        "(or --allow-release-candidate-upgrades) is not set (skippable).",
        KUBEADM,
    ),
    Rule(
        "P10",
        "kubeadm",
        "A kubelet would end up more minors behind the new version than "
        "kubeadm allows (skippable).",
        KUBEADM,
    ),
]

RULES = {r.id: r for r in _RULES}


def lookup(text: str) -> list[Rule]:
    """The rules an id names: exact ("H3.older"), or every rule under a prefix ("H3")."""
    wanted = text.strip()
    if wanted in RULES:
        return [RULES[wanted]]
    return [r for r in _RULES if r.id.startswith(wanted + ".")]
