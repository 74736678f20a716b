"""The six conformance snapshots: our engine against the stored Prometheus 2.42 answers."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from kupgrade.risks.promql import load_snapshot
from kupgrade.risks.promql.engine import evaluate_text
from kupgrade.risks.promql.expressions import load_expressions
from kupgrade.risks.rules import inject_cluster_id
from tests.support.caseuse import case_params, plain, unused
from tests.support.conformance import conformance_path, need_case


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


def _tracked() -> list[Any]:
    """One tracked param per case: a field the test leaves unread fails it (caseuse)."""
    try:
        cases = _cases()
    except pytest.skip.Exception:
        return [pytest.param(None, id="absent")]
    return case_params(cases, id_key="name")


ID_MODES = {"none": 0, "single": 1}  # "fleet": two or more clusters


@pytest.mark.parametrize("case", _tracked())
def test_case_agrees_with_prometheus(case: Any) -> None:
    case = need_case(case, "promql", "cases", "cases.yaml")
    # How the snapshot was generated (a seed, the clusters it describes): not outcomes,
    # except the metrics each cluster leaves out, which its snapshot must not carry.
    described = ("platform", "version", "initial", "topology", "hypershift", "aro", "network")
    unused(case, "seed", "clusters[].csvs", *(f"clusters[].{k}" for k in described))
    folder = conformance_path("promql", "cases")
    assert all(case[k].startswith(case["name"]) for k in ("metrics", "exprs", "expected"))
    snapshot = load_snapshot(folder / case["metrics"])
    assert len(snapshot.series) == case["series"]
    assert sum(len(s.ts) for s in snapshot.series) == case["samples"]
    ids, mode = case["cluster_ids"], case["id_mode"]
    assert len(ids) == ID_MODES[mode] if mode in ID_MODES else len(ids) >= 2
    assert all(("_id" in s.lab) == (mode != "none") for s in snapshot.series)
    for i, cluster in enumerate(case["clusters"]):
        own = ids[i] if ids else None  # the clusters are listed in cluster_ids' order
        names = {s.lab["__name__"] for s in snapshot.series if s.lab.get("_id") == own}
        assert not names & set(cluster.get("metrics_absent") or []), cluster
    expressions = load_expressions(folder / case["exprs"])
    for ident, expr in expressions.items():
        if ids and f"{ident}i" in expressions:  # the CVO's HyperShift injection, ours
            assert inject_cluster_id(ids[0], expr) == expressions[f"{ident}i"]
    expected = json.loads((folder / case["expected"]).read_text())
    actual = {
        ident: evaluate_text(expr, snapshot, case["time"] * 1000)
        for ident, expr in expressions.items()
    }
    compare = _compare_module()
    ok, bad = compare.compare(expected, actual)
    assert not bad, f"{len(bad)} disagreements, first: {bad[0]}"
    assert len(ok) == len(expected)
    # Beyond the multiset rule: Prometheus's order and formatting, byte for byte.
    assert json.dumps(actual, sort_keys=True) == json.dumps(expected, sort_keys=True)
    # The CVO's reading of each result (compare.py verdict), counted.
    assert dict(Counter(compare.verdict(r) for r in actual.values())) == plain(case["outcomes"])


def test_cli_prints_the_api_shape_for_an_exprs_file(tmp_path: Path) -> None:
    case = _cases()[1]
    folder = conformance_path("promql", "cases")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "promql",
            "eval",
            "--metrics",
            str(folder / case["metrics"]),
            "--time",
            str(case["time"]),
            "--exprs",
            str(folder / case["exprs"]),
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    actual = json.loads(done.stdout)
    expected = json.loads((folder / case["expected"]).read_text())
    assert list(actual) == list(expected)
    assert _compare_module().compare(expected, actual)[1] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("expressions: []\n", "the file lists no expression"),
        ("expressions: {a: up}\n", "expected a list under 'expressions'"),
        ("expressions: [{id: a}]\n", "each entry needs a string 'expr'"),
        ("expressions: [{id: a, expr: up}, {id: a, expr: up}]\n", "id 'a' appears twice"),
    ],
)
def test_an_exprs_file_that_evaluates_nothing_is_refused(
    tmp_path: Path, text: str, expected: str
) -> None:
    """An empty list would print an empty table with exit 0: nothing was evaluated."""
    exprs = tmp_path / "exprs.yaml"
    exprs.write_text(text)
    metrics = conformance_path("promql", "cases") / _cases()[0]["metrics"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "promql",
            "eval",
            "--metrics",
            str(metrics),
            "--exprs",
            str(exprs),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stdout
    [line] = done.stderr.splitlines()
    assert str(exprs) in line and expected in line, line
