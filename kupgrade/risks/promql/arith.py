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
        a1 = math.exp(yf * go_log(x))
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


_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LG = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
    1.818357216161805012e-01,
    1.531383769920937332e-01,
    1.479819860511658591e-01,
)


# Go folds constant expressions exactly before rounding: 1/Ln2 and Ln2/Ln10 as Go sees them.
_INV_LN2 = float(
    "1.44269504088896340735992468100189213742664595415298593413544940693110921918118507988552662"
)
_LN2_OVER_LN10 = float("0.301029995663981195213738894724493026768189881462108541310430")


def go_log(x: float) -> float:
    """Go's `math.Log` (FDLIBM's e_log.c): glibc's log differs in the last digit for ~1% of inputs."""
    if math.isnan(x) or x == math.inf:
        return x
    if x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    f1, ki = math.frexp(x)
    if f1 < math.sqrt(2) / 2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_LG[0] + s4 * (_LG[2] + s4 * (_LG[4] + s4 * _LG[6])))
    t2 = s4 * (_LG[1] + s4 * (_LG[3] + s4 * _LG[5]))
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + t1 + t2) + k * _LN2_LO)) - f)


def go_log2(x: float) -> float:
    """Go's `math.Log2` for a positive finite x (exact on powers of two)."""
    frac, exp = math.frexp(x)
    if frac == 0.5:
        return float(exp - 1)
    return go_log(frac) * _INV_LN2 + float(exp)


def go_log10(x: float) -> float:
    """Go's `math.Log10` for a positive finite x: via Log2, so log10(1000) is 2.9999999999999996."""
    return go_log2(x) * _LN2_OVER_LN10


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
