"""JSON from untrusted bytes: msgspec's decoder behind UTF-8, depth and size guards."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from kupgrade.errors import InputError
from kupgrade.intake.limits import DEPTH
from kupgrade.intake.text import decode_utf8, not_utf8

_WHITESPACE = " \t\n\r"
_CONTAINERS = (dict, list)  # a tuple: isinstance with it is quicker than with dict | list
TOO_MANY_DIGITS = "a number has more digits than any integer can (4,300 at most)"


def decode_json(data: bytes | str, source: str, what: str = "JSON") -> Any:
    """One JSON value; InputError naming `source` for bad bytes, bad syntax or deep nesting."""
    max_depth = DEPTH.value()
    try:
        with stack_for(max_depth):
            value = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise InputError(f"not valid {what}: {exc}", file=source) from None
    except UnicodeDecodeError:
        raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
        raise not_utf8(raw, source) from None
    except RecursionError:
        raise DEPTH.exceeded("the nesting", source) from None
    check_depth(value, source, raw_hint=data)
    return value


def decode_json_stream(data: bytes | str, source: str) -> Iterator[Any]:
    """Concatenated JSON values (opm's blob streams), each depth-checked."""
    text = decode_utf8(data, source) if isinstance(data, bytes) else data
    decoder = json.JSONDecoder()
    position, end = len(text) - len(text.lstrip(_WHITESPACE)), len(text)
    max_depth = DEPTH.value()
    while position < end:
        start = position
        try:
            with stack_for(max_depth):
                value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise InputError(f"not a JSON stream: {exc}", file=source, rule="opm load") from None
        except ValueError:  # Python refuses integers of more than 4,300 digits
            raise InputError(TOO_MANY_DIGITS, file=source, rule="opm load") from None
        except RecursionError:
            raise DEPTH.exceeded("the nesting", source) from None
        # As check_depth's raw_hint, counted in place: most of a catalog's blobs have
        # fewer brackets than the limit, and need no walk.
        if _brackets(text, start, position) > max_depth:
            check_depth(value, source, max_depth=max_depth)
        yield value
        while position < end and text[position] in _WHITESPACE:
            position += 1


def go_json_type(value: Any) -> str:
    """The word Go's encoding/json uses for a decoded value's JSON type in its
    UnmarshalTypeError ("cannot unmarshal number into ...")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def check_depth(
    value: Any, source: str, raw_hint: bytes | str | None = None, max_depth: int | None = None
) -> None:
    """Refuse values nested deeper than KUPGRADE_MAX_DEPTH (walked without recursion).

    With the raw text at hand the walk is skipped when it cannot find anything: a document
    with fewer brackets than the limit cannot be nested deeper than it. A reader of many
    values reads the limit once and passes it as `max_depth`.
    """
    if max_depth is None:
        max_depth = DEPTH.value()
    if raw_hint is not None and _brackets(raw_hint) <= max_depth:
        return
    # Level by level, the containers of each level gathered by a comprehension: under half
    # the time of a stack of (item, depth) pairs, on a catalog's 856 blobs (bench/olm.py).
    level, depth = [value], 1
    while level:
        if depth > max_depth:
            raise DEPTH.exceeded("the nesting", source)
        below: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                below += [c for c in item.values() if isinstance(c, _CONTAINERS)]
            elif isinstance(item, list):
                below += [c for c in item if isinstance(c, _CONTAINERS)]
        level, depth = below, depth + 1


def _brackets(raw: bytes | str, start: int = 0, end: int | None = None) -> int:
    """Opening brackets in raw[start:end] (counted in place): no value in it is nested
    deeper than that."""
    if isinstance(raw, bytes):
        return raw.count(b"[", start, end) + raw.count(b"{", start, end)
    return raw.count("[", start, end) + raw.count("{", start, end)


@contextmanager
def stack_for(depth: int) -> Iterator[None]:
    """Room on Python's stack for a decoder that recurses once per level up to `depth`."""
    saved = sys.getrecursionlimit()
    needed = _frames_in_use() + depth * 4 + 200
    if needed > saved:
        sys.setrecursionlimit(needed)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def _frames_in_use() -> int:
    frame, count = sys._getframe(), 0
    while frame is not None:
        count += 1
        frame = frame.f_back  # type: ignore[assignment]
    return count
