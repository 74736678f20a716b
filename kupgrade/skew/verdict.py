"""What every skew rule returns: a violation that explains itself (SPEC X4), and the
verdict on one proposed step (README section 1 of the skew conformance data)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Violation:
    id: str  # the canonical rule id (conformance/skew/README.md)
    object: str
    message: str
    fix: str
    related: tuple[str, ...] = ()  # the other objects the rule compares against

    def to_json(self) -> dict[str, Any]:
        """The `skew check -o json` shape: the offending object first."""
        return {
            "id": self.id,
            "objects": [self.object, *self.related],
            "message": self.message,
            "fix": self.fix,
        }


@dataclass
class Verdict:
    rules: list[str]
    warnings: list[str]
    findings: list[Violation]

    @property
    def verdict(self) -> str:
        return "refused" if self.rules else "warning" if self.warnings else "allowed"

    def to_json(self) -> dict[str, object]:
        first = self.findings[0] if self.findings else None
        return {
            "verdict": self.verdict,
            "rules": self.rules,
            "warnings": self.warnings,
            "message": first.message if first else "the step keeps every skew rule",
            "fix": first.fix if first else "",
            "findings": [f.to_json() for f in self.findings],
        }
