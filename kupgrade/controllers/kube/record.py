"""What the Kubernetes upgrade controller keeps with the cluster: the plan `kupgrade
upgrade` recorded and how far it has come, or the steps a fleet asked for, each carried
out on its own (SPEC H6, H7, X1).

Stored as it always was: a plan's fields at the top, or a fleet's steps under `parallel`;
fields at their defaults are left out, so a record reads the same to an older kupgrade.
"""

from __future__ import annotations

import msgspec

from kupgrade.cluster.backend import Backend
from kupgrade.controllers import saved

STATE = "kube-upgrade"


class Kubeadm(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """The kubeadm binary a control-plane step runs and its flags (`kubeadm upgrade apply
    --force --allow-experimental-upgrades --allow-release-candidate-upgrades`); by default
    the target's own kubeadm."""

    version: str | None = None
    force: bool = False
    allow_experimental: bool = False
    allow_rcs: bool = msgspec.field(name="allowRCs", default=False)
    min_control_plane: str | None = None  # the binary's minimum control plane (P3)


class PlanStep(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One step of the plan: `control-plane` or `nodepool/POOL`, from one version to the
    next (plan.steps.PlanStep as JSON)."""

    id: str
    object: str
    source: str = msgspec.field(name="from")
    to: str
    after: list[str] = msgspec.field(default_factory=list)

    @property
    def pool(self) -> str:
        """The node pool a pool step upgrades (empty for the control plane)."""
        return self.object.removeprefix("nodepool/") if self.object != "control-plane" else ""


class DrainWait(msgspec.Struct, kw_only=True):
    """The node being drained, when the next eviction round is due, what refused."""

    node: str
    next: float
    held: str | None = None


class StepWork(msgspec.Struct, kw_only=True, omit_defaults=True):
    """How far a step has come, a plan's or a fleet's: its phase, the change the skew
    rules last cleared or what blocks it, and the node it drains."""

    policy: str = "auto"
    kubeadm: Kubeadm | None = None
    phase: str | None = None  # apiservers, controllers, kubelets; nodes for a pool step
    blocked: str | None = None  # the rule that holds the next change, and its fix
    cleared: list[str] | None = None  # (what, node, version) the rules last let through
    forced: bool = False  # kubeadm's skippable checks passed with --force (said once)
    drain: DrainWait | None = None


class FleetStep(StepWork, kw_only=True, omit_defaults=True):
    """One step a fleet asked this cluster to carry out, beside its others."""

    step: PlanStep
    started: float
    done: float | None = None


class KubeUpgrade(StepWork, kw_only=True, omit_defaults=True):
    """A plan carried out step by step (`index` the step under way), or, with `parallel`,
    the steps of a fleet's plan by id."""

    target: str = ""
    index: int = 0
    started: float = 0.0
    steps: list[PlanStep] = msgspec.field(default_factory=list)
    completed: bool = False
    parallel: dict[str, FleetStep] | None = None

    @property
    def running(self) -> bool:
        """A plan not completed yet, or a fleet's step not done yet."""
        if self.parallel is not None:
            return any(entry.done is None for entry in self.parallel.values())
        return not self.completed


def upgrade_record(api: Backend) -> KubeUpgrade | None:
    """The upgrade under way or last carried out, if any."""
    return saved.load(api, STATE, KubeUpgrade)


def save_record(api: Backend, record: KubeUpgrade) -> None:
    saved.save(api, STATE, record)
