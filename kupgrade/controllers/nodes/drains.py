"""What the machine-config drain controller keeps about a node's drain under way (its
ongoingDrains entry in drain_controller.go), kept with the cluster so that a restarted
controller counts its timeouts from the drain's real start."""

from __future__ import annotations

import msgspec

from kupgrade.cluster.backend import Backend
from kupgrade.controllers import saved


class DrainState(msgspec.Struct, kw_only=True):
    """One node's drain: the request it serves, when it started and retries, and what it
    has said (each warning and threshold is said once)."""

    request: str = msgspec.field(name="for")  # the desired-drain annotation it carries out
    started: float
    next: float  # the earliest next eviction round
    failing: float | None = None  # since when evictions are refused
    threshold: bool = False  # DrainThresholdExceeded said
    timeout: bool = False  # DrainFailed said (mcc_drain_err reports the node)
    retry: float | None = None  # seconds until the next round
    blocked: list[str] = msgspec.field(default_factory=list)  # the first pods refused
    warned: list[str] = msgspec.field(default_factory=list)  # the filters' warnings said


def _key(node: str) -> str:
    return f"drain:{node}"


def drain_state(api: Backend, node: str) -> DrainState | None:
    """The node's drain under way, if any."""
    return saved.load(api, _key(node), DrainState)


def save_drain(api: Backend, node: str, state: DrainState | None) -> None:
    """Keep the drain's state; None when the drain is over."""
    saved.save(api, _key(node), state)
