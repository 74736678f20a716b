"""PromQL: the 64 graph-data expressions on a 10,000-series snapshot, our engine vs Prometheus.

The same snapshot is parsed by our engine and backfilled into a real Prometheus (Debian's
package) on loopback; each side answers all 64 expressions, in alternating rounds; the
figure is the median of the rounds' ratios (and each side's median time of one pass).
Prometheus is timed over HTTP with a keep-alive client, as a version controller would
ask it. Both answers are compared too (they must agree).
Run by `make bench` (bench/run.py) or alone: `python bench/promql.py [--series 10000]`.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from kupgrade.risks.promql import parse_snapshot
from kupgrade.risks.promql.engine import evaluate_text
from kupgrade.risks.promql.snapshot import Reader, _chunks
from kupgrade.risks.promql.snapshot_file import load_snapshot
from tests.support import promkit
from tests.support.processes import PrometheusProcess

REPO = Path(__file__).resolve().parents[1]


END_S = 1_767_000_017


def _compare(shared: Path) -> Any:
    spec = importlib.util.spec_from_file_location(
        "promql_compare", shared / "conformance" / "promql" / "compare.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _series_in(text: str) -> int:
    return len({line.rsplit(" ", 2)[0] for line in text.splitlines() if line and line[0] != "#"})


def snapshot_text(shared: Path, series: int) -> str:
    """A rule-shaped cluster scaled to about `series` series (2 h of 30 s samples each)."""
    metrics = promkit.rule_metrics(shared)
    base = _series_in(promkit.rule_snapshot(metrics, random.Random(7), END_S, "none"))
    fanout = -(-series // base)
    while True:
        text = promkit.rule_snapshot(metrics, random.Random(7), END_S, "none", fanout)
        if _series_in(text) >= series:
            return text
        fanout += 1


def _line_by_line_seconds(text: str) -> float:
    """The same text through the line-by-line reader alone (the parser before the bulk
    reader, and still its fallback): the baseline of the parse's speed-up, in this run."""
    reader = Reader("<bench>")
    started = time.perf_counter()
    for chunk in _chunks(text):
        reader.lines(chunk)
    reader.finish()
    return time.perf_counter() - started


def bench_promql(shared: Path, series: int, rounds: int) -> dict[str, Any]:
    exprs = [
        e["expr"]
        for e in yaml.safe_load(
            (shared / "conformance" / "promql" / "expressions.yaml").read_text()
        )["expressions"]
    ]
    text = snapshot_text(shared, series)
    started = time.perf_counter()
    snapshot = parse_snapshot(text)
    parse_s = time.perf_counter() - started
    line_s = _line_by_line_seconds(text)
    ours: list[float] = []
    theirs: list[float] = []
    answers: dict[str, Any] = {}
    reference: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kupgrade-bench-prom-") as tmp:
        path = Path(tmp) / "snapshot.om"
        path.write_text(text)
        started = time.perf_counter()
        load_snapshot(path)  # from the file, as `--metrics FILE` reads it
        file_s = time.perf_counter() - started
        prom = PrometheusProcess(Path(tmp) / "prom")
        started = time.perf_counter()
        prom.backfill(path)  # promtool tsdb create-blocks-from openmetrics, the same file
        promtool_s = time.perf_counter() - started
        with prom, httpx.Client() as client:
            prom.wait_for("/-/ready")
            for e in exprs:  # warm Prometheus's caches and the connection
                prom.query(e, END_S, client)
            # Rounds alternate (ours, theirs, ours, ...): each pair shares the machine's
            # load of its moment, as the CLI start's pairs do.
            for _ in range(rounds):
                snapshot.clear_memo()  # every pass cold: no selection remembered
                started = time.perf_counter()
                answers = {e: evaluate_text(e, snapshot, END_S * 1000) for e in exprs}
                ours.append(time.perf_counter() - started)
                started = time.perf_counter()
                reference = {e: prom.query(e, END_S, client) for e in exprs}
                theirs.append(time.perf_counter() - started)
    compare = _compare(shared)
    agree = sum(compare.agree(reference[e], answers[e]) for e in exprs)
    return {
        "series": len(snapshot.series),
        "samples": snapshot.sample_count,
        "parse_s": round(parse_s, 3),
        "parse_file_s": round(file_s, 3),
        "promtool_create_blocks_s": round(promtool_s, 3),
        "ratio_parse_over_promtool": round(file_s / promtool_s, 3),
        "samples_per_s": int(snapshot.sample_count / file_s),
        "line_by_line_s": round(line_s, 3),
        "ratio_line_by_line_over_bulk": round(line_s / parse_s, 2),
        "kupgrade_pass_ms": round(statistics.median(ours) * 1000, 2),
        "prometheus_http_pass_ms": round(statistics.median(theirs) * 1000, 2),
        "ratio_prometheus_over_kupgrade": round(
            statistics.median(b / a for a, b in zip(ours, theirs, strict=True)), 2
        ),
        "agree": f"{agree}/{len(exprs)}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--series", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    shared = REPO.parent / "shared"
    if shutil.which("prometheus") is None or not shared.exists():
        print("promql bench skipped: needs ../shared and Debian's prometheus package")
        return
    print(bench_promql(shared, args.series, args.rounds))


if __name__ == "__main__":
    main()
