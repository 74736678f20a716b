"""Metrics snapshots: OpenMetrics text with timestamps, stored per series for PromQL.

The snapshot is the file a real Prometheus ingests with `promtool tsdb create-blocks-from
openmetrics`, so one file feeds both our engine and Prometheus. We parse it ourselves:
prometheus-client's OpenMetrics parser reports no line numbers and costs several
seconds per million samples, and a 10,000-series, two-hour snapshot has millions. Lines of
one series are contiguous in practice: the bulk reader takes a chunk of such lines with a
few string operations over the whole chunk and one conversion per run of a series, and
the line-by-line reader (a line whose series text equals the previous one's skips label
parsing) takes whatever the bulk reader leaves, and says what is wrong and where.
"""

from __future__ import annotations

import math
import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from operator import lt
from typing import NamedTuple, TextIO, TypeVar, cast

from kupgrade.errors import InputError
from kupgrade.graph.regex import RegexError, compile_regex
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.risks.promql.labels import NAME, Labels, make

T = TypeVar("T")
RULE = "OpenMetrics text exposition with timestamps (promtool create-blocks-from openmetrics)"
LOOKBACK_MS = 5 * 60 * 1000  # Prometheus's default --query.lookback-delta

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\\n]|\\.)*)"\s*(,\s*)?')
# Numbers: `\d+(?:\.\d*)?` rather than `\d+\.?\d*`, which splits a run of digits in many
# ways and, repeated over a chunk's joined values, backtracks exponentially on a bad one.
_NUMBER = re.compile(r"[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|Inf|inf|NaN|nan)")
_ESCAPE = re.compile(r"\\(.)")
# The bulk reader checks a chunk's values and timestamps as one space-joined string. Made
# of these characters alone, a token float() (int()) accepts is one the exposition's
# number grammar accepts; a chunk with anything else (Inf, NaN) is checked token by token.
_NUMERIC = re.compile(r"[0-9.eE+\- ]*")
_DIGITS = re.compile(r"[0-9\- ]*")
_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_VALUES = re.compile(
    rf"(?:{_NUM}|[+-]?(?:Inf|inf|NaN|nan))(?: (?:{_NUM}|[+-]?(?:Inf|inf|NaN|nan)))*"
)
_TIMES = re.compile(rf"{_NUM}(?: {_NUM})*")
INT64 = 2**63


def _values(values: list[str]) -> list[float] | None:
    """The sample values as floats, or None if one is not a number of the exposition."""
    joined = " ".join(values)
    if not (_NUMERIC.fullmatch(joined) or _VALUES.fullmatch(joined)):
        return None
    try:
        return list(map(float, values))
    except ValueError:
        return None


def _stamps(times: list[str]) -> list[int] | None:
    """Milliseconds of the timestamps (seconds) as the line-by-line reader computes them,
    or None if one is not a finite number in the TSDB's int64 range."""
    joined = " ".join(times)
    if _DIGITS.fullmatch(joined) and max(map(len, times), default=0) <= 12:
        try:  # whole seconds below 10**12: int(t) * 1000 is exactly round(float(t) * 1000)
            return list(map((1000).__mul__, map(int, times)))
        except ValueError:
            return None
    if not _TIMES.fullmatch(joined):
        return None
    try:
        stamps = [round(float(t) * 1000) for t in times]
    except OverflowError:
        return None
    return stamps if all(-INT64 <= x < INT64 for x in stamps) else None


# The lines of a chunk that are not samples, comments and empty lines, each matched with
# the newline before it (a chunk's text is searched with one put in front): the search
# skips from newline to newline, where a pattern anchored by ^ would try every character.
_NOT_SAMPLE = re.compile(r"\n(?:#[^\n]*)?(?=\n|\Z)")
_KEPT_COMMENTS = ("# HELP ", "# TYPE ", "# UNIT ")


