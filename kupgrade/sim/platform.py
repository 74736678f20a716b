"""What a platform is to the rest of kupgrade (ARCHITECTURE.md): one package under sim/
(openshift/, gdc/, kubernetes/) supplying its profile rules, how a new cluster is laid
out, its world, its controllers, when an upgrade is under way, done or failing, and its
report. Callers ask the registry (sim/platforms.py) for the platform of a profile; no
code outside the registry tells the platforms apart by name.

The protocol and the small types the platforms hand to the run loop live here, apart
from the registry, because the registry imports every platform package and each package
builds these types: with both in one module the imports would run in a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kupgrade.cluster.backend import Backend, Obj
from kupgrade.controllers.protocol import Controller, Progress
from kupgrade.errors import InputError
from kupgrade.plan.steps import Plan
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.fleet.monitor import FleetRules
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.store import Store
from kupgrade.sim.world import World


def _never() -> bool:
    return False


def not_through_api(title: str) -> InputError:
    """`upgrade --kubeconfig` on a cluster whose platform upgrades only when simulated."""
    return InputError(
        f"the cluster is a {title} cluster, whose upgrades `upgrade --kubeconfig` does not request",
        field="--kubeconfig",
        hint="use `kupgrade skew check --kubeconfig` to check it",
    )


def to_version_only(title: str, ask: UpgradeAsk) -> None:
    """Refuse `--to-image` on a platform whose clusters upgrade to a version."""
    if ask.image:
        raise InputError(
            f"a {title} cluster upgrades to a version", field="--to-image", hint="use --to VERSION"
        )


@dataclass
class Crew:
    """A platform's controllers as one process runs them, in the order they sync.
    `handing_off` says when that process must stop so that the controllers' new version
    takes over (SPEC C9); the loop then starts a new crew from the stored state."""

    controllers: list[Controller]
    handing_off: Callable[[], bool] = field(default=_never)


class Memory(Protocol):
    """Where the run loop keeps its own bookkeeping: in the cluster's store when the world
    runs in this process (it survives a restart), in memory when it acts over an API."""

    def recall(self, key: str, default: Any = None) -> Any: ...

    def remember(self, key: str, value: Any) -> None: ...


# `kupgrade upgrade`'s flags, by the UpgradeAsk field each sets, in the order a refusal
# names them: oc adm upgrade's, bmctl's, then kubeadm's and the planner's.
UPGRADE_FLAGS = {
    "to": "--to",
    "image": "--to-image",
    "latest": "--to-latest",
    "clear": "--clear",
    "explicit": "--allow-explicit-upgrade",
    "include_not_recommended": "--include-not-recommended",
    "allow_not_recommended": "--allow-not-recommended",
    "with_warnings": "--allow-upgrade-with-warnings",
    "force": "--force",
    "bmctl": "--bmctl",
    "leave_pools": "--leave-pools",
    "nodepool": "--nodepool",
    "use_bootstrap": "--use-bootstrap",
    "releases": "--releases",
    "kubeadm": "--kubeadm",
    "allow_experimental": "--allow-experimental-upgrades",
    "allow_rcs": "--allow-release-candidate-upgrades",
    "available": "--available",
    "policy": "--policy",
}


@dataclass(frozen=True)
class UpgradeAsk:
    """What `kupgrade upgrade` was asked: oc adm upgrade's, bmctl's and kubeadm's flags.
    Each platform takes the ones it knows (Platform.upgrade_flags); the others are
    refused by name before anything is read."""

    to: str | None = None
    image: str | None = None
    latest: bool = False
    clear: bool = False
    explicit: bool = False  # --allow-explicit-upgrade
    include_not_recommended: bool = False  # shows them; also allows --to, as it always has
    allow_not_recommended: bool = False
    with_warnings: bool = False  # --allow-upgrade-with-warnings
    force: bool = False
    bmctl: str | None = None
    leave_pools: tuple[str, ...] = ()
    nodepool: str | None = None
    use_bootstrap: bool = False
    releases: Path | None = None  # a distributed-cloud release line and order
    kubeadm: str | None = None
    allow_experimental: bool = False
    allow_rcs: bool = False
    available: tuple[str, ...] = ()  # releases a Kubernetes plan may land on
    policy: str | None = None  # the Kubernetes skew policy

    @property
    def target(self) -> bool:
        return bool(self.to or self.image or self.latest)

    def given(self) -> list[str]:
        """The fields set, in UPGRADE_FLAGS' order."""
        return [name for name in UPGRADE_FLAGS if getattr(self, name)]


@dataclass
class Said:
    """A platform's answer to `upgrade`: the document `-o json` prints, the lines a person
    reads (standard output), what goes to standard error (warnings, the words of a
    refusal), notes, and the exit status (1: refused, nothing was changed)."""

    doc: Any = None
    lines: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    exit: int = 0


# `kupgrade cluster create`'s flags that shape one platform's profile.
CREATE_FLAGS = {
    "role": "--role",
    "managed_by": "--managed-by",
    "control_planes": "--control-planes",
}


@dataclass(frozen=True)
class CreateAsk:
    """`cluster create`'s platform flags; each platform takes its own (create_flags)."""

    role: str | None = None
    managed_by: str | None = None
    control_planes: int | None = None
    version_given: bool = False  # --version or a profile names the version

    def given(self) -> list[str]:
        return [name for name in CREATE_FLAGS if getattr(self, name) is not None]


