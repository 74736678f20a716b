"""PromQL value types and their Prometheus HTTP API (`/api/v1/query` `data`) shape."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kupgrade.risks.promql.labels import Labels


class Vector(list[tuple[Labels, float]]):
    """An instant vector in evaluation order (the order that breaks ties in `topk`)."""


class Matrix(list[tuple[Labels, list[tuple[int, float]]]]):
    """A range vector: per series, its (timestamp ms, value) points in time order."""


@dataclass(frozen=True, slots=True)
class Scalar:
    value: float


@dataclass(frozen=True, slots=True)
class String:
    value: str


Value = Vector | Matrix | Scalar | String


def format_value(v: float) -> str:
    """Go's `strconv.FormatFloat(v, 'f', -1, 64)`, as Prometheus writes sample values.

    Python's repr is the same shortest round-trip digit string but may switch to
    exponent notation; Go's 'f' format never does.
    """
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    text = repr(v)
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    if text.endswith(".0"):
        text = text[:-2]
    return text


def format_time(ms: int) -> int | float:
    """Prometheus writes a sample time as seconds, a JSON number with millisecond digits."""
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def _metric(labels: Labels) -> dict[str, str]:
    return dict(labels)


def to_api(value: Value, time_ms: int) -> dict[str, Any]:
    """The `data` object of a successful `/api/v1/query` answer."""
    t = format_time(time_ms)
    if isinstance(value, Vector):
        return {
            "resultType": "vector",
            "result": [{"metric": _metric(lb), "value": [t, format_value(v)]} for lb, v in value],
        }
    if isinstance(value, Matrix):
        return {
            "resultType": "matrix",
            "result": [
                {
                    "metric": _metric(lb),
                    "values": [[format_time(ts), format_value(v)] for ts, v in points],
                }
                for lb, points in value
            ],
        }
    if isinstance(value, Scalar):
        return {"resultType": "scalar", "result": [t, format_value(value.value)]}
    return {"resultType": "string", "result": [t, value.value]}
