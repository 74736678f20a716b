"""Differential test: our engine and a real Prometheus on the same generated snapshots.

Each run backfills freshly generated snapshots with promtool into a private Prometheus
on loopback and asks both engines the 64 graph-data expressions (on rule-shaped data)
and hundreds of random expressions from the grammar in promkit (on synthetic data).
The seed comes from KUPGRADE_PROMQL_SEED, or changes every run and is printed on failure.
"""

from __future__ import annotations

import importlib.util
import os
import random
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import yaml

from kupgrade.risks.promql import Snapshot, parse_snapshot
from kupgrade.risks.promql.engine import evaluate_text
from tests.support import promkit
from tests.support.conformance import SHARED, conformance_path
from tests.support.processes import PrometheusProcess

BASE_S = 1_767_000_017
DAY = 86_400
RANDOM_EXPRESSIONS = 400

pytestmark = pytest.mark.skipif(
    shutil.which("prometheus") is None or shutil.which("promtool") is None,
    reason="Debian's prometheus package (prometheus, promtool) is not installed; .ci/run installs it",
)


def _compare() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "promql_compare", conformance_path("promql", "compare.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TIES = re.compile(r"\b(topk|bottomk)\b")
SEED = int(os.environ.get("KUPGRADE_PROMQL_SEED", str(time.time_ns() % 1_000_000)))


class Dataset:
    def __init__(self, end_s: int, snapshot: Snapshot, queries: list[str]) -> None:
        self.end_s = end_s
        self.snapshot = snapshot
        self.queries = queries


@pytest.fixture(scope="module")
def loaded(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[PrometheusProcess, list[Dataset]]]:
    rng = random.Random(SEED)
    work = tmp_path_factory.mktemp("prometheus")
    prom = PrometheusProcess(work)
    rule_exprs = [
        e["expr"]
        for e in yaml.safe_load(conformance_path("promql", "expressions.yaml").read_text())[
            "expressions"
        ]
    ]
    metrics = promkit.rule_metrics(SHARED)
    datasets: list[Dataset] = []
    for i, mode in enumerate(["none", "single", "fleet", "synthetic", "synthetic"]):
        end = BASE_S + i * DAY  # one day apart: no window reaches another snapshot
        if mode == "synthetic":
            text = promkit.synthetic_snapshot(rng, end)
            queries = list(promkit.expressions(rng, RANDOM_EXPRESSIONS))
        else:
            text = promkit.rule_snapshot(metrics, rng, end, mode)
            ids = {
                "none": "",
                "single": "3eb13b90-4668-4257-bdd6-40fb06671ad1",
                "fleet": "4d17951e-85f5-44d1-a731-bb3679428f98",
            }[mode]
            # The HyperShift injection the CVO performs, as the cases' P01i..P64i.
            queries = rule_exprs + [e.replace('_id=""', f'_id="{ids}"') for e in rule_exprs if ids]
        path = work / f"snapshot-{i}.om"
        path.write_text(text)
        prom.backfill(path)
        datasets.append(Dataset(end, parse_snapshot(text, str(path)), queries))
    with prom:
        prom.wait_for("/-/ready")
        yield prom, datasets


def _same_values(compare: ModuleType, expected: Any, actual: Any) -> bool:
    """Both vectors hold the same values, whichever tied series carry them."""
    if compare.agree(expected, actual):
        return True
    if not (isinstance(expected, dict) and isinstance(actual, dict)):
        return False
    if expected.get("resultType") != "vector" or actual.get("resultType") != "vector":
        return False

    def values(doc: dict[str, Any]) -> list[str]:
        return sorted(compare.canon(s["value"][1]) for s in doc.get("result") or [])

    return values(expected) == values(actual)


def _disagreements(
    prom: PrometheusProcess, datasets: list[Dataset], kinds: slice
) -> tuple[int, list[str]]:
    compare = _compare()
    checked, bad = 0, []
    with httpx.Client() as client:
        for data in datasets[kinds]:
            for query in data.queries:
                expected = prom.query(query, data.end_s, client)
                actual = evaluate_text(query, data.snapshot, data.end_s * 1000)
                checked += 1
                if TIES.search(query) and _same_values(compare, expected, actual):
                    # Among equal values Prometheus picks by Go map order, which differs
                    # from one process to the next (the same seed, data and query passed
                    # and failed by turns): for topk/bottomk the values must agree, not
                    # which of the tied series carry them.
                    continue
                if not compare.agree(expected, actual):
                    bad.append(
                        f"{query}\n  prometheus: {compare.brief(expected)}\n  kupgrade:   {compare.brief(actual)}"
                    )
    return checked, bad


def test_graph_data_expressions_agree_on_generated_clusters(
    loaded: tuple[PrometheusProcess, list[Dataset]],
) -> None:
    prom, datasets = loaded
    checked, bad = _disagreements(prom, datasets, slice(0, 3))
    assert checked == 64 * 5
    assert not bad, f"seed {SEED}: {len(bad)}/{checked} disagree:\n" + "\n".join(bad[:5])


def test_random_expressions_agree(loaded: tuple[PrometheusProcess, list[Dataset]]) -> None:
    prom, datasets = loaded
    checked, bad = _disagreements(prom, datasets, slice(3, 5))
    assert checked == 2 * RANDOM_EXPRESSIONS
    assert not bad, f"seed {SEED}: {len(bad)}/{checked} disagree:\n" + "\n".join(bad[:5])


def test_generated_snapshots_have_answers_worth_comparing(
    loaded: tuple[PrometheusProcess, list[Dataset]],
) -> None:
    """Guard against a generator that only produces empty results or errors."""
    _, datasets = loaded
    answers = [
        evaluate_text(q, d.snapshot, d.end_s * 1000) for d in datasets[3:] for q in d.queries
    ]
    non_empty = sum(1 for a in answers if a.get("result"))
    assert non_empty > len(answers) // 4


def test_prometheus_answers_errors_in_the_same_shape(
    loaded: tuple[PrometheusProcess, list[Dataset]], tmp_path: Path
) -> None:
    prom, datasets = loaded
    data = datasets[0]
    for query in ["sum(", 'label_replace(up, "1bad", "", "", "")']:
        ours = evaluate_text(query, data.snapshot, data.end_s * 1000)
        theirs = prom.query(query, data.end_s)
        assert set(ours) == set(theirs) == {"errorType", "error"}
        assert ours["errorType"] == theirs["errorType"]
