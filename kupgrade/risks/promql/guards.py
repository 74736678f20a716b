"""Prometheus's query guards, so that no expression (a risk an update service hands us
included) runs unbounded: a maximum number of samples and a timeout per query, with
Prometheus's error texts and types (promql/engine.go: ErrTooManySamples, ErrQueryTimeout),
and the checks Prometheus's parser makes before a tree reaches the evaluator.

The parser library under us (promql-parser, Rust) has two failure modes that are not
errors: an expression nested a few thousand deep overflows its stack, and an `@`
timestamp outside what Python's datetime holds (negative ones included) panics when read.
Both are refused here, on the text, before the library sees it.
"""

from __future__ import annotations

import math
import os
import re
import time
from dataclasses import dataclass

from kupgrade.errors import InputError
from kupgrade.risks.promql.errors import PromQLError

# Prometheus's --query.max-samples is 50,000,000 for its own compact samples; ours are
# Python objects of about 100 bytes each, so the default keeps a query under ~1 GiB.
DEFAULT_MAX_SAMPLES = 5_000_000
# Prometheus's --query.timeout is 2m; a command line wants an answer sooner.
DEFAULT_TIMEOUT_S = 10.0
SAMPLES_ENV = "KUPGRADE_QUERY_MAX_SAMPLES"
TIMEOUT_ENV = "KUPGRADE_QUERY_TIMEOUT"
# Operators and brackets an expression may hold: the parser recurses once per level and
# crashes past a few thousand; real risk queries have a few dozen.
MAX_NESTING_TOKENS = 1000
# What Python's datetime (and so the parser's `@` value) can hold: 1970 to year 9999.
MAX_AT_SECONDS = 253_402_300_799

TOO_MANY_SAMPLES = "query processing would load too many samples into memory in query execution"
TIMED_OUT = "query timed out in expression evaluation"

_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")
# Strings ("…", '…', `…`) and comments hide their content from the token scan.
_HIDDEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`[^`]*`|#[^\n]*')
_NESTING = re.compile(r"[-+*/%^(\[{]|==|!=|<=|>=|<|>|\b(?:and|or|unless|atan2)\b", re.IGNORECASE)
_AT = re.compile(
    r"@\s*([-+]?)\s*(0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|[0-9]+\.|[iI][nN][fF]|[nN][aA][nN])"
)


@dataclass(frozen=True, slots=True)
class QueryLimits:
    """The guards of one query; `from_env` reads what a user set."""

    max_samples: int = DEFAULT_MAX_SAMPLES
    timeout_s: float = DEFAULT_TIMEOUT_S

    @classmethod
    def from_env(cls) -> QueryLimits:
        return cls(
            _samples(os.environ.get(SAMPLES_ENV, "")), _timeout(os.environ.get(TIMEOUT_ENV, ""))
        )

    def with_overrides(self, max_samples: int | None, timeout: str | None) -> QueryLimits:
        return QueryLimits(
            max_samples if max_samples is not None else self.max_samples,
            parse_timeout(timeout, "--query.timeout") if timeout is not None else self.timeout_s,
        )


def _samples(raw: str) -> int:
    if not raw.strip():
        return DEFAULT_MAX_SAMPLES
    if not raw.strip().isdigit() or int(raw) <= 0:
        raise InputError(f"{raw!r} is not a positive whole number", field=SAMPLES_ENV)
    return int(raw)


def _timeout(raw: str) -> float:
    return parse_timeout(raw, TIMEOUT_ENV) if raw.strip() else DEFAULT_TIMEOUT_S


def parse_timeout(text: str, field: str) -> float:
    """Seconds (`30`, `2.5`) or a Prometheus duration (`2m`, `1m30s`, `500ms`)."""
    raw = text.strip()
    try:
        seconds = float(raw)
    except ValueError:
        match = _DURATION.match(raw)
        if not raw or match is None:
            raise InputError(
                f"{text!r} is not a duration (seconds, or like 2m, 30s, 500ms)", field=field
            ) from None
        h, m, s, ms = (int(g) if g else 0 for g in match.groups())
        seconds = h * 3600 + m * 60 + s + ms / 1000
    if not math.isfinite(seconds) or seconds <= 0:
        raise InputError(f"{text!r} must be a positive duration", field=field)
    return seconds


def check_text(expr: str) -> None:
    """Refuse, as Prometheus's parser would or as ours must, before parsing."""
    visible = _HIDDEN.sub(" ", expr)
    if len(_NESTING.findall(visible)) > MAX_NESTING_TOKENS:
        raise PromQLError(
            f"parse error: the expression holds more than {MAX_NESTING_TOKENS} operators and "
            "brackets; simplify it",
            "bad_data",
        )
    for match in _AT.finditer(visible):
        _check_at(match.group(1), match.group(2))


def _check_at(sign: str, literal: str) -> None:
    try:
        value = float.fromhex(literal) if literal.lower().startswith("0x") else float(literal)
    except ValueError:
        return  # not a number: the parser's own error says so
    value = -value if sign == "-" else value
    # prometheus/promql/parser/parse.go setTimestamp: Inf, NaN and int64 overflow.
    if not math.isfinite(value) or abs(value) >= 2.0**63:
        raise PromQLError(
            f"parse error: timestamp out of bounds for @ modifier: {go_f(value)}", "bad_data"
        )
    if value < 0 or value > MAX_AT_SECONDS:
        raise PromQLError(
            f"parse error: @ {literal if sign != '-' else '-' + literal} is outside the times "
            "kupgrade can evaluate (1970 to the year 9999)",
            "bad_data",
        )


def go_f(value: float) -> str:
    """Go's %f: six decimals, +Inf/-Inf/NaN spelled as Go spells them."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return f"{value:.6f}"


class Guard:
    """Counts the samples a query loads and watches its deadline."""

    def __init__(self, limits: QueryLimits) -> None:
        self.limits = limits
        self.samples = 0
        self.calls = 0
        self.deadline = time.monotonic() + limits.timeout_s

    def load(self, count: int) -> None:
        self.samples += count
        if self.samples > self.limits.max_samples:
            raise PromQLError(TOO_MANY_SAMPLES, "execution")

    def tick(self) -> None:
        """Called for every node evaluated; reads the clock every 64th call (the clock is
        the costly part, and 64 evaluations take microseconds)."""
        self.calls += 1
        if not self.calls & 63 and time.monotonic() > self.deadline:
            raise PromQLError(TIMED_OUT, "timeout")
