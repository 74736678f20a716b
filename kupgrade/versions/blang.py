"""Go's blang/semver parser, for the controller's and OLM's exact error texts."""

from __future__ import annotations

import re
import unicodedata

from kupgrade.errors import VersionError
from kupgrade.versions.semver import SemVer, parse_semver

# --- Go's blang/semver, for the controller's exact error texts -----------------------------

_DIGITS = frozenset("0123456789")
_ALNUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


# Printable ASCII but the quote and the backslash: quoted as it is. Names, versions and
# image references are such text, and a catalog's load quotes thousands of them for the
# messages it might give (olm/validate.py).
_AS_IS = re.compile(r"[ !#-\[\]-~]*")


def _go_printable(char: str) -> bool:
    """Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and ASCII space."""
    return char == " " or unicodedata.category(char)[0] in "LMNPS"


def go_quote(text: str) -> str:
    """Go's %q (strconv.Quote), which the reference tools use in their messages.

    Hand-written because no library reproduces Go's rules: printable runes as they are,
    the C escapes, other control and non-printable runes as \\x / \\u / \\U, and bytes
    that were not UTF-8 (surrogate escapes here) as \\xNN.
    """
    if _AS_IS.fullmatch(text):
        return f'"{text}"'
    out = ['"']
    for char in text:
        code = ord(char)
        if char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte kept by surrogateescape
            out.append(f"\\x{code - 0xDC00:02x}")
        elif _go_printable(char):
            out.append(char)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _blang_number(text: str, what: str) -> str | None:
    if not set(text) <= _DIGITS:
        return f"Invalid character(s) found in {what} number {go_quote(text)}"
    if len(text) > 1 and text[0] == "0":
        return f"{what.capitalize()} number must not contain leading zeroes {go_quote(text)}"
    if not text:
        return 'strconv.ParseUint: parsing "": invalid syntax'
    if len(text) > 20 or int(text) >= 1 << 64:  # the length first: no 5,000-digit int()
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
        if len(identifier) > 20 or int(identifier) >= 1 << 64:  # NewPRVersion's ParseUint
            return f"strconv.ParseUint: parsing {go_quote(identifier)}: value out of range"
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
    version = parse_semver(text)
    if version is None:  # blang accepts it but SemVer 2.0 does not (e.g. a > 64-bit number)
        raise VersionError(f"{text!r} is not a SemVer 2.0 version")
    return version
