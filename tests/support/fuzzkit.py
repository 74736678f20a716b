"""Mutations of real inputs for the fuzz suite (issue 17): bit flips, truncation,
splicing, repetition, invalid encodings, deep nesting and alias expansion on bytes, and
type swaps on decoded documents. Each reader is run under a wall-clock alarm; the property
is always the same: an answer, or the reader's own one-line error — never another
exception and never a hang.

`KUPGRADE_FUZZ_SECONDS` turns the suite into a time-bounded fuzzing run (`make fuzz`):
each target then repeats fresh rounds of examples until its share of the time is used,
and prints how many inputs it tried.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("KUPGRADE_FUZZ_EXAMPLES", "40"))
FUZZ_SECONDS = float(os.environ.get("KUPGRADE_FUZZ_SECONDS", "0"))
PER_EXAMPLE_S = 10.0
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)

BAD_BYTES = [
    b"\xff",
    b"\xc3\x28",
    b"\xed\xa0\x80",  # a UTF-16 surrogate encoded in UTF-8
    b"\xef\xbb\xbf",  # a byte-order mark in the middle
    b"\x00",
    b"\xf4\x90\x80\x80",  # past U+10FFFF
    "é".encode("latin-1"),
    "\u2028".encode(),
    b"1" * 5000,  # more digits than Python converts to an int
    b"9" * 400 + b".5e99999",
]
NESTING = [b"[" * 5000, b"{" * 5000, b'{"a":' * 3000, b"- " * 3000, b"a:\n" + b" a:\n" * 3000]
ALIASES = [
    b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    b"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
    b"r: &r [*r]\n",
    b"k: &k {x: *k}\n",
]
WEIRD_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    10**40,
    math.nan,
    math.inf,
    1.5,
    "",
    "x" * 10_000,
    "1.2.3",
    "v999999999999999999999.0.0",
    "\u0000",
    [],
    {},
    [None],
    {"": None},
]


def _apply(data: bytes, op: tuple[str, int, bytes]) -> bytes:
    kind, position, chunk = op
    at = position % (len(data) + 1)
    if kind == "flip" and data:
        index = position % len(data)
        return data[:index] + bytes([data[index] ^ (1 << (position % 8))]) + data[index + 1 :]
    if kind == "truncate":
        return data[:at]
    if kind == "insert":
        return data[:at] + chunk + data[at:]
    if kind == "repeat" and data:
        start = position % len(data)
        piece = data[start : start + 1 + position % 64]
        return data[:at] + piece * (1 + position % 200) + data[at:]
    if kind == "delete" and data:
        return data[:at] + data[at + 1 + position % 32 :]
    return data


def mutated(seeds: list[bytes]) -> st.SearchStrategy[bytes]:
    """A real input with up to five byte-level mutations."""
    chunk = st.one_of(
        st.sampled_from(BAD_BYTES + NESTING + ALIASES),
        st.binary(max_size=64),
        st.sampled_from(seeds).map(lambda s: s[: len(s) // 2]),  # splicing
    )
    op = st.tuples(
        st.sampled_from(["flip", "truncate", "insert", "repeat", "delete"]),
        st.integers(min_value=0, max_value=2**31),
        chunk,
    )
    return st.builds(_fold, st.sampled_from(seeds), st.lists(op, max_size=5))


def _fold(seed: bytes, ops: list[tuple[str, int, bytes]]) -> bytes:
    for op in ops:
        seed = _apply(seed, op)
    return seed


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from _paths(value, (*prefix, index))


def _replace(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        out = dict(doc)
        if value is _DELETE and not rest:
            out.pop(head, None)
        else:
            out[head] = _replace(doc[head], rest, value)
        return out
    out_list = list(doc)
    if value is _DELETE and not rest:
        del out_list[head]
    else:
        out_list[head] = _replace(doc[head], rest, value)
    return out_list


_DELETE = object()


def swapped(seeds: list[Any]) -> st.SearchStrategy[Any]:
    """A decoded document with up to four values swapped for another type or removed."""

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        doc = draw(st.sampled_from(seeds))
        for _ in range(draw(st.integers(0, 4))):
            paths = list(_paths(doc))
            path = draw(st.sampled_from(paths))
            value = draw(st.sampled_from([*WEIRD_VALUES, _DELETE])) if path else {}
            doc = _replace(doc, path, value)
        return doc

    return build()


class HangError(Exception):
    """A reader took longer than PER_EXAMPLE_S on one input."""


@contextlib.contextmanager
def alarm(seconds: float = PER_EXAMPLE_S) -> Iterator[None]:
    def fire(signum: int, frame: object) -> None:
        raise HangError(f"no answer within {seconds}s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check(
    reader: Callable[[Any], object], value: Any, allowed: tuple[type[BaseException], ...]
) -> None:
    """The property: `reader(value)` answers or raises one of `allowed`, within the alarm."""
    with alarm():
        try:
            reader(value)
        except allowed as error:
            text = str(error)
            assert text.strip(), f"{type(error).__name__} with no message"
            assert "Traceback" not in text


def fuzz(
    name: str,
    strategy: st.SearchStrategy[Any],
    reader: Callable[[Any], object],
    allowed: tuple[type[BaseException], ...],
    share: float,
) -> int:
    """Run the property over `strategy`; in fuzzing mode, for `share` of the time budget."""
    count = 0

    @FUZZ_SETTINGS
    @given(strategy)
    def one_round(value: Any) -> None:
        nonlocal count
        count += 1
        check(reader, value, allowed)

    deadline = time.monotonic() + FUZZ_SECONDS * share
    one_round()
    while time.monotonic() < deadline:
        one_round()
    if FUZZ_SECONDS:
        print(f"\nfuzz {name}: {count} inputs")
    return count
