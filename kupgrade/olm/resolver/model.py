"""What every resolution policy takes and gives back.

A `Resolution` explains itself (SPEC X4): `reason` is the rule that picked the answer,
`considered` lists every candidate looked at with why it was taken or passed over, and a
subscription that stays says why nothing applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kupgrade.errors import KupgradeError
from kupgrade.olm.index import CatalogIndex
from kupgrade.versions import SemVer

DEFAULT_GLOBAL_NAMESPACE = "olm"


class ResolutionError(KupgradeError):
    """Resolution fails; `error_class` groups the reference resolvers' failures."""

    def __init__(self, message: str, error_class: str) -> None:
        super().__init__(message, rule="F9")
        self.error_class = error_class


@dataclass
class Source:
    """A CatalogSource: where a catalog is served from and how much it is preferred."""

    name: str
    namespace: str
    priority: int
    index: CatalogIndex

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Installed:
    name: str
    version: SemVer


@dataclass
class Subscription:
    package: str
    channel: str
    source: str
    source_namespace: str
    namespace: str
    approval: str = "Automatic"
    starting_csv: str = ""
    name: str = ""

    @property
    def display_name(self) -> str:
        return self.name or self.package


@dataclass
class Considered:
    source: str
    candidate: str
    rule: str
    taken: bool
    why: str

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "candidate": self.candidate,
            "rule": self.rule,
            "taken": self.taken,
            "why": self.why,
        }


@dataclass
class Resolution:
    next: str | None
    source: Source | None
    reason: str
    considered: list[Considered] = field(default_factory=list)
    version: SemVer | None = None

    @property
    def state(self) -> str:
        return "UpgradePending" if self.next else "AtLatestKnown"

    def install_plan(self, approval: str) -> dict[str, Any] | None:
        """The InstallPlan OLM would create: approved at once only under Automatic."""
        if not self.next:
            return None
        automatic = approval == "Automatic"
        return {
            "approval": approval,
            "approved": automatic,
            "phase": "Installing" if automatic else "RequiresApproval",
        }
