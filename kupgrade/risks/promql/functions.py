"""PromQL functions, each with the semantics of Prometheus 2.42's `functions.go`."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import re2

from kupgrade.risks.promql import labels as lbl
from kupgrade.risks.promql.aggregate import quantile
from kupgrade.risks.promql.arith import go_log, go_log2, go_log10
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.risks.promql.labels import Labels
from kupgrade.risks.promql.values import Vector

Points = list[tuple[int, float]]


def _kahan_inc(inc: float, total: float, c: float) -> tuple[float, float]:
    t = total + inc
    if abs(total) >= abs(inc):
        c += (total - t) + inc
    else:
        c += (inc - t) + total
    return t, c


def _sum_over_time(points: Points) -> float:
    total, c = 0.0, 0.0
    for _, v in points:
        total, c = _kahan_inc(v, total, c)
    return total if math.isinf(total) else total + c


def _avg_over_time(points: Points) -> float:
    mean, c, count = 0.0, 0.0, 0.0
    for _, v in points:
        count += 1
        if math.isinf(mean):
            if math.isinf(v) and (mean > 0) == (v > 0):
                continue
            if not math.isinf(v) and not math.isnan(v):
                continue
        mean, c = _kahan_inc(v / count - mean / count, mean, c)
    return mean if math.isinf(mean) else mean + c


def _stdvar_over_time(points: Points) -> float:
    count, mean, c_mean, aux, c_aux = 0.0, 0.0, 0.0, 0.0, 0.0
    for _, v in points:
        count += 1
        delta = v - (mean + c_mean)
        mean, c_mean = _kahan_inc(delta / count, mean, c_mean)
        aux, c_aux = _kahan_inc(delta * (v - (mean + c_mean)), aux, c_aux)
    return (aux + c_aux) / count


def _max_over_time(points: Points) -> float:
    best = points[0][1]
    for _, v in points:
        if v > best or math.isnan(best):
            best = v
    return best


def _min_over_time(points: Points) -> float:
    best = points[0][1]
    for _, v in points:
        if v < best or math.isnan(best):
            best = v
    return best


def _changes(points: Points) -> float:
    n = 0
    prev = points[0][1]
    for _, v in points[1:]:
        if v != prev and not (math.isnan(v) and math.isnan(prev)):
            n += 1
        prev = v
    return float(n)


def _resets(points: Points) -> float:
    n = 0
    prev = points[0][1]
    for _, v in points[1:]:
        if v < prev:
            n += 1
        prev = v
    return float(n)


OVER_TIME: dict[str, Callable[[Points], float]] = {
    "avg_over_time": _avg_over_time,
    "min_over_time": _min_over_time,
    "max_over_time": _max_over_time,
    "sum_over_time": _sum_over_time,
    "count_over_time": lambda p: float(len(p)),
    "last_over_time": lambda p: p[-1][1],
    "present_over_time": lambda p: 1.0,
    "stdvar_over_time": _stdvar_over_time,
    "stddev_over_time": lambda p: math.sqrt(_stdvar_over_time(p)),
    "changes": _changes,
    "resets": _resets,
}


def extrapolated_rate(
    points: Points, window: tuple[int, int], *, counter: bool, rate: bool
) -> float | None:
    """rate / increase / delta: Prometheus 2.42's extrapolation to the window's edges.

    The factor is computed and divided exactly as the reference does: multiplying in
    another order changes the last digit of large rates.
    """
    if len(points) < 2:
        return None
    range_start, range_end = window
    range_s = (range_end - range_start) / 1000
    first_t, first_v = points[0]
    last_t, last_v = points[-1]
    result = last_v - first_v
    if counter:
        prev = first_v
        for _, v in points[1:]:
            if v < prev:
                result += prev
            prev = v
    to_start = (first_t - range_start) / 1000
    to_end = (range_end - last_t) / 1000
    sampled = (last_t - first_t) / 1000
    average = sampled / (len(points) - 1)
    if counter and result > 0 and first_v >= 0:
        to_zero = sampled * (first_v / result)
        to_start = min(to_start, to_zero)
    threshold = average * 1.1
    interval = sampled
    interval += to_start if to_start < threshold else average / 2
    interval += to_end if to_end < threshold else average / 2
    factor = interval / sampled
    if rate:
        factor /= range_s
    return result * factor


def instant_delta(points: Points, rate: bool) -> float | None:
    """irate / idelta: the last two points only."""
    if len(points) < 2:
        return None
    (t0, v0), (t1, v1) = points[-2], points[-1]
    result = v1 - v0 if not (rate and v1 < v0) else v1
    if rate:
        return result / ((t1 - t0) / 1000) if t1 != t0 else None
    return result


def _linear_regression(points: Points, intercept_ms: int) -> tuple[float, float]:
    """Prometheus's least squares with Kahan sums; a constant series has slope 0."""
    first = points[0][1]
    if all(v == first for _, v in points):
        return (math.nan, math.nan) if math.isinf(first) else (0.0, first)
    n = 0.0
    sx = cx = sy = cy = sxy = cxy = sx2 = cx2 = 0.0
    for ts, v in points:
        n += 1
        x = (ts - intercept_ms) / 1e3
        sx, cx = _kahan_inc(x, sx, cx)
        sy, cy = _kahan_inc(v, sy, cy)
        sxy, cxy = _kahan_inc(x * v, sxy, cxy)
        sx2, cx2 = _kahan_inc(x * x, sx2, cx2)
    sx, sy, sxy, sx2 = sx + cx, sy + cy, sxy + cxy, sx2 + cx2
    cov = sxy - sx * sy / n
    var = sx2 - sx * sx / n
    slope = cov / var if var != 0 else (math.nan if cov == 0 else math.copysign(math.inf, cov))
    return slope, sy / n - slope * sx / n


