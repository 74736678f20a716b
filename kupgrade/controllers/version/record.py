"""What the version controller keeps with the cluster (SPEC C3-C11): the release it
accepted with its task graph and how far each node of the graph has come, the ClusterOperators
it waits on, the deletions it asked for, and the last release it refused with when to
try it again. A restarted controller goes on from here.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kupgrade.cluster.backend import Backend
from kupgrade.controllers import saved

STATE_KEY = "version"  # where the version controller keeps its state


class Refused(msgspec.Struct, kw_only=True):
    """A release refused at one of the checks (C3-C6), retried after an interval."""

    image: str
    condition: dict[str, str]  # the ReleaseAccepted condition that says why
    failure: dict[str, Any] | None  # the SyncError, as the controller dumps it
    retry_at: float
    attempts: int = 1


class VersionHead(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The few fields the run loop asks about every step (is an update under way, was the
    newest ask refused): read without the task graph the whole record carries."""

    image: str = ""
    completed: bool = False
    refused: Refused | None = None

    @property
    def updating(self) -> bool:
        """A release accepted and not yet completed."""
        return bool(self.image) and not self.completed

    @property
    def refusal(self) -> Refused | None:
        """The refusal of a release other than the one being applied, if any."""
        refused = self.refused
        return refused if refused is not None and refused.image != self.image else None


class VersionState(VersionHead, kw_only=True, omit_defaults=True):
    """The release being applied (or last applied) and the refusal, if the newest ask was
    refused. The graph is kept as manifest indices: `nodes[i]` the manifests of node i in
    order, `deps[i]` the nodes that wait for it, `cursor[i]` how many of node i's
    manifests are applied."""

    version: str = ""
    mode: str = ""  # Initializing or Updating
    verified: bool = False
    risks: str = ""  # the risks accepted, one per line (history's acceptedRisks)
    release: dict[str, Any] = msgspec.field(default_factory=dict)  # status.desired
    accepted: dict[str, str] | None = None  # the ReleaseAccepted condition
    version_hash: str = msgspec.field(name="versionHash", default="")
    total: int = 0
    nodes: list[list[int]] = msgspec.field(default_factory=list)
    deps: list[list[int]] = msgspec.field(default_factory=list)
    runlevels: list[list[tuple[str, int]]] = msgspec.field(default_factory=list)  # per node
    operators: list[tuple[str, str]] = msgspec.field(default_factory=list)  # (runlevel, name)
    workers: int = 1
    cursor: list[int] = msgspec.field(default_factory=list)
    deletes: list[tuple[str, str, str]] = msgspec.field(default_factory=list)  # kind, ns, name
    waiting: dict[str, float] = msgspec.field(default_factory=dict)  # operator -> since
    started: float = 0.0
    failure: dict[str, Any] | None = None  # the graph's last errors, summarized
    done: int = 0  # manifests applied


def version_head(api: Backend) -> VersionHead:
    """The record's head (an empty one before the controller has accepted anything)."""
    return saved.load(api, STATE_KEY, VersionHead) or VersionHead()


def version_state(api: Backend) -> VersionState:
    """The controller's state (an empty one before it has accepted or refused anything)."""
    return saved.load(api, STATE_KEY, VersionState) or VersionState()


def save_version_state(api: Backend, state: VersionState) -> None:
    saved.save(api, STATE_KEY, state)
