"""Validate and render one operator channel of 5,000 to 50,000 bundles: how time grows.

The catalog (tests/olm/scale.py) is one package with one channel, a replaces chain with a
skip and a bounded skipRange every ten bundles, so both opm's chain walk (validation) and
render-graph's skipRange edges are exercised (both were quadratic). Each size and
step runs in a fresh process so that its peak memory (VmHWM, kupgrade/resident.py) is its own:

- validate: `kupgrade olm validate`'s work: load, opm's checks (validate_catalog), then
  the one-step check on the catalog index;
- render: load, then `opm alpha render-graph --draw-v0-semantics`'s mermaid text.

Reported per size: seconds for each part and peak RSS; then, from the smallest size to
the largest, the growth of each time against the growth of the catalog (goal: about 10
for 10 times the bundles, linear; a quadratic step shows as about 100).
Run alone: `python -m bench.catalog_growth [--sizes 5000,50000]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.load import load_catalog
from kupgrade.olm.next_steps import one_step_findings
from kupgrade.olm.render import RenderOptions, render_mermaid
from kupgrade.olm.validate import validate_catalog
from kupgrade.resident import peak_mb
from tests.olm import scale

REPO = Path(__file__).resolve().parents[1]
SIZES = "5000,10000,20000,50000"


def one(path: Path, mode: str) -> dict[str, Any]:
    """One step on the catalog at `path`, timed, in this (fresh) process."""
    started = time.perf_counter()
    catalog = load_catalog(path)
    loaded = time.perf_counter()
    row: dict[str, Any] = {"load_s": round(loaded - started, 3)}
    if mode == "validate":
        result = validate_catalog(catalog)
        validated = time.perf_counter()
        assert result.valid, (result.error or "")[:500]
        findings = one_step_findings(CatalogIndex.build(catalog))
        done = time.perf_counter()
        row |= {
            "validate_s": round(validated - loaded, 3),
            "one_step_s": round(done - validated, 3),
            "head": result.heads[scale.PACKAGE][scale.CHANNEL],
            "findings": len(findings),
        }
    else:
        text = render_mermaid(catalog, RenderOptions(draw_v0_semantics=True), lambda _: None)
        done = time.perf_counter()
        row |= {"render_s": round(done - loaded, 3), "mermaid_lines": text.count("\n")}
    row |= {"total_s": round(done - started, 3), "peak_rss_mb": peak_mb()}
    return row


def _child(path: Path, mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "bench.catalog_growth", "--one", str(path), "--mode", mode],
        cwd=REPO,  # the repository: `bench` and `tests` importable
        check=True,
        capture_output=True,
        text=True,
    )
    row: dict[str, Any] = json.loads(done.stdout)
    return row


def _growth(rows: list[dict[str, Any]], key: str) -> float:
    first, last = float(rows[0][key]), float(rows[-1][key])
    return round(last / max(first, 1e-3), 1)


def bench_catalog_growth(sizes: list[int]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kupgrade-catalog-growth-") as tmp:
        for size in sizes:
            path = scale.write_catalog(Path(tmp) / str(size), size)
            row = {
                "bundles": size,
                "bytes": (path / "catalog.json").stat().st_size,
                "validate": _child(path, "validate"),
                "render": _child(path, "render"),
            }
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    validates = [r["validate"] for r in rows]
    renders = [r["render"] for r in rows]
    return {
        "sizes": rows,
        "bundles_ratio": round(sizes[-1] / sizes[0], 1),
        "time_ratio": {
            "validate_total": _growth(validates, "total_s"),
            "validate_checks": _growth(validates, "validate_s"),
            "render_total": _growth(renders, "total_s"),
            "render_only": _growth(renders, "render_s"),
        },
        "peak_rss_mb": {
            "validate": max(r["peak_rss_mb"] for r in validates),
            "render": max(r["peak_rss_mb"] for r in renders),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default=SIZES)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=("validate", "render"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.mode)))
        return
    print(json.dumps(bench_catalog_growth([int(s) for s in args.sizes.split(",")]), indent=2))


if __name__ == "__main__":
    main()
