"""The snapshot's bulk reader reads exactly what the line-by-line reader reads: the same
series, points and values, or the same error on the same line, on drawn snapshots with
everything a file may hold (comments, empty lines, escapes, spaces in label values,
exemplars, carriage returns, Inf and NaN, fractional, duplicate, out-of-order and huge
timestamps, text after '# EOF', no '# EOF'), cut into chunks of any size."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.errors import InputError
from kupgrade.risks.promql.snapshot import Reader, _chunks
from tests.support.fuzzkit import alarm

KEYS = [
    "up",
    'up{job="a"}',
    'up{job="b c"}',
    'm{a="x",b="y\\\\n\\\\"q"}',
    'm{a="1",a="2"}',
    "bad name",
    "m{a=1}",
    'm{a="x"',
]
VALUES = [
    "1",
    "0.5",
    "-2e3",
    "+Inf",
    "-Inf",
    "NaN",
    "nan",
    ".5",
    "1.",
    "1.e5",
    "+.5",
    "-0",
    "1e+05",
    "x",
    "1_0",
    "Nan",
    "1e",
    "5-",
    "-",
    "1.2.3",
    "e5",
]
TIMES = [
    "1",
    "2",
    "3",
    "10",
    "10.5",
    "0.001",
    "-4",
    "-0",
    "007",
    "1e3",
    "1e400",
    "+5",
    "999999999999",
    "9999999999999",
    "99999999999999",
    "-999999999999",
    "nan",
    "x",
    "1-2",
    "--3",
    "1_0",
]
OTHERS = ["", "# HELP up Help text", "# TYPE up gauge", "# UNIT up seconds", "# bogus", "#"]


@st.composite
def snapshots(draw: Any) -> str:
    """Half of them plain (what the bulk reader takes), half with anything at all."""
    if draw(st.booleans()):
        return draw(plain())
    lines = []
    for _ in range(draw(st.integers(0, 40))):
        kind = draw(st.integers(0, 9))
        if kind < 7:
            line = f"{draw(st.sampled_from(KEYS))} {draw(st.sampled_from(VALUES))} {draw(st.sampled_from(TIMES))}"
            extra = draw(st.sampled_from(["", "", "", ' # {t="1"} 1', "\r", "  "]))
            lines.append(line + extra)
        else:
            lines.append(draw(st.sampled_from(OTHERS)))
    # Runs of one series with increasing times, as real files have them.
    for key in draw(st.lists(st.sampled_from(KEYS[:4]), max_size=3)):
        start = draw(st.integers(0, 50))
        lines += [f"{key} {i}.25 {start + i}" for i in range(draw(st.integers(1, 30)))]
    lines = draw(st.permutations(lines)) if draw(st.booleans()) else lines
    tail = draw(
        st.sampled_from(["# EOF\n", "# EOF", "# EOF\n\n", "", "# EOF\nup 1 99\n", "# EOF\r\n"])
    )
    return "\n".join(lines) + ("\n" if lines else "") + tail


@st.composite
def plain(draw: Any) -> str:
    """Runs of series with increasing times, HELP/TYPE lines, empty lines, '# EOF'."""
    lines: list[str] = []
    for key in draw(st.lists(st.sampled_from(KEYS[:4]), max_size=6)):
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(OTHERS[:4])))
        start = draw(st.integers(-5, 50))
        step = draw(st.sampled_from([1, 30, 0.5]))
        values = st.sampled_from(VALUES[:9])
        lines += [
            f"{key} {draw(values)} {start + i * step:g}" for i in range(draw(st.integers(1, 30)))
        ]
    return "\n".join([*lines, "# EOF", ""])


def _read(text: str, size: int, bulk: bool) -> Any:
    reader = Reader("snap.om")
    chunks = _chunks(io.StringIO(text), size)
    try:
        if bulk:
            series = reader.read(chunks)
        else:  # every chunk line by line: no plain reading taken
            for chunk in chunks:
                reader.lines(chunk)
            series = reader.finish()
    except InputError as exc:
        return ("error", exc.message, exc.field)
    return sorted((s.labels, s.ts.tobytes(), s.vals.tobytes()) for s in series)


@settings(max_examples=400, deadline=None)
@given(snapshots(), st.integers(1, 300))
def test_the_bulk_reader_reads_what_the_line_reader_reads(text: str, size: int) -> None:
    assert _read(text, size, bulk=True) == _read(text, size, bulk=False)
    assert _read(text, size, bulk=True) == _read(text, 1 << 22, bulk=True)  # chunking is unseen


def test_a_bad_value_after_many_good_ones_is_refused_in_bounded_time() -> None:
    """The bulk reader checks a chunk's values as one string; a number pattern that can
    split a run of digits in several ways backtracks exponentially over such a string
    when its last value is bad (found by fuzzing). Refused within the fuzzers' alarm."""
    lines = [f'up{{i="{i % 7}"}} 11 {i}' for i in range(400)] + ["up 11x 401", "# EOF", ""]
    with alarm():
        outcome = _read("\n".join(lines), 1 << 22, bulk=True)
    assert outcome[0] == "error" and "'11x' is not a number" in outcome[1]