def _marked(body: str) -> tuple[str, bool, int] | None:
    """A chunk's sample lines without its comment and empty lines, whether it ends the
    snapshot ('# EOF' and nothing but empty lines after), and how many lines it left
    out; None when a comment is not one the bulk reader takes."""
    pieces: list[str] = []
    at = others = 0
    for match in _NOT_SAMPLE.finditer(f"\n{body}"):
        start, end = match.start(), match.end() - 1  # the line's place in `body`
        line = body[start:end]
        if line and line != "# EOF" and not line.startswith(_KEPT_COMMENTS):
            return None
        others += 1
        pieces.append(body[at:start])
        at = end
        if line == "# EOF":
            rest = body[at:]
            return None if rest.strip("\n") else (_joined(pieces), True, others + rest.count("\n"))
    pieces.append(body[at:])
    return _joined(pieces), False, others


def _joined(pieces: list[str]) -> str:
    """Runs of sample lines (each with the newlines of the lines left out around it) as
    one text of lines."""
    return "\n".join(kept for piece in pieces if (kept := piece.strip("\n")))


class _NotPlain(Exception):  # noqa: N818 - a signal between two methods, never raised out
    """A chunk the bulk reader leaves to the line-by-line one."""


class Plain(NamedTuple):
    """A chunk of plain lines, read without regard to what came before it: its runs of
    one series (key, values, milliseconds, each run's times increasing), how many lines
    it has, whether it ends the snapshot, and (when asked for) the labels of each key,
    None for a key that is not well formed."""

    runs: list[tuple[str, array[float], array[int]]]
    lines: int
    eof: bool
    labels: dict[str, Labels | None] | None = None


def plain_chunk(chunk: str, *, labels: bool = False) -> Plain | None:
    """The plain reading of a chunk, or None if any line is not a plain sample, a
    HELP/TYPE/UNIT comment or empty (or a run's times do not increase).

    The chunk's text is never split into lines: its comment and empty lines are found by
    one regex scan, and the samples between them become tokens by one replace and one
    split of the whole text. It depends on nothing else, so a chunk can be read in
    another process (`snapshot_pool`) and taken in order here."""
    body = chunk[:-1] if chunk.endswith("\n") else chunk  # its lines, "\n"-joined
    lines = count = body.count("\n") + 1
    samples, eof = body, False
    if chunk.startswith(("#", "\n")) or "\n#" in chunk or "\n\n" in chunk:
        marked = _marked(body)
        if marked is None:
            return None
        samples, eof, others = marked
        count -= others
    tokens = samples.replace("\n", " ").split(" ") if count else []
    if len(tokens) != 3 * count:  # a space in a label value, an exemplar, ...
        return None
    keys, values, times = tokens[0::3], tokens[1::3], tokens[2::3]
    stamps, numbers = _stamps(times), _values(values)
    if stamps is None or numbers is None:
        return None
    runs: list[tuple[str, array[float], array[int]]] = []
    start = 0
    for key, group in groupby(keys):
        end = start + len(list(group))
        run = array("q", stamps[start:end])
        if not all(map(lt, run, run[1:])):
            return None
        runs.append((key, array("d", numbers[start:end]), run))
        start = end
    known = {key: series_labels(key) for key, _, _ in runs} if labels else None
    return Plain(runs, lines, eof, known)


def series_labels(key: str) -> Labels | None:
    """The labels of a series key (`name{a="b",...}`), or None if it is not exactly a
    well-formed one; the line-by-line reader says what is wrong, and where."""
    reader = Reader("")
    try:
        if reader._series_key(f"{key} 0")[0] != key:
            return None
        return reader._labels(key)
    except InputError:
        return None


_UNESCAPE = {"\\": "\\", '"': '"', "n": "\n"}


class Series:
    """One series: its labels (with `__name__`) and its points in time order."""

    __slots__ = ("lab", "labels", "ts", "vals")

    def __init__(self, labels: Labels) -> None:
        self.labels = labels
        self.lab = dict(labels)
        self.ts: array[int] = array("q")
        self.vals: array[float] = array("d")

    def latest_index(self, ref_ms: int, lookback_ms: int) -> int | None:
        """The latest sample in [ref - lookback, ref], as Prometheus 2.x selects it."""
        i = bisect_right(self.ts, ref_ms) - 1
        if i < 0 or self.ts[i] < ref_ms - lookback_ms:
            return None
        return i

    def window(self, ref_ms: int, range_ms: int) -> list[tuple[int, float]]:
        """The points in [ref - range, ref] (both ends included, as in Prometheus 2.x)."""
        lo = bisect_left(self.ts, ref_ms - range_ms)
        hi = bisect_right(self.ts, ref_ms)
        return list(zip(self.ts[lo:hi], self.vals[lo:hi], strict=True))


