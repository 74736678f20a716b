"""Label selectors as the API server and every controller read them (apimachinery
pkg/apis/meta/v1/helpers.go LabelSelectorAsSelector, pkg/labels/selector.go): matchLabels
and matchExpressions (In, NotIn, Exists, DoesNotExist) ANDed; an empty selector selects
everything, a null one nothing. The one reading of selectors for budgets, machine-config
pools and `upgrade status`.

A selector the API server would refuse (an unknown operator, In or NotIn without values,
Exists or DoesNotExist with values) selects nothing here; `problem` says what is wrong
with it, in apimachinery's words, for a caller that reports it.
"""

from __future__ import annotations

from typing import Any

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def problem(selector: dict[str, Any] | None) -> str | None:
    """Why the API server would refuse the selector, or None."""
    if selector is not None and not isinstance(selector, dict):
        return "a label selector is an object"
    wanted, exprs = (selector or {}).get("matchLabels"), (selector or {}).get("matchExpressions")
    if wanted is not None and not isinstance(wanted, dict):
        return "matchLabels is a map of labels"
    if exprs is not None and not (
        isinstance(exprs, list) and all(isinstance(e, dict) for e in exprs)
    ):
        return "matchExpressions is a list of requirements"
    for expr in exprs or []:
        operator, values = expr.get("operator"), expr.get("values") or []
        if operator not in OPERATORS:
            return f"{operator!r} is not a valid label selector operator"
        if operator in ("In", "NotIn") and not values:
            return "for 'in', 'notin' operators, values set can't be empty"
        if operator in ("Exists", "DoesNotExist") and values:
            return "values set must be empty for exists and does not exist"
    return None


def matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """Whether `labels` are selected: nil selects nothing, {} everything."""
    if selector is None or problem(selector) is not None:
        return False
    wanted = selector.get("matchLabels") or {}
    if any(labels.get(k) != v for k, v in wanted.items()):
        return False
    return all(_requirement(e, labels) for e in selector.get("matchExpressions") or [])


def _requirement(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    key, operator, values = expr.get("key", ""), expr.get("operator"), expr.get("values") or []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    return key not in labels  # DoesNotExist
