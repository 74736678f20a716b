"""Distributed-cloud versions (`1.28.100-gke.146`) and release lines that may jump
(1.16 -> 1.28 is one step; SPEC G2, G4)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kupgrade.errors import VersionError
from kupgrade.versions.semver import MAX_NUMBER, fits_u64

# --- distributed cloud (GDC bare metal) ----------------------------------------------------

_GDC_RE = re.compile(
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-gke\.([0-9]+))?", re.ASCII
)


@dataclass(frozen=True, slots=True, order=True)
class GdcVersion:
    """`1.28.100-gke.146`: `-gke.N` counts builds of a patch and sorts after the bare patch."""

    major: int
    minor: int
    patch: int
    gke: int = -1  # -1: no -gke.N suffix, so the bare patch sorts first

    @staticmethod
    def parse(text: str) -> GdcVersion:
        match = _GDC_RE.fullmatch(text.strip())
        if match is None:
            raise VersionError(
                f"{text!r} is not a distributed-cloud version (MAJOR.MINOR.PATCH[-gke.N])"
            )
        major, minor, patch, gke = match.groups()
        if not all(fits_u64(n) for n in (major, minor, patch, gke or "0")):
            raise VersionError(f"{text[:60]!r} has a number over {MAX_NUMBER}")
        return GdcVersion(int(major), int(minor), int(patch), int(gke) if gke else -1)

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}.{self.patch}"
        return f"{base}-gke.{self.gke}" if self.gke >= 0 else base


# --- release lines -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReleaseLine:
    """The ordered minors of a product; distance is counted in steps along it.

    An empty line is contiguous: the distance is the difference of minors within a major.
    """

    minors: tuple[tuple[int, int], ...] = ()

    @staticmethod
    def of(minors: Iterable[str]) -> ReleaseLine:
        """Build from texts like `["1.14", "1.15", "1.16", "1.28"]` (order as given)."""
        parsed: list[tuple[int, int]] = []
        for item in minors:
            major, sep, minor = str(item).partition(".")
            if not sep or not (fits_u64(major) and fits_u64(minor)):
                raise VersionError(f"release line entry {item!r} is not MAJOR.MINOR")
            parsed.append((int(major), int(minor)))
        if len(set(parsed)) != len(parsed):
            raise VersionError("release line lists a minor twice")
        return ReleaseLine(tuple(parsed))

    def index(self, minor: tuple[int, int]) -> int:
        try:
            return self.minors.index(minor)
        except ValueError:
            known = ", ".join(f"{a}.{b}" for a, b in self.minors)
            raise VersionError(
                f"minor {minor[0]}.{minor[1]} is not on the release line ({known})"
            ) from None

    def distance(self, older: tuple[int, int], newer: tuple[int, int]) -> int:
        """Steps from `older` to `newer` (negative when `newer` is actually older)."""
        if not self.minors:
            if older[0] != newer[0]:
                raise VersionError(f"cannot count minors between majors {older[0]} and {newer[0]}")
            return newer[1] - older[1]
        return self.index(newer) - self.index(older)


GDC_RELEASE_LINE = ReleaseLine.of(["1.14", "1.15", "1.16", "1.28", "1.29", "1.30"])
