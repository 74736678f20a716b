"""Float arithmetic with Go's semantics: IEEE results where Python would raise.

PromQL divides by zero, takes `x % 0` and overflows `^` routinely (Prometheus answers
+Inf or NaN); Python's operators raise instead, so each operator is spelled out here.
"""

from __future__ import annotations

import math
from collections.abc import Callable

ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "^", "atan2"})
COMPARISON = frozenset({"==", "!=", ">", "<", ">=", "<="})
SET_OPS = frozenset({"and", "or", "unless"})


def _div(a: float, b: float) -> float:
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _mod(a: float, b: float) -> float:
    try:
        return math.fmod(a, b)
    except ValueError:
        return math.nan


def _odd_integer(x: float) -> bool:
    return math.isfinite(x) and x == math.floor(x) and x % 2 == 1


def _ldexp(frac: float, exp: int) -> float:
    try:
        return math.ldexp(frac, exp)
    except OverflowError:
        return math.copysign(math.inf, frac)


def _pow(x: float, y: float) -> float:
    """Go's `math.Pow`, step for step: repeated squaring on the integer part of y.

    C's pow (Python's) rounds correctly; Go's differs in the last digit for many
    inputs, e.g. `x ^ 10`, and Prometheus answers with Go's.
    """
    special = _pow_special(x, y)
    if special is not None:
        return special
    yf, yi = math.modf(abs(y))
    if yf != 0 and x < 0:
        return math.nan
    if yi >= 2.0**63:
        if x == -1:
            return 1.0
        return 0.0 if (abs(x) < 1) == (y > 0) else math.inf
    a1, ae = 1.0, 0
    if yf != 0:
        if yf > 0.5:
            yf -= 1
            yi += 1
        a1 = math.exp(yf * math.log(x))
    x1, xe = math.frexp(x)
    i = int(yi)
    while i != 0:
        if xe < -(1 << 12) or xe > (1 << 12):
            ae += xe
            break
        if i & 1 == 1:
            a1 *= x1
            ae += xe
        x1 *= x1
        xe <<= 1
        if x1 < 0.5:
            x1 += x1
            xe -= 1
        i >>= 1
    if y < 0:
        a1 = 1 / a1
        ae = -ae
    return _ldexp(a1, ae)


def _pow_special(x: float, y: float) -> float | None:
    if y == 0 or x == 1:
        return 1.0
    if y == 1:
        return x
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x == 0:
        odd = _odd_integer(y) and math.copysign(1, x) < 0
        if y < 0:
            return -math.inf if odd else math.inf
        return x if odd else 0.0
    if math.isinf(y):
        if x == -1:
            return 1.0
        return 0.0 if (abs(x) < 1) == (y > 0) else math.inf
    if math.isinf(x):
        if x < 0:
            return _pow(1 / x, -y)
        return 0.0 if y < 0 else math.inf
    if y == 0.5:
        return math.sqrt(x) if x >= 0 else math.nan
    if y == -0.5:
        return 1 / math.sqrt(x) if x > 0 else (math.inf if x == 0 else math.nan)
    return None


_ARITH: dict[str, Callable[[float, float], float]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _div,
    "%": _mod,
    "^": _pow,
    "atan2": math.atan2,
}
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
}


def elem_binop(op: str, lhs: float, rhs: float) -> tuple[float, bool]:
    """Prometheus's `vectorElemBinop`: (value, keep); comparisons keep the left value."""
    arith = _ARITH.get(op)
    if arith is not None:
        return arith(lhs, rhs), True
    return lhs, _COMPARE[op](lhs, rhs)
