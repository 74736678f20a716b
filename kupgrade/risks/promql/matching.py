"""Binary operators between vectors and scalars, and vector matching (on/ignoring,
group_left/group_right, set operators), as Prometheus 2.42's engine does them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import promql_parser as pp

from kupgrade.risks.promql import labels as lbl
from kupgrade.risks.promql.arith import COMPARISON, SET_OPS, elem_binop
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.risks.promql.labels import Labels
from kupgrade.risks.promql.values import Vector

# Prometheus drops `__name__` for these operators only (`shouldDropMetricName`): not atan2.
_DROPS_NAME = frozenset({"+", "-", "*", "/", "%", "^"})


def ensure_unique(vec: Vector) -> Vector:
    """Prometheus refuses any (intermediate) vector holding one label set twice."""
    if len(vec) > 1 and len({labels for labels, _ in vec}) != len(vec):
        raise PromQLError("vector cannot contain metrics with the same labelset")
    return vec


def _signature(on: bool, names: frozenset[str]) -> Callable[[Labels], Labels]:
    if on:
        return lambda labels: lbl.keep(labels, names)
    dropped = names | {lbl.NAME}
    return lambda labels: lbl.without(labels, dropped)


def vector_scalar(op: str, vec: Vector, scalar: float, swap: bool, return_bool: bool) -> Vector:
    """`VectorscalarBinop`: a comparison always yields the vector's own value."""
    out = Vector()
    for labels, v in vec:
        left, right = (scalar, v) if swap else (v, scalar)
        value, keep = elem_binop(op, left, right)
        if op in COMPARISON and swap:
            value = right
        if return_bool:
            value, keep = (1.0 if keep else 0.0), True
        if keep:
            out.append(
                (lbl.drop_name(labels) if op in _DROPS_NAME or return_bool else labels, value)
            )
    return out


@dataclass(frozen=True, slots=True)
class Matching:
    """A binary operator's vector matching: `on`/`ignoring`, cardinality, `group_x` labels."""

    op: str
    on: bool = False
    names: frozenset[str] = frozenset()
    card: str = "OneToOne"
    include: tuple[str, ...] = ()
    return_bool: bool = False

    @classmethod
    def of(cls, op: str, mod: Any) -> Matching:
        if mod is None:
            return cls(op, card="ManyToMany" if op in SET_OPS else "OneToOne")
        fill = getattr(mod, "fill_values", None)
        if fill is not None and (fill.lhs is not None or fill.rhs is not None):
            raise PromQLError(
                "fill modifiers are not PromQL as Prometheus 2.42 parses it", "bad_data"
            )
        on = mod.matching is not None and mod.matching.type == pp.LabelModifierType.Include
        names = frozenset(mod.matching.labels) if mod.matching is not None else frozenset()
        card = str(mod.card).rsplit(".", 1)[-1]
        return cls(op, on, names, card, tuple(mod.group_labels or ()), bool(mod.return_bool))

    def signature(self) -> Callable[[Labels], Labels]:
        return _signature(self.on, self.names)


def vector_vector(op: str, lhs: Vector, rhs: Vector, mod: Any) -> Vector:
    matching = Matching.of(op, mod)
    if op in SET_OPS:
        return _set_op(op, lhs, rhs, matching.signature())
    return _binop(lhs, rhs, matching)


def _set_op(op: str, lhs: Vector, rhs: Vector, sig: Callable[[Labels], Labels]) -> Vector:
    if op == "and":
        if not lhs or not rhs:
            return Vector()
        right = {sig(labels) for labels, _ in rhs}
        return Vector(s for s in lhs if sig(s[0]) in right)
    if op == "or":
        if not lhs or not rhs:
            return Vector(lhs or rhs)
        left = {sig(labels) for labels, _ in lhs}
        return Vector([*lhs, *(s for s in rhs if sig(s[0]) not in left)])
    if not lhs or not rhs:
        return Vector(lhs)
    right = {sig(labels) for labels, _ in rhs}
    return Vector(s for s in lhs if sig(s[0]) not in right)


def _binop(lhs: Vector, rhs: Vector, m: Matching) -> Vector:
    """`VectorBinop`, including its errors and the swap for `group_right`."""
    if not lhs or not rhs:
        return Vector()
    sig = m.signature()
    one_to_many = m.card == "OneToMany"
    if one_to_many:
        lhs, rhs = rhs, lhs
    right = _one_side(rhs, sig, "left" if one_to_many else "right")
    matched: dict[Labels, set[Labels]] = {}
    out = Vector()
    for labels, v in lhs:
        key = sig(labels)
        found = right.get(key)
        if found is None:
            continue
        vl, vr = (found[1], v) if one_to_many else (v, found[1])
        value, keep = elem_binop(m.op, vl, vr)
        if m.return_bool:
            value = 1.0 if keep else 0.0
        elif not keep:
            continue
        metric = _result_metric(labels, found[0], m)
        _check_unique_match(matched, key, metric, m.card == "OneToOne")
        out.append((metric, value))
    return out


def _one_side(
    samples: Vector, sig: Callable[[Labels], Labels], side: str
) -> dict[Labels, tuple[Labels, float]]:
    """Index the "one" side by signature; two samples in one group is many-to-many."""
    index: dict[Labels, tuple[Labels, float]] = {}
    for sample in samples:
        key = sig(sample[0])
        dup = index.get(key)
        if dup is not None:
            raise PromQLError(
                f"found duplicate series for the match group {lbl.go_string(key)} on the {side} "
                f"hand-side of the operation: [{lbl.go_string(sample[0])}, {lbl.go_string(dup[0])}]"
                ";many-to-many matching not allowed: matching labels must be unique on one side"
            )
        index[key] = sample
    return index


def _check_unique_match(
    matched: dict[Labels, set[Labels]], key: Labels, metric: Labels, one_to_one: bool
) -> None:
    seen = matched.get(key)
    if one_to_one:
        if seen is not None:
            raise PromQLError(
                "multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)"
            )
        matched[key] = set()
        return
    if seen is None:
        seen = matched[key] = set()
    elif metric in seen:
        raise PromQLError("multiple matches for labels: grouping labels must ensure unique matches")
    seen.add(metric)


def _result_metric(many: Labels, one: Labels, m: Matching) -> Labels:
    metric = lbl.drop_name(many) if m.op in _DROPS_NAME else many
    if m.card == "OneToOne":
        metric = lbl.keep(metric, m.names) if m.on else lbl.without(metric, m.names)
    for name in m.include:
        metric = lbl.with_label(metric, name, lbl.get(one, name))
    return lbl.drop_name(metric) if m.return_bool else metric


# -- function table -----------------------------------------------------------------------