Matcher = tuple[str, str, str]  # (label, op, value) with op one of = != =~ !~


@dataclass
class Snapshot:
    """Series sorted by label set, indexed by metric name, with a memo of selections."""

    series: list[Series]
    source: str = "<snapshot>"
    by_name: dict[str, list[Series]] = field(init=False)
    _memo: dict[tuple[object, ...], object] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.series.sort(key=lambda s: s.labels)
        self.by_name = {}
        for s in self.series:
            self.by_name.setdefault(s.lab[NAME], []).append(s)

    def clear_memo(self) -> None:
        """Forget remembered selections (a benchmark's cold pass)."""
        self._memo.clear()

    @property
    def sample_count(self) -> int:
        return sum(len(s.ts) for s in self.series)

    @property
    def latest_ms(self) -> int | None:
        """The newest sample time: the natural evaluation time of a snapshot."""
        return max((s.ts[-1] for s in self.series if len(s.ts)), default=None)

    def _memoised(self, key: tuple[object, ...], compute: Callable[[], T]) -> T:
        """One computation per key: risk rules select the same series again and again."""
        if key not in self._memo:
            self._memo[key] = compute()
        return cast(T, self._memo[key])

    def matching(self, matchers: Sequence[Matcher]) -> list[Series]:
        return self._memoised(("match", tuple(matchers)), lambda: self._match(matchers))

    def _match(self, matchers: Sequence[Matcher]) -> list[Series]:
        names = [v for n, op, v in matchers if n == NAME and op == "="]
        candidates = self.by_name.get(names[0], []) if names else self.series
        tests = [_compile(m) for m in matchers]
        return [s for s in candidates if all(test(s.lab.get(n, "")) for n, test in tests)]

    def _latest(
        self, matchers: Sequence[Matcher], ref_ms: int, lookback_ms: int
    ) -> list[tuple[Series, int]]:
        """Each selected series with the index of its sample at `ref_ms` (lookback applied)."""
        return self._memoised(
            ("latest", tuple(matchers), ref_ms, lookback_ms),
            lambda: [
                (s, i)
                for s in self.matching(matchers)
                if (i := s.latest_index(ref_ms, lookback_ms)) is not None
            ],
        )

    def instant(
        self, matchers: Sequence[Matcher], ref_ms: int, lookback_ms: int = LOOKBACK_MS
    ) -> list[tuple[Labels, float]]:
        return [(s.labels, s.vals[i]) for s, i in self._latest(matchers, ref_ms, lookback_ms)]

    def instant_times(
        self, matchers: Sequence[Matcher], ref_ms: int, lookback_ms: int = LOOKBACK_MS
    ) -> list[tuple[Labels, int]]:
        """Like `instant`, with each selected sample's own time (for `timestamp()`)."""
        return [(s.labels, s.ts[i]) for s, i in self._latest(matchers, ref_ms, lookback_ms)]

    def window(
        self, matchers: Sequence[Matcher], ref_ms: int, range_ms: int
    ) -> list[tuple[Labels, list[tuple[int, float]]]]:
        def compute() -> list[tuple[Labels, list[tuple[int, float]]]]:
            pairs = ((s.labels, s.window(ref_ms, range_ms)) for s in self.matching(matchers))
            return [(labels, points) for labels, points in pairs if points]

        return self._memoised(("range", tuple(matchers), ref_ms, range_ms), compute)


def _compile(m: Matcher) -> tuple[str, Callable[[str], object]]:
    name, op, value = m
    if op == "=":
        return name, value.__eq__
    if op == "!=":
        return name, value.__ne__
    try:
        regex = compile_regex(f"^(?:{value})$")
    except RegexError as exc:
        raise PromQLError(
            f"invalid regular expression {value!r}: {exc.reason}", "bad_data"
        ) from None
    if op == "=~":
        return name, regex.search
    return name, lambda text: not regex.search(text)


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: _UNESCAPE.get(m.group(1), m.group(0)), text)