def deriv(points: Points) -> float | None:
    if len(points) < 2:
        return None
    return _linear_regression(points, points[0][0])[0]


def predict_linear(points: Points, seconds: float, eval_ms: int) -> float | None:
    if len(points) < 2:
        return None
    slope, intercept = _linear_regression(points, eval_ms)
    return slope * seconds + intercept


def quantile_over_time(q: float, points: Points) -> float:
    return quantile(q, [v for _, v in points])


def _sgn(v: float) -> float:
    if v > 0:
        return 1.0
    if v < 0:
        return -1.0
    return v


def _log(fn: Callable[[float], float]) -> Callable[[float], float]:
    def inner(v: float) -> float:
        if math.isnan(v) or v < 0:
            return math.nan
        if v == 0:
            return -math.inf
        if math.isinf(v):
            return math.inf
        return fn(v)

    return inner


def _exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _sqrt(v: float) -> float:
    return math.nan if v < 0 else math.sqrt(v)


def _floor(v: float) -> float:
    return v if not math.isfinite(v) else float(math.floor(v))


def _ceil(v: float) -> float:
    return v if not math.isfinite(v) else float(math.ceil(v))


def _go_math(fun: Callable[[float], float]) -> Callable[[float], float]:
    """Go's math returns NaN or ±Inf outside a function's domain; Python raises."""

    def inner(v: float) -> float:
        try:
            return fun(v)
        except ValueError:
            return math.nan
        except OverflowError:
            return math.copysign(math.inf, v)

    return inner


SIMPLE: dict[str, Callable[[float], float]] = {
    **{
        name: _go_math(getattr(math, name))
        for name in (
            "acos",
            "acosh",
            "asin",
            "asinh",
            "atan",
            "atanh",
            "cos",
            "cosh",
            "sin",
            "sinh",
            "tan",
            "tanh",
        )
    },
    "deg": math.degrees,
    "rad": math.radians,
    "abs": abs,
    "ceil": _ceil,
    "floor": _floor,
    "exp": _exp,
    "ln": _log(go_log),
    "log2": _log(go_log2),
    "log10": _log(go_log10),
    "sqrt": _sqrt,
    "sgn": _sgn,
}


def round_to(v: float, to_nearest: float) -> float:
    inverse = 1.0 / to_nearest if to_nearest != 0 else math.inf
    if not math.isfinite(v):
        return v
    return _floor(v * inverse + 0.5) / inverse


