"""PodDisruptionBudget arithmetic and the Eviction API's answer (SPEC E3, G11).

Percentages round up (the disruption controller's GetScaledValueFromIntOrPercent with
roundUp); maxUnavailable gives desiredHealthy = expected − ceil(pct). An eviction of a
ready pod needs disruptionsAllowed > 0; a pod that is not ready may go when the budget
is healthy (IfHealthyBudget, the default) or always (AlwaysAllow); two budgets over one
pod is a server error, as the API server answers.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

# SPEC G11: a node that has drained for more than this long goes into maintenance anyway.
GDC_DRAIN_CAP_MINUTES = 20

TWO_BUDGETS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def scaled(value: int | str, total: int) -> int:
    """A budget count; percentages round up."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


def budget_status(spec: dict[str, Any], expected: int, healthy: int) -> dict[str, Any]:
    """currentHealthy, desiredHealthy, disruptionsAllowed and expectedPods of a budget.

    A budget whose numbers cannot be read (a store an older kupgrade wrote, before the
    API validated them) allows no disruption and says why in a DisruptionAllowed
    condition, as the disruption controller's failSafe does (pkg/controller/disruption
    disruption.go): a drain then waits on it, named, instead of the run failing."""
    try:
        if spec.get("minAvailable") is not None:
            desired = scaled(spec["minAvailable"], expected)
        elif spec.get("maxUnavailable") is not None:
            desired = expected - scaled(spec["maxUnavailable"], expected)
        else:
            desired = expected
    except (TypeError, ValueError):
        bad = spec.get("minAvailable", spec.get("maxUnavailable"))
        return {
            "currentHealthy": healthy,
            "desiredHealthy": expected,
            "disruptionsAllowed": 0,
            "expectedPods": expected,
            "conditions": [
                {
                    "type": "DisruptionAllowed",
                    "status": "False",
                    "reason": "SyncFailed",
                    "message": f"invalid value for IntOrString: {bad!r} is neither a "
                    "number nor a percentage",
                }
            ],
        }
    return {
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "disruptionsAllowed": max(0, healthy - desired),
        "expectedPods": expected,
    }


class Answer(NamedTuple):
    """A tuple, not a frozen dataclass: a 5,000-node rehearsal asks ~400,000 times, and a
    frozen dataclass sets each field through object.__setattr__."""

    code: int  # 200 evicted, 429 refused by the budget, 500 misconfigured budgets
    message: str
    cause: str = ""  # the Status's DisruptionBudget cause, which names the budget


def eviction(ready: bool, budgets: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> Answer:
    """What the Eviction API answers for one pod; `budgets` = (name, spec, status)."""
    if len(budgets) > 1:
        return Answer(500, TWO_BUDGETS)
    if not budgets:
        return Answer(200, "evicted")
    name, spec, status = budgets[0]
    if not ready:
        policy = spec.get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
        healthy_budget = status["currentHealthy"] >= status["desiredHealthy"] > 0
        if policy == "AlwaysAllow" or healthy_budget:
            return Answer(200, "evicted")
    if status["disruptionsAllowed"] > 0:
        return Answer(200, "evicted")
    # kubernetes pkg/registry/core/pod/storage/eviction.go checkAndDecrement: a 429 whose
    # cause names the budget (disruptionDeniedMessage, the CurrentHealthy <= DesiredHealthy
    # branch, or the generic one).
    if status["currentHealthy"] <= status["desiredHealthy"]:
        cause = (
            f"The disruption budget {name} needs {status['desiredHealthy']} healthy pods "
            f"and has {status['currentHealthy']} currently"
        )
    else:
        cause = f"The disruption budget {name} does not allow evicting pods currently"
    return Answer(429, "Cannot evict pod as it would violate the pod's disruption budget.", cause)


def gdc_drain_policy(minor: tuple[int, int]) -> dict[str, Any]:
    """SPEC G11: how a distributed-cloud release drains nodes."""
    honours = minor >= (1, 29)
    return {
        "pdb_honoured": honours,
        "pods_evicted_via": "Eviction API" if honours else "taint (best effort)",
        "gives_up_after_minutes": GDC_DRAIN_CAP_MINUTES,
    }
