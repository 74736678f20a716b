"""Version schemes used across kupgrade.

* OpenShift releases are SemVer 2.0; the update graph appends the architecture as build
  metadata (`4.9.0+amd64`) and Cincinnati compares versions *ignoring* build metadata.
* Kubernetes components print `v1.30.2` (SemVer with a `v`).
* Distributed-cloud (GDC bare metal) versions look like `1.28.100-gke.146`; `-gke.N` is a
  build counter of the patch, not a pre-release: it sorts *after* `1.28.100`.
* Minor distance is counted along a release line that may jump (GDC goes 1.16 -> 1.28,
  one step): SPEC G2, G4.

Kubernetes versions are x.y.z (SPEC H1); skew rules compare their minors (SPEC H2-H6).

We parse SemVer ourselves rather than through the `semver` package because every caller
needs a plain tuple sort key (sorting tens of thousands of graph nodes through a cmp
function is slow), exact round-tripping of the text, and the two non-SemVer readings above.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Iterable, Sequence
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

PreKey = tuple[tuple[int, int | str], ...]
Precedence = tuple[int, int, int, int, PreKey]


def _pre_key(pre: Sequence[str]) -> PreKey:
    """SemVer 2.0 §11: numeric identifiers sort numerically and before alphanumeric ones."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre)


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
        version = _parse_semver(text)
        if version is None:
            raise VersionError(
                f"{text!r} is not a SemVer 2.0 version (MAJOR.MINOR.PATCH[-PRE][+BUILD])"
            )
        return version

    @staticmethod
    def try_parse(text: str) -> SemVer | None:
        return _parse_semver(text)

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
def _parse_semver(text: str) -> SemVer | None:
    match = _SEMVER_RE.fullmatch(text)
    if match is None:
        return None
    major, minor, patch, pre, build = match.groups()
    return SemVer(
        int(major),
        int(minor),
        int(patch),
        tuple(pre.split(".")) if pre else (),
        tuple(build.split(".")) if build else (),
    )


def version_sort_key(text: str) -> tuple[int, tuple[Precedence, str], str]:
    """Canonical order of version strings: SemVer ones by precedence, then the rest by text."""
    parsed = _parse_semver(text)
    if parsed is None:
        return (1, ((0, 0, 0, 0, ()), ""), text)
    return (0, parsed.sort_key, text)


# --- Go's blang/semver, for the controller's exact error texts -----------------------------

_DIGITS = frozenset("0123456789")
_ALNUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


def go_quote(text: str) -> str:
    """Go's %q for the strings version errors quote (printable text; escapes " and \\)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _blang_number(text: str, what: str) -> str | None:
    if not set(text) <= _DIGITS:
        return f"Invalid character(s) found in {what} number {go_quote(text)}"
    if len(text) > 1 and text[0] == "0":
        return f"{what.capitalize()} number must not contain leading zeroes {go_quote(text)}"
    if not text:
        return 'strconv.ParseUint: parsing "": invalid syntax'
    if int(text) >= 1 << 64:
        return f"strconv.ParseUint: parsing {go_quote(text)}: value out of range"
    return None


def prerelease_error(identifier: str) -> str | None:
    """blang/semver's NewPRVersion error for one pre-release identifier, or None."""
    if not identifier:
        return "Prerelease is empty"
    if set(identifier) <= _DIGITS:
        if len(identifier) > 1 and identifier[0] == "0":
            return (
                f"Numeric PreRelease version must not contain leading zeroes {go_quote(identifier)}"
            )
    elif not set(identifier) <= _ALNUM:
        return f"Invalid character(s) found in prerelease {go_quote(identifier)}"
    return None


def blang_error(text: str) -> str | None:
    """The error github.com/blang/semver/v4 Parse gives for `text`, or None when it parses.

    The version controller quotes these texts in release-metadata and precondition errors;
    a user searching for the message finds the same words as on a real cluster.
    """
    if not text:
        return "Version string empty"
    parts = text.split(".", 2)
    if len(parts) != 3:
        return "No Major.Minor.Patch elements found"
    for value, what in ((parts[0], "major"), (parts[1], "minor")):
        if error := _blang_number(value, what):
            return error
    patch, _, build = parts[2].partition("+")
    patch, dash, pre = patch.partition("-")
    if error := _blang_number(patch, "patch"):
        return error
    for identifier in pre.split(".") if dash else ():
        if error := prerelease_error(identifier):
            return error
    for identifier in build.split(".") if "+" in parts[2] else ():
        if not identifier:
            return "Build meta data is empty"
        if not set(identifier) <= _ALNUM:
            return f"Invalid character(s) found in build meta data {go_quote(identifier)}"
    return None


def parse_blang(text: str) -> SemVer:
    """Parse `text` exactly as blang/semver's Parse does, with its error text on failure."""
    if problem := blang_error(text):
        raise VersionError(problem)
    version = _parse_semver(text)
    if version is None:  # blang accepts it but SemVer 2.0 does not (e.g. a > 64-bit number)
        raise VersionError(f"{text!r} is not a SemVer 2.0 version")
    return version


# --- blang/semver ranges (olm.skipRange, SPEC F8) -------------------------------------------
#
# No Python library parses blang's grammar: it is not npm's (no ~ ^ *, pre-releases are not
# excluded), and its tokenizer has quirks that real catalogs depend on (a space after < > =
# does not split, one-character tokens vanish, any token with an `x` is rewritten as a
# wildcard). This follows github.com/blang/semver/v4 v4.0.0 range.go step by step.