def _go_min(a: float, b: float) -> float:
    """Go's math.Min: NaN wins, and -0 is smaller than +0."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0:
        return a if math.copysign(1, a) < 0 else b
    return a if a < b else b


def _go_max(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0:
        return a if math.copysign(1, a) > 0 else b
    return a if a > b else b


def clamp(v: float, lo: float, hi: float) -> float:
    return _go_max(lo, _go_min(hi, v))


def absent_labels(matchers: Sequence[tuple[str, str, str]]) -> Labels:
    """Prometheus's createLabelsForAbsentFunction: labels from the `=` matchers only."""
    pairs: dict[str, str] = {}
    dropped: set[str] = set()
    for name, op, value in matchers:
        if name == lbl.NAME:
            continue
        if op == "=" and name not in pairs:
            pairs[name] = value
        else:
            dropped.add(name)
    return lbl.make((k, v) for k, v in pairs.items() if k not in dropped)


def _go_expand(template: str, src: str, match: re2._Match, names: dict[str, int]) -> str:
    """Go's `Regexp.ExpandString`: `$1`, `${1}`, `$name`, `$$`; a malformed `$` stays literal."""
    out: list[str] = []
    rest = template
    while True:
        before, dollar, after = rest.partition("$")
        if not dollar:
            out.append(rest)
            break
        out.append(before)
        rest = after
        if rest.startswith("$"):
            out.append("$")
            rest = rest[1:]
            continue
        parsed = _extract(rest)
        if parsed is None:
            out.append("$")
            continue
        name, num, rest = parsed
        index = num if num >= 0 else names.get(name, -1)
        if 0 <= index <= match.re.groups:
            group = match.group(index)
            if group is not None:
                out.append(group)
    return "".join(out)


def _extract(text: str) -> tuple[str, int, str] | None:
    brace = text.startswith("{")
    body = text[1:] if brace else text
    i = 0
    while i < len(body) and (body[i].isalnum() or body[i] == "_"):
        i += 1
    if i == 0:
        return None
    name = body[:i]
    if brace:
        if i >= len(body) or body[i] != "}":
            return None
        i += 1
    num = int(name) if name.isdigit() and name.isascii() and len(name) <= 8 else -1
    if name[0] == "0" and len(name) > 1:
        num = -1
    return name, num, body[i:]


# RE2 logs a bad pattern to stderr itself; the error is ours to report, once.
_QUIET = re2.Options()
_QUIET.log_errors = False


def label_replace(vec: Vector, dst: str, repl: str, src: str, pattern: str) -> Vector:
    try:
        regex = re2.compile(f"^(?:{pattern})$", _QUIET)
    except re2.error as exc:
        raise PromQLError(
            f"invalid regular expression in label_replace(): {pattern}: {exc}"
        ) from None
    if not lbl.valid_name(dst):
        raise PromQLError(f"invalid destination label name in label_replace(): {dst}")
    names = dict(regex.groupindex)
    out = Vector()
    for labels, v in vec:
        value = lbl.get(labels, src)
        m = regex.search(value)
        out.append(
            (
                labels
                if m is None
                else lbl.with_label(labels, dst, _go_expand(repl, value, m, names)),
                v,
            )
        )
    return out


def label_join(vec: Vector, dst: str, sep: str, sources: Sequence[str]) -> Vector:
    if not lbl.valid_name(dst):
        raise PromQLError(f"invalid destination label name in label_join(): {dst}")
    for src in sources:
        if not lbl.valid_name(src):
            raise PromQLError(f"invalid source label name in label_join(): {src}")
    out = Vector()
    for labels, v in vec:
        joined = sep.join(lbl.get(labels, s) for s in sources)
        out.append((lbl.with_label(labels, dst, joined), v))
    return out


def sort_vector(vec: Vector, descending: bool) -> Vector:
    nan_last = sorted(vec, key=lambda s: (math.isnan(s[1]), s[1]))
    if descending:
        nan_last = sorted(vec, key=lambda s: (not math.isnan(s[1]), s[1]), reverse=True)
    return Vector(nan_last)
