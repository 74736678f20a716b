"""SemVer 2.0 as the update graph uses it: a plain tuple sort key, exact round-tripping,
and the `+arch` build metadata Cincinnati ignores when comparing."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kupgrade.errors import VersionError

# The regular expression recommended by semver.org, ASCII only.
_SEMVER_RE = re.compile(
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-((?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
    r"(?:\.(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?",
    re.ASCII,
)

# A numeric component is an unsigned 64-bit integer in the reference parsers (blang/semver
# and apimachinery's util/version use strconv.ParseUint): larger is refused, and refused
# before Python is asked to convert thousands of digits.
MAX_NUMBER = (1 << 64) - 1
MAX_DIGITS = len(str(MAX_NUMBER))

PreKey = tuple[tuple[int, int | str], ...]
Precedence = tuple[int, int, int, int, PreKey]


def _pre_key(pre: Sequence[str]) -> PreKey:
    """SemVer 2.0 §11: numeric identifiers sort numerically and before alphanumeric ones."""
    return tuple((0, int(p)) if p.isdecimal() else (1, p) for p in pre)


@dataclass(frozen=True, slots=True, eq=False)
class SemVer:
    """A SemVer 2.0 version.

    `==`, `<` and `hash` follow SemVer precedence, which ignores build metadata, as
    Cincinnati does (`4.7.4+amd64 == 4.7.4`). Use `identical` or `sort_key` when the build
    matters (graph node identity, canonical output order).
    """

    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    @staticmethod
    def parse(text: str) -> SemVer:
        """Parse strict SemVer 2.0 text; raise VersionError naming the text otherwise."""
        version = parse_semver(text)
        if version is None and _SEMVER_RE.fullmatch(text):
            raise VersionError(
                f"{text[:60]!r}{'...' if len(text) > 60 else ''} has a number over "
                f"{MAX_NUMBER} (the largest a version component can be)"
            )
        if version is None:
            raise VersionError(
                f"{text!r} is not a SemVer 2.0 version (MAJOR.MINOR.PATCH[-PRE][+BUILD])"
            )
        return version

    @staticmethod
    def try_parse(text: str) -> SemVer | None:
        return parse_semver(text)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"SemVer({str(self)!r})"

    @property
    def precedence(self) -> Precedence:
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, _pre_key(self.pre))

    @property
    def sort_key(self) -> tuple[Precedence, str]:
        """A total order: precedence, then the build text (so `+amd64` before `+s390x`)."""
        return (self.precedence, ".".join(self.build))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SemVer):
            return NotImplemented
        return self.precedence == other.precedence

    def __hash__(self) -> int:
        return hash(self.precedence)

    def __lt__(self, other: SemVer) -> bool:
        return self.precedence < other.precedence

    def __le__(self, other: SemVer) -> bool:
        return self.precedence <= other.precedence

    def __gt__(self, other: SemVer) -> bool:
        return self.precedence > other.precedence

    def __ge__(self, other: SemVer) -> bool:
        return self.precedence >= other.precedence

    def identical(self, other: SemVer) -> bool:
        """Equal including build metadata (what Cincinnati calls 'exactly')."""
        return self.precedence == other.precedence and self.build == other.build

    def with_build(self, *build: str) -> SemVer:
        return SemVer(self.major, self.minor, self.patch, self.pre, tuple(build))

    def without_build(self) -> SemVer:
        return self.with_build()


@functools.lru_cache(maxsize=1 << 16)
def parse_semver(text: str) -> SemVer | None:
    match = _SEMVER_RE.fullmatch(text)
    if match is None:
        return None
    major, minor, patch, pre, build = match.groups()
    numbers = [major, minor, patch, *(p for p in (pre or "").split(".") if p.isdigit())]
    if not all(fits_u64(n) for n in numbers):
        return None
    return SemVer(
        int(major),
        int(minor),
        int(patch),
        tuple(pre.split(".")) if pre else (),
        tuple(build.split(".")) if build else (),
    )


def fits_u64(digits: str) -> bool:
    """Whether a string of ASCII digits is a number a version component can be."""
    return (
        digits.isascii()
        and digits.isdigit()
        and len(digits) <= MAX_DIGITS
        and int(digits) <= MAX_NUMBER
    )


def version_sort_key(text: str) -> tuple[int, tuple[Precedence, str], str]:
    """Canonical order of version strings: SemVer ones by precedence, then the rest by text."""
    parsed = parse_semver(text)
    if parsed is None:
        return (1, ((0, 0, 0, 0, ()), ""), text)
    return (0, parsed.sort_key, text)


# --- the +arch convention of the update graph ---------------------------------------------


def split_arch(text: str) -> tuple[str, str | None]:
    """Split `4.9.0+amd64` into (`4.9.0`, `amd64`); a version without build has no arch."""
    base, sep, build = text.partition("+")
    return (base, build) if sep else (text, None)


def with_arch(version: str | SemVer, arch: str) -> str:
    """Give a version the build `arch`, replacing any build it had (Cincinnati's annotate)."""
    parsed = version if isinstance(version, SemVer) else SemVer.parse(version)
    return str(parsed.with_build(arch))


def sort_versions_desc(versions: list[str]) -> list[str]:
    """SemVer precedence, newest first; versions that are not SemVer last, descending as text."""
    semver = [(v, p) for v in versions if (p := SemVer.try_parse(v)) is not None]
    semver.sort(key=lambda pair: pair[1].sort_key, reverse=True)
    other = sorted((v for v in versions if SemVer.try_parse(v) is None), reverse=True)
    return [v for v, _ in semver] + other