class Reader:
    """OpenMetrics reader that remembers where it is for error messages.

    Text comes in chunks of whole lines. A chunk whose every line is a plain sample, a
    HELP/TYPE/UNIT comment or empty is read in bulk: one regex pass finds its samples,
    runs of one series become arrays through `map(float, ...)`, and a series' labels are
    checked once, when it first appears. Anything else in a chunk (an exemplar, a stray
    line, a timestamp out of order, '# EOF' followed by text) sends the chunk back to
    the line-by-line reader, which says what is wrong and on which line. Both readers
    keep the same state, so the result is the same either way.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.lineno = 0
        self.series: dict[str, Series] = {}
        self.prev_key = ""
        self.current: Series | None = None
        self.seen_eof = False
        self.before: dict[str, int | None] = {}  # series a bulk chunk touched: their lengths

    def fail(self, message: str) -> InputError:
        return InputError(message, file=self.source, field=f"line {self.lineno}", rule=RULE)

    def read(self, chunks: Iterable[str]) -> list[Series]:
        for chunk in chunks:
            self.take(chunk, plain_chunk(chunk))
        return self.finish()

    def take(self, chunk: str, plain: Plain | None) -> None:
        """A chunk of whole lines, with its plain reading when it has one (`plain_chunk`):
        taken in bulk if it fits what came before, else line by line."""
        if plain is None or not self.apply(plain):
            self.lines(chunk)

    def lines(self, chunk: str) -> None:
        lines = chunk.split("\n")
        if chunk.endswith("\n"):
            lines.pop()  # what follows the last newline is not a line
        for line in lines:
            self._line(line)

    def finish(self) -> list[Series]:
        if not self.seen_eof:
            raise self.fail("missing '# EOF' at the end (is the snapshot truncated?)")
        return list(self.series.values())

    # --- in bulk ------------------------------------------------------------------------

    def apply(self, plain: Plain) -> bool:
        """Take a chunk's plain reading; False (nothing changed) if it does not follow
        what came before (a series' time going back, a series key that is not well
        formed). After '# EOF' the line-by-line reader says what is wrong."""
        if self.seen_eof:
            return False
        self.before = {}
        where = (self.prev_key, self.current)
        try:
            for key, values, stamps in plain.runs:
                self._run(key, values, stamps, plain.labels)
        except _NotPlain:
            self._undo()
            self.prev_key, self.current = where
            return False
        self.lineno += plain.lines
        self.seen_eof = plain.eof
        return True

    def _run(
        self,
        key: str,
        values: array[float],
        stamps: array[int],
        known: dict[str, Labels | None] | None,
    ) -> None:
        series = self.series.get(key)
        if key not in self.before:  # what to undo if the chunk turns out not plain
            self.before[key] = None if series is None else len(series.ts)
        if series is None:
            labels = known[key] if known is not None and key in known else series_labels(key)
            if labels is None:  # the line-by-line reader names the line
                raise _NotPlain
            series = self.series[key] = Series(labels)
        if len(series.ts) and stamps[0] <= series.ts[-1]:
            raise _NotPlain
        series.ts.extend(stamps)
        series.vals.extend(values)
        self.prev_key, self.current = key, series

    def _undo(self) -> None:
        for key, length in self.before.items():
            if length is None:
                self.series.pop(key, None)
                continue
            series = self.series[key]
            del series.ts[length:]
            del series.vals[length:]

    # --- line by line -------------------------------------------------------------------

    def _line(self, raw: str) -> None:
        self.lineno += 1
        line = raw.rstrip("\r")
        if self.seen_eof:
            if line.strip():
                raise self.fail("content after '# EOF'")
            return
        if not line or line[0] == "#":
            if line == "# EOF":
                self.seen_eof = True
            elif line and not line.startswith(("# HELP ", "# TYPE ", "# UNIT ")):
                raise self.fail("a comment line must be '# HELP', '# TYPE', '# UNIT' or '# EOF'")
            return
        prev_key, current = self.prev_key, self.current
        if (
            current is not None
            and line.startswith(prev_key)
            and line[len(prev_key) : len(prev_key) + 1] == " "
        ):
            rest = line[len(prev_key) + 1 :]
        else:
            prev_key, rest = self._series_key(line)
            current = self.series.get(prev_key)
            if current is None:
                current = Series(self._labels(prev_key))
                self.series[prev_key] = current
            self.prev_key, self.current = prev_key, current
        value, ts = self._value_and_time(rest)
        if len(current.ts) and ts <= current.ts[-1]:
            what = "duplicate sample" if ts == current.ts[-1] else "sample out of order"
            raise self.fail(f"{what} for {prev_key} at {ts / 1000:g}: timestamps must increase")
        current.ts.append(ts)
        current.vals.append(value)

    def _series_key(self, line: str) -> tuple[str, str]:
        m = _NAME.match(line)
        if m is None:
            raise self.fail(f"expected a metric name at the start of {line[:60]!r}")
        pos = m.end()
        if pos < len(line) and line[pos] == "{":
            pos += 1
            while pos < len(line) and line[pos] != "}":
                lm = _LABEL.match(line, pos)
                if lm is None:
                    raise self.fail(
                        f"malformed label at column {pos + 1}: {line[pos : pos + 40]!r}"
                    )
                pos = lm.end()
            if pos >= len(line):
                raise self.fail("unterminated label set: missing '}'")
            pos += 1
        if line[pos : pos + 1] != " ":
            raise self.fail(f"expected a space and a value after {line[:pos]!r}")
        return line[:pos], line[pos + 1 :]

    def _labels(self, key: str) -> Labels:
        brace = key.find("{")
        name = key if brace < 0 else key[:brace]
        pairs = [(NAME, name)]
        seen = {NAME}
        if brace >= 0:
            for lm in _LABEL.finditer(key, brace + 1, len(key) - 1):
                label = lm.group(1)
                if label in seen:
                    raise self.fail(f"label {label!r} appears twice in {key}")
                seen.add(label)
                pairs.append((label, _unescape(lm.group(2))))
        return make(pairs)

    def _value_and_time(self, rest: str) -> tuple[float, int]:
        if " # " in rest:  # an exemplar follows the sample; it does not belong in the TSDB
            rest = rest.split(" # ", 1)[0]
        parts = rest.split()
        if len(parts) != 2:
            if len(parts) == 1:
                raise self.fail(
                    "sample has no timestamp: a snapshot needs explicit timestamps (seconds)"
                )
            raise self.fail(f"expected 'VALUE TIMESTAMP', got {rest!r}")
        value_text, ts_text = parts
        if not _NUMBER.fullmatch(value_text):
            raise self.fail(f"value {value_text!r} is not a number")
        if not _NUMBER.fullmatch(ts_text) or ts_text.lower() in ("nan", "inf", "+inf", "-inf"):
            raise self.fail(f"timestamp {ts_text!r} is not a number of seconds")
        seconds = float(ts_text)
        stamp = round(seconds * 1000) if math.isfinite(seconds * 1000) else 2**63
        if not -(2**63) <= stamp < 2**63:  # the TSDB keeps int64 milliseconds
            raise self.fail(f"timestamp {ts_text!r} is out of range")
        return float(value_text), stamp


def parse_snapshot(text: str | TextIO, source: str = "<snapshot>") -> Snapshot:
    """A snapshot from its text, or from a text stream read in chunks (bounded memory)."""
    return Snapshot(Reader(source).read(_chunks(text)), source=source)


CHUNK = 1 << 22  # characters read and parsed at once (a few MB of samples' tuples at most)


def _chunks(text: str | TextIO, size: int = CHUNK) -> Iterator[str]:
    """Pieces of whole lines. Only "\n" ends a line in the exposition format; str.splitlines
    would also split on \x1e, \x85 or \u2028 inside a label value."""
    if isinstance(text, str):
        start = 0
        while start < len(text):
            end = text.find("\n", start + size)
            end = len(text) if end < 0 else end + 1
            yield text[start:end]
            start = end
        return
    carry = ""
    while piece := text.read(size):
        cut = piece.rfind("\n") + 1
        if not cut:
            carry += piece
            continue
        yield carry + piece[:cut]
        carry = piece[cut:]
    if carry:
        yield carry
