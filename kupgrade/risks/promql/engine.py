"""Evaluate a parsed PromQL expression over a snapshot, as Prometheus 2.42 does.

The evaluator walks `promql-parser`'s tree at one instant (subqueries re-enter it at
their own steps). Every step follows the reference engine's `eval` closely enough that
the *order* of an answer matches too, because risk rules pick representatives with
`topk(1, ...)` and ties are decided by that order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

import promql_parser as pp

from kupgrade.risks.promql import functions as fn
from kupgrade.risks.promql import labels as lbl
from kupgrade.risks.promql.aggregate import aggregate
from kupgrade.risks.promql.arith import COMPARISON, elem_binop
from kupgrade.risks.promql.dates import date_part
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.risks.promql.guards import Guard, QueryLimits, check_text
from kupgrade.risks.promql.labels import Labels
from kupgrade.risks.promql.matching import ensure_unique, vector_scalar, vector_vector
from kupgrade.risks.promql.snapshot import LOOKBACK_MS, Matcher, Snapshot
from kupgrade.risks.promql.values import Matrix, Scalar, String, Value, Vector, to_api

DEFAULT_STEP_MS = 60_000  # Prometheus's default global evaluation_interval: subquery step
# The parser's enums do not hash; their names do.
_MATCH_OPS = {
    "MatchOp.Equal": "=",
    "MatchOp.NotEqual": "!=",
    "MatchOp.Re": "=~",
    "MatchOp.NotRe": "!~",
}
# Every function of Prometheus 2.42. A name the parser knows from a later release is
# refused the way 2.42's parser refuses it, so that both engines disagree with nobody.
_KNOWN_FUNCTIONS = frozenset(
    """abs absent absent_over_time acos acosh asin asinh atan atanh avg_over_time ceil
    changes clamp clamp_max clamp_min cos cosh count_over_time days_in_month day_of_month
    day_of_week day_of_year deg delta deriv exp floor histogram_count histogram_fraction
    histogram_quantile histogram_sum holt_winters hour idelta increase irate label_join
    label_replace last_over_time ln log10 log2 max_over_time min_over_time minute month pi
    predict_linear present_over_time quantile_over_time rad rate resets round scalar sgn
    sin sinh sort sort_desc sqrt stddev_over_time stdvar_over_time sum_over_time tan tanh
    time timestamp vector year""".split()  # noqa: SIM905 - a word list reads better
)


def _ms(delta: timedelta | None) -> int:
    return 0 if delta is None else delta // timedelta(milliseconds=1)


def _matchers(node: pp.VectorSelector) -> tuple[Matcher, ...]:
    out: list[Matcher] = []
    if node.name:
        out.append((lbl.NAME, "=", node.name))
    if node.matchers.or_matchers:
        raise PromQLError(
            "'or' between label matchers is not PromQL as Prometheus 2.42 parses it", "bad_data"
        )
    out.extend((m.name, _MATCH_OPS[str(m.op)], m.value) for m in node.matchers.matchers)
    return tuple(out)


def _unwrap(node: Any) -> Any:
    while isinstance(node, pp.ParenExpr):
        node = node.expr
    return node


class Evaluator:
    """One instant query: a snapshot, the query time, and the lookback window."""

    def __init__(
        self,
        snapshot: Snapshot,
        query_ms: int,
        lookback_ms: int = LOOKBACK_MS,
        limits: QueryLimits | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.query_ms = query_ms
        self.lookback_ms = lookback_ms
        self.guard = Guard(limits or QueryLimits())

    # -- dispatch ---------------------------------------------------------------------

    def eval(self, node: Any, t: int) -> Value:
        method = _DISPATCH.get(type(node))
        if method is None:
            raise PromQLError(f"unsupported expression {type(node).__name__}", "bad_data")
        self.guard.tick()
        return method(self, node, t)

    def _vector(self, node: Any, t: int) -> Vector:
        value = self.eval(node, t)
        if not isinstance(value, Vector):
            raise PromQLError(
                f"expected an instant vector, got {type(value).__name__.lower()}", "bad_data"
            )
        return value

    def _scalar(self, node: Any, t: int) -> float:
        value = self.eval(node, t)
        if not isinstance(value, Scalar):
            raise PromQLError(f"expected a scalar, got {type(value).__name__.lower()}", "bad_data")
        return value.value

    def _string(self, node: Any, t: int) -> str:
        value = self.eval(_unwrap(node), t)
        if not isinstance(value, String):
            raise PromQLError(f"expected a string, got {type(value).__name__.lower()}", "bad_data")
        return value.value

    # -- leaves -----------------------------------------------------------------------

    def _number(self, node: pp.NumberLiteral, t: int) -> Value:
        return Scalar(float(node.val))

    def _string_literal(self, node: pp.StringLiteral, t: int) -> Value:
        return String(str(node.val))

    def _paren(self, node: pp.ParenExpr, t: int) -> Value:
        return self.eval(node.expr, t)

    def _ref_time(self, at: Any, offset: timedelta | None, t: int) -> int:
        """Where a selector looks: `@` pins the time (start()/end() = the query time)."""
        base = t
        if at is not None:
            if at.type == pp.AtModifierType.At:
                try:
                    base = round(at.at.timestamp() * 1000)
                except (OverflowError, ValueError, OSError):
                    raise PromQLError(
                        "timestamp out of bounds for @ modifier", "bad_data"
                    ) from None
            else:
                base = self.query_ms
        return base - _ms(offset)

    def _selector(self, node: pp.VectorSelector, t: int) -> Value:
        ref = self._ref_time(node.at, node.offset, t)
        found = self.snapshot.instant(_matchers(node), ref, self.lookback_ms)
        self.guard.load(len(found))
        return Vector(found)

    def _matrix_selector(self, node: pp.MatrixSelector, t: int) -> Value:
        vs = node.vector_selector
        ref = self._ref_time(vs.at, vs.offset, t)
        found = self.snapshot.window(_matchers(vs), ref, _ms(node.range))
        self.guard.load(sum(len(points) for _, points in found))
        return Matrix(found)

    def _subquery(self, node: pp.SubqueryExpr, t: int) -> Value:
        step = _ms(node.step) or DEFAULT_STEP_MS
        end = self._ref_time(node.at, node.offset, t)
        lower = end - _ms(node.range)
        start = step * (lower // step)
        if start < lower:
            start += step
        series: dict[Labels, list[tuple[int, float]]] = {}
        for ts in range(start, end + 1, step):
            value = self.eval(node.expr, ts)
            if isinstance(value, Scalar):
                value = Vector([((), value.value)])
            if not isinstance(value, Vector):
                raise PromQLError("subquery is only allowed on instant vector", "bad_data")
            self.guard.load(len(value))
            for labels, v in value:
                series.setdefault(labels, []).append((ts, v))
        return Matrix(series.items())

    # -- operators --------------------------------------------------------------------

    def _unary(self, node: pp.UnaryExpr, t: int) -> Value:
        value = self.eval(node.expr, t)
        if isinstance(value, Scalar):
            return Scalar(-value.value)
        if not isinstance(value, Vector):
            raise PromQLError(
                "unary expression only allowed on expressions of type scalar or instant vector",
                "bad_data",
            )
        return ensure_unique(Vector((lbl.drop_name(labels), -v) for labels, v in value))

    def _binary(self, node: pp.BinaryExpr, t: int) -> Value:
        op = str(node.op)
        mod = node.modifier
        return_bool = bool(mod is not None and mod.return_bool)
        lhs = self.eval(node.lhs, t)
        rhs = self.eval(node.rhs, t)
        if isinstance(lhs, Scalar) and isinstance(rhs, Scalar):
            value, keep = elem_binop(op, lhs.value, rhs.value)
            if op in COMPARISON:
                value = 1.0 if keep else 0.0
            return Scalar(value)
        if isinstance(lhs, Vector) and isinstance(rhs, Scalar):
            return ensure_unique(vector_scalar(op, lhs, rhs.value, False, return_bool))
        if isinstance(lhs, Scalar) and isinstance(rhs, Vector):
            return ensure_unique(vector_scalar(op, rhs, lhs.value, True, return_bool))
        if isinstance(lhs, Vector) and isinstance(rhs, Vector):
            return ensure_unique(vector_vector(op, lhs, rhs, mod))
        raise PromQLError(
            f"binary expression must contain only scalar and instant vector types, not {op}",
            "bad_data",
        )

    def _aggregate(self, node: pp.AggregateExpr, t: int) -> Value:
        op = str(node.op)
        param: float | str | None = None
        if node.param is not None:
            p = _unwrap(node.param)
            param = self._string(p, t) if op == "count_values" else self._scalar(p, t)
        vec = self._vector(node.expr, t)
        grouping: frozenset[str] = frozenset()
        without = False
        if node.modifier is not None:
            grouping = frozenset(node.modifier.labels)
            without = node.modifier.type == pp.AggModifierType.Without
        return ensure_unique(aggregate(op, vec, grouping, without, param))

    # -- functions --------------------------------------------------------------------

    def _call(self, node: pp.Call, t: int) -> Value:
        name = str(node.func.name)
        if name not in _KNOWN_FUNCTIONS:
            raise PromQLError(f'unknown function with name "{name}"', "bad_data")
        args = [_unwrap(a) for a in node.args]
        if name in ("absent", "absent_over_time"):
            return self._absent(args[0], t)
        handler = _CALLS.get(name)
        if handler is not None:
            return handler(self, args, t)
        if any(isinstance(a, pp.MatrixSelector | pp.SubqueryExpr) for a in args):
            return self._range_function(name, args, t)
        raise PromQLError(f"function {name}() is not supported by kupgrade's embedded engine")

    def _absent(self, arg: Any, t: int) -> Value:
        value = self.eval(arg, t)
        present = any(points for _, points in value) if isinstance(value, Matrix) else bool(value)
        if present:
            return Vector()
        selector = arg.vector_selector if isinstance(arg, pp.MatrixSelector) else arg
        labels = (
            fn.absent_labels(_matchers(selector)) if isinstance(selector, pp.VectorSelector) else ()
        )
        return Vector([(labels, 1.0)])

    def _range_function(self, name: str, args: list[Any], t: int) -> Value:
        index = next(
            i for i, a in enumerate(args) if isinstance(a, pp.MatrixSelector | pp.SubqueryExpr)
        )
        matrix = self.eval(args[index], t)
        assert isinstance(matrix, Matrix)
        window = _window_of(args[index], self, t)
        scalar_args = [self._scalar(a, t) for i, a in enumerate(args) if i != index]
        out = Vector()
        for labels, points in matrix:
            value = _apply_range(name, points, scalar_args, window, t)
            if value is not None:
                out.append((labels if name == "last_over_time" else lbl.drop_name(labels), value))
        return ensure_unique(out)

    def _simple(self, name: str, args: list[Any], t: int) -> Value:
        vec = self._vector(args[0], t)
        fun = fn.SIMPLE[name]
        return ensure_unique(Vector((lbl.drop_name(labels), fun(v)) for labels, v in vec))

    def _time_part(self, name: str, args: list[Any], t: int) -> Value:
        vec = self._vector(args[0], t) if args else Vector([((), t / 1000)])
        return ensure_unique(
            Vector((lbl.drop_name(labels), date_part(name, v)) for labels, v in vec)
        )


def _window_of(node: Any, ev: Evaluator, t: int) -> tuple[int, int]:
    """(start, end) in ms of a range argument, as `extrapolatedRate` sees it."""
    if isinstance(node, pp.MatrixSelector):
        vs = node.vector_selector
        end = ev._ref_time(vs.at, vs.offset, t)
        return end - _ms(node.range), end
    end = ev._ref_time(node.at, node.offset, t)
    return end - _ms(node.range), end


def _apply_range(
    name: str, points: list[tuple[int, float]], params: list[float], window: tuple[int, int], t: int
) -> float | None:
    if not points:
        return None
    over = fn.OVER_TIME.get(name)
    if over is not None:
        return over(points)
    if name in ("rate", "increase", "delta"):
        return fn.extrapolated_rate(points, window, counter=name != "delta", rate=name == "rate")
    if name in ("irate", "idelta"):
        return fn.instant_delta(points, name == "irate")
    if name == "quantile_over_time":
        return fn.quantile_over_time(params[0], points)
    if name == "deriv":
        return fn.deriv(points)
    if name == "predict_linear":
        return fn.predict_linear(points, params[0], t)
    raise PromQLError(f"function {name}() is not supported by kupgrade's embedded engine")


def _fn_vector(ev: Evaluator, args: list[Any], t: int) -> Value:
    return Vector([((), ev._scalar(args[0], t))])


def _fn_scalar(ev: Evaluator, args: list[Any], t: int) -> Value:
    vec = ev._vector(args[0], t)
    return Scalar(vec[0][1] if len(vec) == 1 else math.nan)


def _fn_time(ev: Evaluator, args: list[Any], t: int) -> Value:
    return Scalar(t / 1000)


def _fn_pi(ev: Evaluator, args: list[Any], t: int) -> Value:
    return Scalar(math.pi)


def _fn_timestamp(ev: Evaluator, args: list[Any], t: int) -> Value:
    arg = args[0]
    if isinstance(arg, pp.VectorSelector):  # the sample's own time, as 2.42 reports it
        ref = ev._ref_time(arg.at, arg.offset, t)
        pairs = ev.snapshot.instant_times(_matchers(arg), ref, ev.lookback_ms)
        return ensure_unique(Vector((lbl.drop_name(labels), ts / 1000) for labels, ts in pairs))
    vec = ev._vector(arg, t)
    return ensure_unique(Vector((lbl.drop_name(labels), t / 1000) for labels, _ in vec))


def _fn_label_replace(ev: Evaluator, args: list[Any], t: int) -> Value:
    vec = ev._vector(args[0], t)
    dst, repl, src, pattern = (ev._string(a, t) for a in args[1:5])
    return ensure_unique(fn.label_replace(vec, dst, repl, src, pattern))


def _fn_label_join(ev: Evaluator, args: list[Any], t: int) -> Value:
    vec = ev._vector(args[0], t)
    dst, sep = ev._string(args[1], t), ev._string(args[2], t)
    sources = [ev._string(a, t) for a in args[3:]]
    return ensure_unique(fn.label_join(vec, dst, sep, sources))


def _fn_sort(descending: bool) -> Callable[[Evaluator, list[Any], int], Value]:
    def call(ev: Evaluator, args: list[Any], t: int) -> Value:
        return fn.sort_vector(ev._vector(args[0], t), descending)

    return call


def _fn_clamp(name: str) -> Callable[[Evaluator, list[Any], int], Value]:
    def call(ev: Evaluator, args: list[Any], t: int) -> Value:
        vec = ev._vector(args[0], t)
        bounds = [ev._scalar(a, t) for a in args[1:]]
        if name == "clamp":
            lo, hi = bounds
            if hi < lo:
                return Vector()
        elif name == "clamp_min":
            lo, hi = bounds[0], math.inf
        else:
            lo, hi = -math.inf, bounds[0]
        return ensure_unique(
            Vector((lbl.drop_name(labels), fn.clamp(v, lo, hi)) for labels, v in vec)
        )

    return call


def _fn_round(ev: Evaluator, args: list[Any], t: int) -> Value:
    vec = ev._vector(args[0], t)
    to = ev._scalar(args[1], t) if len(args) > 1 else 1.0
    return ensure_unique(Vector((lbl.drop_name(labels), fn.round_to(v, to)) for labels, v in vec))


def _by_name(
    handler: Callable[[Evaluator, str, list[Any], int], Value], name: str
) -> Callable[[Evaluator, list[Any], int], Value]:
    return lambda ev, args, t: handler(ev, name, args, t)


_CALLS: dict[str, Callable[[Evaluator, list[Any], int], Value]] = {
    "vector": _fn_vector,
    "scalar": _fn_scalar,
    "time": _fn_time,
    "pi": _fn_pi,
    "timestamp": _fn_timestamp,
    "label_replace": _fn_label_replace,
    "label_join": _fn_label_join,
    "sort": _fn_sort(False),
    "sort_desc": _fn_sort(True),
    "clamp": _fn_clamp("clamp"),
    "clamp_min": _fn_clamp("clamp_min"),
    "clamp_max": _fn_clamp("clamp_max"),
    "round": _fn_round,
    **{name: _by_name(Evaluator._simple, name) for name in fn.SIMPLE},
    **{
        name: _by_name(Evaluator._time_part, name)
        for name in (
            "day_of_month",
            "day_of_week",
            "day_of_year",
            "days_in_month",
            "hour",
            "minute",
            "month",
            "year",
        )
    },
}

_DISPATCH: dict[type, Callable[[Evaluator, Any, int], Value]] = {
    pp.NumberLiteral: Evaluator._number,
    pp.StringLiteral: Evaluator._string_literal,
    pp.ParenExpr: Evaluator._paren,
    pp.VectorSelector: Evaluator._selector,
    pp.MatrixSelector: Evaluator._matrix_selector,
    pp.SubqueryExpr: Evaluator._subquery,
    pp.UnaryExpr: Evaluator._unary,
    pp.BinaryExpr: Evaluator._binary,
    pp.AggregateExpr: Evaluator._aggregate,
    pp.Call: Evaluator._call,
}


@lru_cache(maxsize=4096)
def parse(expr: str) -> Any:
    """Parse once per distinct text: risk rules repeat across edges and clusters."""
    check_text(expr)
    try:
        return pp.parse(expr)
    except (ValueError, OverflowError) as exc:
        raise PromQLError(f"parse error: {exc}", "bad_data") from None
    except BaseException as exc:
        # pyo3 turns a Rust panic into PanicException, which is not an Exception.
        if type(exc).__name__ != "PanicException":
            raise
        raise PromQLError("parse error: the expression could not be parsed", "bad_data") from None


def evaluate(
    expr: str,
    snapshot: Snapshot,
    time_ms: int,
    lookback_ms: int = LOOKBACK_MS,
    limits: QueryLimits | None = None,
) -> Value:
    """The value of an instant query, or PromQLError as Prometheus would refuse it."""
    check_query_time(time_ms)
    tree = parse(expr)
    try:
        return Evaluator(snapshot, time_ms, lookback_ms, limits).eval(tree, time_ms)
    except RecursionError:
        raise PromQLError("expression nests too deeply to evaluate", "bad_data") from None


def evaluate_text(
    expr: str, snapshot: Snapshot, time_ms: int, limits: QueryLimits | None = None
) -> dict[str, Any]:
    """The `/api/v1/query` answer: its `data` object, or `{"errorType", "error"}`."""
    try:
        return to_api(evaluate(expr, snapshot, time_ms, limits=limits), time_ms)
    except PromQLError as exc:
        return {"errorType": exc.error_type, "error": exc.message}


# prometheus/web/api/v1/api.go minTime/maxTime: the times its API can represent (Go's
# integer division truncates toward zero, hence the negated floor).
_MIN_TIME_MS = (-((2**63) // 1000) + 62135596801) * 1000
_MAX_TIME_MS = ((2**63 - 1) // 1000 - 62135596801) * 1000


def check_query_time(time_ms: int) -> None:
    """A query time as Prometheus's API accepts it, else bad_data."""
    if not _MIN_TIME_MS <= time_ms <= _MAX_TIME_MS:
        raise PromQLError(f"cannot parse {time_ms / 1000!r} to a valid timestamp", "bad_data")


def parse_time(text: str) -> int:
    """A query time as the API takes it (Unix seconds, fractions allowed, or RFC 3339), in ms."""
    try:
        seconds = float(text)
    except ValueError:
        try:
            seconds = datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
        except ValueError:
            raise PromQLError(f"cannot parse {text!r} to a valid timestamp", "bad_data") from None
    if not math.isfinite(seconds):
        raise PromQLError(f"cannot parse {text!r} to a valid timestamp", "bad_data")
    time_ms = round(seconds * 1000)
    if not _MIN_TIME_MS <= time_ms <= _MAX_TIME_MS:
        raise PromQLError(f"cannot parse {text!r} to a valid timestamp", "bad_data")
    return time_ms
