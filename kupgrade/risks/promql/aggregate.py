"""Aggregation operators, reproducing Prometheus 2.42's `aggregation` step by step.

Risk expressions use `topk(1, a or b)` to pick one representative among equal values,
so the *labels* of an answer depend on which sample wins a tie: groups come out in the
order their first member appears, and `topk`/`bottomk` keep Go's `container/heap` with
Prometheus's comparison (NaN is always "less"), replacing a kept sample only when a
later one is strictly better. Running means and variances are the engine's incremental
formulas, so results agree to the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from kupgrade.risks.promql import labels as lbl
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.risks.promql.labels import Labels
from kupgrade.risks.promql.values import Vector, format_value

Less = Callable[[tuple[Labels, float], tuple[Labels, float]], bool]


def _less_top(a: tuple[Labels, float], b: tuple[Labels, float]) -> bool:
    return math.isnan(a[1]) or a[1] < b[1]


def _less_bottom(a: tuple[Labels, float], b: tuple[Labels, float]) -> bool:
    return math.isnan(a[1]) or a[1] > b[1]


def _up(h: list[tuple[Labels, float]], j: int, less: Less) -> None:
    while j > 0:
        i = (j - 1) // 2
        if not less(h[j], h[i]):
            break
        h[i], h[j] = h[j], h[i]
        j = i


def _down(h: list[tuple[Labels, float]], i0: int, n: int, less: Less) -> None:
    i = i0
    while True:
        j1 = 2 * i + 1
        if j1 >= n:
            break
        j = j1
        if j1 + 1 < n and less(h[j1 + 1], h[j1]):
            j = j1 + 1
        if not less(h[j], h[i]):
            break
        h[i], h[j] = h[j], h[i]
        i = j


def _sorted_reverse(h: list[tuple[Labels, float]], less: Less) -> list[tuple[Labels, float]]:
    """`sort.Sort(sort.Reverse(heap))`: Go sorts short slices by insertion, stably."""
    out = list(h)
    for i in range(1, len(out)):
        j = i
        while j > 0 and less(out[j - 1], out[j]):
            out[j], out[j - 1] = out[j - 1], out[j]
            j -= 1
    return out


@dataclass
class _Group:
    labels: Labels
    value: float = 0.0
    mean: float = 0.0
    count: int = 0
    heap: list[tuple[Labels, float]] = field(default_factory=list)
    values: list[float] = field(default_factory=list)


def _group_key(grouping: frozenset[str], without: bool) -> Callable[[Labels], Labels]:
    if without:
        dropped = grouping | {lbl.NAME}
        return lambda labels: lbl.without(labels, dropped)
    return lambda labels: lbl.keep(labels, grouping)


def quantile(q: float, values: list[float]) -> float:
    if not values:
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    ordered = sorted(values, key=lambda v: (not math.isnan(v), v))
    n = len(ordered)
    rank = q * (n - 1)
    lower = max(0.0, math.floor(rank))
    upper = min(n - 1.0, lower + 1)
    weight = rank - math.floor(rank)
    return ordered[int(lower)] * (1 - weight) + ordered[int(upper)] * weight


def aggregate(
    op: str,
    vec: Vector,
    grouping: frozenset[str],
    without: bool,
    param: float | str | None,
) -> Vector:
    if op == "count_values":
        return _count_values(vec, grouping, without, str(param))
    key_of = _group_key(grouping, without)
    k = 0
    if op in ("topk", "bottomk"):
        assert isinstance(param, float)
        k = _k(param)
        if k < 1:
            return Vector()
    groups: dict[Labels, _Group] = {}
    for labels, v in vec:
        key = key_of(labels)
        group = groups.get(key)
        if group is None:
            groups[key] = _start(op, key, labels, v)
        else:
            _add(op, group, labels, v, k)
    return _finish(op, groups, param)


def _k(param: float) -> int:
    if math.isnan(param) or math.isinf(param):
        raise PromQLError(f"Parameter value is out of range: {format_value(param)}")
    return int(param)


def _start(op: str, key: Labels, labels: Labels, v: float) -> _Group:
    group = _Group(labels=key, value=v, mean=v, count=1)
    if op in ("topk", "bottomk"):
        group.heap = [(labels, v)]
    elif op in ("stddev", "stdvar"):
        group.value = 0.0
    elif op == "group":
        group.value = 1.0
    elif op == "quantile":
        group.values = [v]
    return group


def _add(op: str, g: _Group, labels: Labels, v: float, k: int) -> None:
    g.count += 1
    if op == "sum":
        g.value += v
    elif op == "avg":
        _avg_step(g, v)
    elif op == "max":
        if g.value < v or math.isnan(g.value):
            g.value = v
    elif op == "min":
        if g.value > v or math.isnan(g.value):
            g.value = v
    elif op in ("stddev", "stdvar"):
        delta = v - g.mean
        g.mean += delta / g.count
        g.value += delta * (v - g.mean)
    elif op in {"topk", "bottomk"}:
        _heap_step(g.heap, (labels, v), k, _less_top if op == "topk" else _less_bottom, op)
    elif op == "quantile":
        g.values.append(v)


def _avg_step(g: _Group, v: float) -> None:
    if math.isinf(g.mean):
        if math.isinf(v) and (g.mean > 0) == (v > 0):
            return
        if not math.isinf(v) and not math.isnan(v):
            return
    g.mean += v / g.count - g.mean / g.count


def _heap_step(
    heap: list[tuple[Labels, float]], sample: tuple[Labels, float], k: int, less: Less, op: str
) -> None:
    """One sample into a full or filling heap, as measured against Prometheus 2.42.

    A NaN at the top is always displaced (even by another NaN), and displacement is Go's
    `heap.Pop` followed by `heap.Push`, not an in-place fix: both decide which of several
    equal samples survive, which the risk rules' `topk(1, …)` depend on.
    """
    if len(heap) < k:
        heap.append(sample)
        _up(heap, len(heap) - 1, less)
        return
    top = heap[0][1]
    v = sample[1]
    better = top < v if op == "topk" else top > v
    if better or math.isnan(top):
        last = len(heap) - 1
        heap[0], heap[last] = heap[last], heap[0]
        _down(heap, 0, last, less)
        heap[last] = sample
        _up(heap, last, less)


def _finish(op: str, groups: dict[Labels, _Group], param: float | str | None) -> Vector:
    out = Vector()
    for key, g in groups.items():
        if op in ("topk", "bottomk"):
            out.extend(_sorted_reverse(g.heap, _less_top if op == "topk" else _less_bottom))
            continue
        if op == "avg":
            value = g.mean
        elif op == "count":
            value = float(g.count)
        elif op == "stdvar":
            value = g.value / g.count
        elif op == "stddev":
            value = math.sqrt(g.value / g.count)
        elif op == "quantile":
            assert isinstance(param, float)
            value = quantile(param, g.values)
        else:
            value = g.value
        out.append((key, value))
    return out


def _count_values(vec: Vector, grouping: frozenset[str], without: bool, label: str) -> Vector:
    if not lbl.valid_name(label):
        raise PromQLError(f"invalid label name {label!r}")
    relabelled = Vector((lbl.with_label(labels, label, format_value(v)), 1.0) for labels, v in vec)
    if without:
        return aggregate("count", relabelled, grouping, True, None)
    return aggregate("count", relabelled, grouping | {label}, False, None)