@dataclass(frozen=True)
class FleetMember:
    """A member of a fleet as its platform's part of a rehearsal sees it."""

    store: Store
    spec: Spec
    api: Backend


class FleetRun(Protocol):
    """How one platform's clusters take part in a fleet rehearsal (sim/fleet/rehearsal.py):
    their state, the rules over it, the plan, and each step asked of a member."""

    one_at_a_time: bool  # a cluster runs one step at a time (bmctl), or several

    def policy(self, given: str | None) -> str:
        """The skew policy the rehearsal plans with: the one given, checked, or the
        platform's own."""

    def rules(self, policy: str) -> FleetRules: ...

    def components(self, name: str) -> dict[str, str]:
        """What each component of member `name` runs: the state the rules judge."""

    def plan(self, target: str, available: list[str], policy: str) -> Plan:
        """The planner's plan from where every member is now."""

    def start(self, name: str, step: dict[str, Any], policy: str) -> dict[str, Any]:
        """Ask the member's upgrade controller for one step; a ticket to follow it by."""

    def outcome(self, name: str, ticket: dict[str, Any]) -> tuple[str, str]:
        """(running | done | failed, why) of the step a ticket names."""

    def busy(self, name: str) -> str | None:
        """An upgrade under way on the member (before a rehearsal: one it did not start)."""

    def refusal(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """Why the platform's own tool refuses to start a step ({why, objects}), if it does."""

    def versions(self, name: str) -> str:
        """The member's versions, in a few words."""

    def role(self, name: str) -> tuple[str, str]:
        """(role, managed by) of the member."""


class Platform(Protocol):
    """One platform of simulated clusters; see the module."""

    name: str  # as a profile's spec.platform names it
    title: str  # as messages name its clusters ("OpenShift clusters")
    retry_hint: str  # what a user does when a run stops with the cluster failing
    upgrade_flags: frozenset[str]  # the UpgradeAsk fields its `upgrade` takes
    # What else it does: "upgrade status" (oc adm upgrade status), "upgrade channel",
    # "upgrade --kubeconfig" (on a real cluster), "operators" (OLM subscriptions).
    verbs: frozenset[str]
    create_flags: frozenset[str]  # the CreateAsk fields `cluster create` takes for it
    # Simulated seconds without progress after which a run stops as stalled, instead of
    # retrying a held drain for weeks: the platform's own point of raising the alarm.
    stall_seconds: float

    def check(self, spec: Spec, where: str) -> None:
        """The profile's rules of this platform (the common ones are checked before)."""

    def shape(self, spec: Spec, ask: CreateAsk) -> Spec:
        """`cluster create`'s flags applied to the profile."""

    def populate(self, root: Path, store: Store, name: str, profile: Profile) -> None:
        """A new cluster, settled at its first version, written into `store`."""

    def example_profile(self) -> str | None:
        """The commented example profile of this platform, if it ships one."""

    def world(self, sim: SimCluster, spec: Spec) -> World:
        """The physics of the platform's clusters."""

    def crew(self, api: Backend, spec: Spec, home: Path) -> Crew:
        """The controllers that carry out an upgrade, acting through `api`."""

    def periodic(self, api: Backend, spec: Spec) -> Controller | None:
        """A controller synced on its own schedule while something happens (the update
        service's check), made once per run, not once per crew."""

    def resync(self, api: Backend, memory: Memory, now: float) -> None:
        """Requeue what the controllers re-check periodically while an upgrade runs."""

    def updating(self, api: Backend) -> bool:
        """An upgrade was asked for and is not done."""

    def refused(self, api: Backend) -> dict[str, Any] | None:
        """A release the controllers refused and retry, while it is still wanted."""

    def failing(self, api: Backend) -> str | None:
        """Why the cluster is not where it was asked to go, if it is not."""

    def completed(self, api: Backend) -> bool:
        """The upgrade asked for is done, everything settled at it."""

    def summary(self, api: Backend) -> dict[str, str]:
        """VERSION, PROGRESSING and STATUS, as `cluster list` shows a cluster."""

    def progress(self, api: Backend) -> list[Progress]:
        """Its controllers' progress as they publish it, read through `api` (a served or
        a real cluster's): the rows the live view draws above the cluster's pools."""

    def status(self, api: Backend) -> dict[str, Any]:
        """What the live view heads the cluster with: its name, headline columns, the
        version it goes to, conditions, history, operators, and when the upgrade began."""

    def pool_of(self, node: Obj) -> str:
        """The pool a node belongs to, as the platform groups nodes."""

    def report(
        self, api: Backend, events: list[dict[str, Any]], run: dict[str, Any], started: float
    ) -> dict[str, Any]:
        """The rehearsal's report: `run` (outcome, times, steps) and the platform's own
        sections, from the events since `started`."""

    def fleet(self, members: dict[str, FleetMember], document: dict[str, Any]) -> FleetRun | None:
        """Its clusters' part in a fleet rehearsal; None when its fleets are not rehearsed."""

    def recognizes(self, api: Backend) -> bool:
        """Whether the cluster behind `api` (a served or a real one) is of this platform."""

    def upgrade(self, root: Path, store: Store, spec: Spec, ask: UpgradeAsk) -> Said:
        """`kupgrade upgrade` on a simulated cluster: its status, or a request recorded
        (committed) for its controllers."""

    def upgrade_api(self, api: Backend, ask: UpgradeAsk) -> Said:
        """`kupgrade upgrade --kubeconfig`: the same, through a cluster's API (only a
        platform whose verbs name "upgrade --kubeconfig")."""
