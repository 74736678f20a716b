"""Errors a user can act on.

Every problem caused by input (a file, a flag, a request) is raised as a `KupgradeError`
that names where it is (file, field), which rule it breaks, and what to do. The CLI prints
these as one line and exits non-zero; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import re

# "SPEC C5", "SPEC D1-D3", "F4": ids of kupgrade's own specification.
_SPEC_ID = re.compile(r"^(SPEC )?[A-HX]\d")


class KupgradeError(Exception):
    """A user-facing error with enough context to fix the input without reading code."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        field: str | None = None,
        rule: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.field = field
        self.rule = rule
        self.hint = hint

    def __str__(self) -> str:
        where = ": ".join(part for part in (self.file, self.field) if part)
        text = f"{where}: {self.message}" if where else self.message
        if self.rule and not _SPEC_ID.match(self.rule):
            # Rule ids of our own specification mean nothing to a user (it is not shipped);
            # they stay in `to_dict` for scripts. Names of the reference tools' steps stay.
            text += f" [{self.rule}]"
        if self.hint:
            text += f"; {self.hint}"
        return text

    def to_dict(self) -> dict[str, str]:
        """The error as JSON for `-o json` consumers."""
        out = {"error": self.message}
        for key in ("file", "field", "rule", "hint"):
            value = getattr(self, key)
            if value:
                out[key] = value
        return out


class VersionError(KupgradeError, ValueError):
    """A version string that does not follow the scheme it is read with."""


class InputError(KupgradeError):
    """A file or document that cannot be read as the format it must have."""


class BuildError(KupgradeError):
    """The update graph cannot be built from the given inputs (Cincinnati fails too)."""
