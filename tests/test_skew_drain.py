"""Budget arithmetic and the Eviction API (conformance/skew/drain.yaml: pdb_status, eviction)."""

from __future__ import annotations

from typing import Any

import pytest

from kupgrade.cluster.disruption import budget_status, eviction
from tests.conftest import conformance_cases, need_case


def _cases(section: str) -> list[Any]:
    return conformance_cases(
        "cases", "skew", "drain.yaml", where=lambda c: c.get("section") == section
    )


@pytest.mark.parametrize("case", _cases("pdb_status"))
def test_pdb_status(case: Any) -> None:
    case = need_case(case, "skew", "drain.yaml")
    inp = case["input"]
    assert budget_status(inp["pdb"], inp["expectedPods"], inp["currentHealthy"]) == case["expect"]


@pytest.mark.parametrize("case", _cases("eviction"))
def test_eviction_answer(case: Any) -> None:
    case = need_case(case, "skew", "drain.yaml")
    inp = case["input"]
    pods = inp["pods"]
    spec = inp.get("pdb")
    budgets = []
    if inp.get("pdbs_selecting_pod", 1 if spec else 0) > 1:
        budgets = [("a", {"maxUnavailable": 1}, budget_status({"maxUnavailable": 1}, 1, 1))] * 2
    elif spec is not None:
        healthy = sum(1 for p in pods if p == "ready")
        budgets = [("pdb", spec, budget_status(spec, len(pods), healthy))]
    answer = eviction(pods[inp["evict"]] == "ready", budgets)
    assert answer.code == case["expect"]["status"]
