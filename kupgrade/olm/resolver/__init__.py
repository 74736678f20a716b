"""The subscription resolver: three policies kept apart as strategies, and the walk that
repeats one resolution until nothing is left (SPEC F6: one CSV at a time)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kupgrade.olm.resolver import olm_v0, seed, semver
from kupgrade.olm.resolver.model import (
    DEFAULT_GLOBAL_NAMESPACE,
    Installed,
    Resolution,
    ResolutionError,
    Source,
    Subscription,
)
from kupgrade.versions import SemVer

Policy = Callable[[list[Source], Subscription, Installed | None, str], Resolution]

POLICIES: dict[str, Policy] = {
    "documented": seed.resolve,
    "olm-v0": olm_v0.resolve,
    "semver": semver.resolve,
    "seed": seed.resolve,  # the name `documented` had before: profiles and scripts keep it
}
MAX_WALK = 10_000


@dataclass
class Outcome:
    """One resolution and the walk from it to the end of the channel."""

    resolution: Resolution | None
    walk: list[str] = field(default_factory=list)
    walk_error: str | None = None
    error: ResolutionError | None = None

    def to_json(self, approval: str) -> dict[str, Any]:
        if self.error is not None or self.resolution is None:
            error = self.error
            return {
                "next": None,
                "walk": [],
                "reason": error.message if error else "",
                "state": "ResolutionFailed",
                "error": error.message if error else "",
                "error_class": error.error_class if error else "",
            }
        resolution = self.resolution
        doc: dict[str, Any] = {
            "next": resolution.next,
            "walk": self.walk,
            "reason": resolution.reason,
            "state": resolution.state,
            "source": resolution.source.key if resolution.source else None,
            "install_plan": resolution.install_plan(approval),
            "considered": [c.to_json() for c in resolution.considered],
        }
        if self.walk_error:
            doc["walk_error"] = self.walk_error
        return doc


def resolve(
    sources: list[Source],
    sub: Subscription,
    installed: Installed | None,
    policy: str = "documented",
    global_namespace: str = DEFAULT_GLOBAL_NAMESPACE,
) -> Resolution:
    return POLICIES[policy](sources, sub, installed, global_namespace)


def resolve_and_walk(
    sources: list[Source],
    sub: Subscription,
    installed: Installed | None,
    policy: str = "documented",
    global_namespace: str = DEFAULT_GLOBAL_NAMESPACE,
) -> Outcome:
    """Resolve once, then install each answer and resolve again until nothing is next."""
    try:
        first = resolve(sources, sub, installed, policy, global_namespace)
    except ResolutionError as exc:
        return Outcome(None, error=exc)
    outcome = Outcome(first)
    seen = {installed.name} if installed else set()
    step = first
    while step.next is not None:
        if step.next in seen or len(outcome.walk) >= MAX_WALK:
            outcome.walk_error = (
                f"the walk returns to {step.next} after {' -> '.join(outcome.walk)}"
            )
            break
        seen.add(step.next)
        outcome.walk.append(step.next)
        current = Installed(step.next, step.version or SemVer(0, 0, 0))
        try:
            step = resolve(sources, sub, current, policy, global_namespace)
        except ResolutionError as exc:
            outcome.walk_error = f"resolution from {current.name} fails: {exc.message}"
            break
    return outcome
