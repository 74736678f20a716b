"""Regular expressions from graph-data, evaluated with RE2.

graph-data regexes (`from` in blocked-edges, `previous.remove_regex` metadata) are
untrusted input. Cincinnati evaluates them with Rust's `regex` crate: linear time, no
look-around, no back-references, `$` only at the end of the text. RE2 has the same
guarantees and semantics, so a pattern like `(a*)*b` cannot stall a build; Python's
backtracking `re` is used only to tell a user *why* RE2 refused a pattern.

We call the binding's low-level `_re2.RE2.Match`: the `re2` module's `search` builds
Python match objects and costs ~5x more per call, and the graph builder runs hundreds of
thousands of searches over short version strings.
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache

import re2
from re2 import _re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # keep RE2's own stderr logging out of our output
_OPTIONS.never_capture = True
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_NO_MATCH = (-1, -1)


class RegexError(ValueError):
    """A pattern RE2 refuses; `outside_re2` tells a foreign feature from a plain typo."""

    def __init__(self, pattern: str, reason: str, *, outside_re2: bool) -> None:
        super().__init__(reason)
        self.pattern = pattern
        self.reason = reason
        self.outside_re2 = outside_re2


class SafeRegex:
    """A compiled RE2 pattern with Cincinnati's matching: an unanchored search."""

    __slots__ = ("_re", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        compiled = _re2.RE2(pattern.encode("utf-8"), _OPTIONS)
        if not compiled.ok():
            raise _explain(pattern, compiled.error())
        self._re = compiled

    def search(self, text: str) -> bool:
        data = _encoded(text)
        return bool(self._re.Match(_UNANCHORED, data, 0, len(data))[0] != _NO_MATCH)

    def __repr__(self) -> str:
        return f"SafeRegex({self.pattern!r})"


@lru_cache(maxsize=1 << 16)
def _encoded(text: str) -> bytes:
    return text.encode("utf-8")


def _explain(pattern: str, error: bytes | str) -> RegexError:
    reason = error.decode("utf-8", "replace") if isinstance(error, bytes) else str(error)
    try:
        with warnings.catch_warnings():  # "Possible nested set" and the like: not for users
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return RegexError(pattern, f"does not compile: {reason}", outside_re2=False)
    return RegexError(
        pattern,
        f"uses a feature outside RE2 (look-around, back-references, possessive or "
        f"conditional groups are not supported): {reason}",
        outside_re2=True,
    )


@lru_cache(maxsize=4096)
def compile_regex(pattern: str) -> SafeRegex:
    """Compile (and memoise) a pattern; raises RegexError with a readable reason."""
    return SafeRegex(pattern)
