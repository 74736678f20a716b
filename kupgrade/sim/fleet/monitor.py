"""The fleet's skew rules, checked on every state a rehearsal passes through (SPEC G2,
G4, H2-H6, X5).

A state is what each member's components run, as its platform reads them (the fleet part
of sim/gdc/fleet.py and sim/kubernetes/fleet.py). Each change is recorded in the fleet's
event log (reason `VersionChanged`, object `CLUSTER/COMPONENT`, message `OLD -> NEW`; the
first state as `Version` events), so every recorded state can be rebuilt and checked
again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kupgrade.skew.verdict import Violation


class FleetRules(Protocol):
    """A platform's skew rules over a fleet's recorded states."""

    def scope(self, name: str) -> list[str]:
        """The members a change to `name` can break a rule of."""

    def check(self, names: list[str], states: dict[str, dict[str, str]]) -> list[Violation]:
        """Every rule the states of `names` break."""


@dataclass
class Finding:
    """A rule broken at a recorded state: which state, which rule, which objects."""

    at: float
    cluster: str
    change: str  # the change that led to the state
    violation: Violation

    def to_json(self) -> dict[str, Any]:
        v = self.violation
        return {
            "at": self.at,
            "cluster": self.cluster,
            "change": self.change,
            "rule": v.id,
            "objects": [v.object, *v.related],
            "message": v.message,
            "fix": v.fix,
        }


def unique(found: Any) -> list[Violation]:
    seen: set[tuple[str, str]] = set()
    out = []
    for v in found:
        if (v.id, v.object) not in seen:
            seen.add((v.id, v.object))
            out.append(v)
    return out


Record = Callable[[float, str, str, str], None]


class Monitor:
    """The last recorded state of every member; each change recorded, then checked."""

    def __init__(
        self, rules: FleetRules, read: Callable[[str], dict[str, str]], record: Record
    ) -> None:
        self.rules = rules
        self.read = read
        self.record = record
        self.states: dict[str, dict[str, str]] = {}

    def load(self, names: list[str]) -> None:
        """The state as the stores hold it (a resumed run: recorded already)."""
        self.states = {name: self.read(name) for name in names}

    def check_all(self, names: list[str]) -> list[Violation]:
        """Every rule the loaded state breaks, scope by scope."""
        return unique(
            v for name in names for v in self.rules.check(self.rules.scope(name), self.states)
        )

    def first(self, names: list[str], at: float) -> None:
        """The rehearsal's first state, recorded whole (checked before: `check_all`)."""
        self.load(names)
        for name in names:
            for component, version in sorted(self.states[name].items()):
                self.record(at, f"{name}/{component}", "Version", version)

    def observe(self, name: str, at: float) -> list[Finding]:
        """Record what changed in `name` since the last state; the rules broken now."""
        new = self.read(name)
        old = self.states.get(name, {})
        changes = []
        for component in sorted(old.keys() | new.keys()):
            before, after = old.get(component, "absent"), new.get(component, "absent")
            if before != after:
                self.record(at, f"{name}/{component}", "VersionChanged", f"{before} -> {after}")
                changes.append(f"{name}/{component} {before} -> {after}")
        if not changes:
            return []
        self.states[name] = new
        found = self.rules.check(self.rules.scope(name), self.states)
        return [Finding(at, name, "; ".join(changes), v) for v in found]
