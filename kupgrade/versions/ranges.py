"""blang/semver ranges (olm.skipRange, SPEC F8), written step by step from its range.go."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass

from kupgrade.errors import VersionError
from kupgrade.versions.blang import blang_error, go_quote, parse_blang
from kupgrade.versions.semver import Precedence, SemVer

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
