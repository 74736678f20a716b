"""What a plan is: ordered steps with the steps each needs first, or the step no plan gets
past and why (SPEC X1, X4). Shared by the fleet and the Kubernetes planners."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kupgrade.skew.verdict import Violation
from kupgrade.versions import GdcVersion, SemVer

Version = GdcVersion | SemVer


@dataclass
class PlanStep:
    id: str
    object: str
    frm: str
    to: str
    after: list[str] = field(default_factory=list)
    leave_pools: list[str] = field(default_factory=list)  # pools a cluster step leaves behind

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "object": self.object,
            "from": self.frm,
            "to": self.to,
            "after": self.after,
        }
        if self.leave_pools:
            out["leave_pools"] = self.leave_pools
        return out


@dataclass
class Refusal:
    """The first step no plan gets past (or None: the start state itself is illegal)."""

    object: str | None
    frm: str | None
    to: str | None
    rules: list[str]
    message: str
    fix: str
    objects: list[str] = field(default_factory=list)

    @staticmethod
    def of(violations: list[Violation], step: tuple[str, str, str] | None = None) -> Refusal:
        first = violations[0]
        obj, frm, to = step if step else (None, None, None)
        return Refusal(
            obj,
            frm,
            to,
            sorted({v.id for v in violations}),
            first.message,
            first.fix,
            [first.object, *first.related],
        )

    @staticmethod
    def illegal_start(problems: list[Violation], what: str) -> Refusal:
        """The start state itself breaks a rule, so no plan keeps every state legal."""
        refusal = Refusal.of(problems)
        refusal.message = (
            f"the {what} already breaks a rule, so no plan can keep every state legal: "
            f"{refusal.message}"
        )
        return refusal

    @staticmethod
    def past_target(rule: str, obj: str, version: Version, target: Version) -> Refusal:
        """Something already runs a newer version than the target (no downgrades)."""
        violation = Violation(
            rule,
            obj,
            f"{obj} at {version} is past the target {target}",
            f"pick a target at or above {version}; downgrades are not supported",
        )
        return Refusal.of([violation], (obj, str(version), str(target)))

    def to_json(self) -> dict[str, Any]:
        step = (
            {"object": self.object, "from": self.frm, "to": self.to}
            if self.object is not None
            else None
        )
        return {
            "step": step,
            "rules": self.rules,
            "message": self.message,
            "fix": self.fix,
            "objects": self.objects,
        }


@dataclass
class Plan:
    steps: list[PlanStep]
    states_checked: int = 0
    pool_rollouts: int = 0
    refused: Refusal | None = None

    def to_json(self) -> dict[str, Any]:
        if self.refused is not None:
            return {"refused": self.refused.to_json(), "states_checked": self.states_checked}
        return {
            "steps": [s.to_json() for s in self.steps],
            "states_checked": self.states_checked,
            "pool_rollouts": self.pool_rollouts,
        }


def step_order(step_id: str) -> tuple[int, str]:
    """Plan order of step ids (s1, s2, ..., s10), as `number` gives them."""
    digits = step_id.lstrip("s")
    return (int(digits), step_id) if digits.isdecimal() else (0, step_id)


def number(steps: list[tuple[Any, PlanStep]]) -> list[PlanStep]:
    """Sort by key (a topological order) and give ids s1, s2, ... rewriting `after`."""
    ordered = [step for _, step in sorted(steps, key=lambda item: item[0])]
    ids = {step.id: f"s{i}" for i, step in enumerate(ordered, start=1)}
    for step in ordered:
        step.id = ids[step.id]
        step.after = sorted({ids[a] for a in step.after}, key=lambda s: int(s[1:]))
    return ordered


class BlockedError(Exception):
    """No plan gets past this refusal; planners raise it from deep inside a search."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal
