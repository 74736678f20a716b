"""The six conformance snapshots: our engine against the stored Prometheus 2.42 answers."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from kupgrade.risks.promql import load_snapshot
from kupgrade.risks.promql.engine import evaluate_text
from kupgrade.risks.promql.expressions import load_expressions
from tests.support.conformance import conformance_path


def _compare_module() -> ModuleType:
    """The conformance comparison rule, read from ../shared at run time."""
    path = conformance_path("promql", "compare.py")
    spec = importlib.util.spec_from_file_location("promql_compare", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases() -> list[dict[str, Any]]:
    index = conformance_path("promql", "cases", "cases.yaml")
    return list(yaml.safe_load(index.read_text())["cases"])


def _case_ids() -> list[str]:
    try:
        return [c["name"] for c in _cases()]
    except pytest.skip.Exception:
        return ["absent"]


@pytest.mark.parametrize("name", _case_ids())
def test_case_agrees_with_prometheus(name: str) -> None:
    case = next(c for c in _cases() if c["name"] == name)
    folder = conformance_path("promql", "cases")
    snapshot = load_snapshot(folder / case["metrics"])
    expressions = load_expressions(folder / case["exprs"])
    expected = json.loads((folder / case["expected"]).read_text())
    actual = {
        ident: evaluate_text(expr, snapshot, case["time"] * 1000)
        for ident, expr in expressions.items()
    }
    ok, bad = _compare_module().compare(expected, actual)
    assert not bad, f"{len(bad)} disagreements, first: {bad[0]}"
    assert len(ok) == len(expected)
    # Beyond the multiset rule: Prometheus's order and formatting, byte for byte.
    assert json.dumps(actual, sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_cli_prints_the_api_shape_for_an_exprs_file(tmp_path: Path) -> None:
    case = _cases()[1]
    folder = conformance_path("promql", "cases")
    done = subprocess.run(
        [sys.executable, "-m", "kupgrade", "promql", "eval", "--metrics", str(folder / case["metrics"]),
         "--time", str(case["time"]), "--exprs", str(folder / case["exprs"]), "-o", "json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    actual = json.loads(done.stdout)
    expected = json.loads((folder / case["expected"]).read_text())
    assert list(actual) == list(expected)
    assert _compare_module().compare(expected, actual)[1] == []