class RangeError(VersionError):
    """A skipRange that blang/semver's ParseRange rejects; the message is the library's."""


_COMPARATORS: dict[str, Callable[[Precedence, Precedence], bool]] = {
    "": operator.eq,
    "=": operator.eq,
    "==": operator.eq,
    "!": operator.ne,
    "!=": operator.ne,
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


def _split_and_trim(text: str) -> list[str]:
    tokens: list[str] = []
    last, last_char = 0, ""
    for i, char in enumerate(text):
        if char == " " and last_char not in (">", "<", "="):
            if last < i - 1:
                tokens.append(text[last:i])
            last = i + 1
        elif char != " ":
            last_char = char
    if last < len(text) - 1:
        tokens.append(text[last:])
    return [token.replace(" ", "") for token in tokens]


def _split_or(tokens: list[str]) -> list[list[str]]:
    groups: list[list[str]] = []
    last = 0
    for i, token in enumerate(tokens):
        if token == "||":
            if i == 0:
                raise RangeError("First element in range is '||'")
            groups.append(tokens[last:i])
            last = i + 1
    if last == len(tokens):
        raise RangeError("Last element in range is '||'")
    groups.append(tokens[last:])
    return groups


def _split_comparator(token: str) -> tuple[str, str]:
    for i, char in enumerate(token):
        if char.isdecimal():
            return token[:i].strip(), token[i:]
    raise RangeError(f"Could not get version from string: {go_quote(token)}")


def _go_atoi_increment(version: str, index: int) -> str:
    parts = version.split(".")
    try:
        parts[index] = str(int(parts[index], 10) + 1)
    except (ValueError, IndexError):
        return ""
    return ".".join(parts)


def _expand_wildcard(token: str) -> list[str]:
    op, version = _split_comparator(token)
    if "x" not in token:
        return [token]
    parts = version.split(".")
    kind = len(parts) if parts[-1] == "x" and len(parts) in (2, 3) else 0
    flat = version.replace(".x.x", ".x", 1).replace(".x", ".0", 1)
    if len(flat.split(".")) == 2:
        flat += ".0"
    expanded: list[str] = []
    result_op, increment = "", False
    if op == ">":
        result_op, increment = ">=", True
    elif op == ">=":
        result_op = ">="
    elif op == "<":
        result_op = "<"
    elif op == "<=":
        result_op, increment = "<", True
    elif op in ("", "=", "=="):
        expanded.append(">=" + flat)
        result_op, increment = "<", True
    elif op in ("!=", "!"):
        expanded.append("<" + flat)
        result_op, increment = ">=", True
    if not increment:
        result = flat
    elif kind == 3:
        result = _go_atoi_increment(flat, 1)
    elif kind == 2:
        result = _go_atoi_increment(flat, 0)
    else:
        result = ""
    expanded.append(result_op + result)
    return expanded


@dataclass(frozen=True, slots=True)
class SemverRange:
    """A parsed blang range: OR of ANDs of (comparator, version)."""

    text: str
    alternatives: tuple[tuple[tuple[str, SemVer], ...], ...]

    def __contains__(self, version: SemVer) -> bool:
        key = version.precedence
        return any(
            all(_COMPARATORS[op](key, bound.precedence) for op, bound in conjunction)
            for conjunction in self.alternatives
        )

    def __str__(self) -> str:
        return self.text


@functools.lru_cache(maxsize=4096)
def parse_range(text: str) -> SemverRange:
    """Parse `text` as blang/semver v4 ParseRange does; raise RangeError with its message."""
    groups = [
        [expanded for token in group for expanded in _expand_wildcard(token)]
        for group in _split_or(_split_and_trim(text))
    ]
    alternatives = []
    for group in groups:
        conjunction = []
        for token in group:
            op, version = _split_comparator(token)
            if op not in _COMPARATORS:
                detail = f"Could not parse comparator {go_quote(op)} in {go_quote(op + version)}"
                raise RangeError(f"Could not parse Range {go_quote(token)}: {detail}")
            if problem := blang_error(version):
                detail = f"Could not parse version {go_quote(version)} in {go_quote(op + version)}: {problem}"
                raise RangeError(f"Could not parse Range {go_quote(token)}: {detail}")
            conjunction.append((op, parse_blang(version)))
        alternatives.append(tuple(conjunction))
    return SemverRange(text, tuple(alternatives))


# --- the +arch convention of the update graph ---------------------------------------------


def split_arch(text: str) -> tuple[str, str | None]:
    """Split `4.9.0+amd64` into (`4.9.0`, `amd64`); a version without build has no arch."""
    base, sep, build = text.partition("+")
    return (base, build) if sep else (text, None)


def with_arch(version: str | SemVer, arch: str) -> str:
    """Give a version the build `arch`, replacing any build it had (Cincinnati's annotate)."""
    parsed = version if isinstance(version, SemVer) else SemVer.parse(version)
    return str(parsed.with_build(arch))


# --- Kubernetes ------------------------------------------------------------------------------


def parse_kube(text: str) -> SemVer:
    """Parse a Kubernetes version (`v1.30.2`, `1.30.2`, `v1.31.0-alpha.1+abc`)."""
    stripped = text[1:] if text.startswith("v") else text
    version = _parse_semver(stripped)
    if version is None:
        raise VersionError(f"{text!r} is not a Kubernetes version (vMAJOR.MINOR.PATCH)")
    return version


def format_kube(version: SemVer) -> str:
    return f"v{version}"


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
            if not sep or not major.isdigit() or not minor.isdigit():
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
