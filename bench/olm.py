"""Operator catalogs: load, validate and index the largest real catalog, against merely
parsing the same file's JSON stream in the same run; then resolve every (package,
channel, installed bundle) triple under each policy.

Memory is measured in a fresh child process (peak RSS growth over the parse baseline).
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.load import load_catalog
from kupgrade.olm.resolver import resolve
from kupgrade.olm.resolver.model import Installed, Source, Subscription
from kupgrade.olm.validate import validate_catalog

REPO = Path(__file__).resolve().parents[1]


def _parse_only(path: Path) -> int:
    text, decoder, position, count = path.read_text(), json.JSONDecoder(), 0, 0
    while position < len(text):
        _, position = decoder.raw_decode(text, position)
        count += 1
        while position < len(text) and text[position] in " \t\r\n":
            position += 1
    return count


def _full(path: Path) -> CatalogIndex:
    catalog = load_catalog(path)
    assert validate_catalog(catalog).valid
    return CatalogIndex.build(catalog)


def _median(func: object, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        func()  # type: ignore[operator]
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def _peak_mb(mode: str, path: Path) -> float:
    code = (
        "import sys, resource; from bench import olm; from pathlib import Path; p = Path(sys.argv[3]);"
        "olm._parse_only(p) if sys.argv[2] == 'parse' else olm._full(p);"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(REPO), mode, str(path)],
        cwd=REPO,  # the repository root on sys.path: `bench` is importable
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip()) / 1024


def bench_olm(shared: Path, runs: int = 3) -> dict[str, object]:
    catalogs = sorted(
        (shared / "olm" / "catalogs" / "community-operators-prod").glob("*.json"),
        key=lambda p: p.stat().st_size,
    )
    if not catalogs:
        return {"skipped": f"no real catalog under {shared / 'olm'}"}
    path = catalogs[-1]
    parse_s = _median(lambda: _parse_only(path), runs)
    full_s = _median(lambda: _full(path), runs)
    index = _full(path)
    source = Source("community", "olm", 0, index)
    results: dict[str, object] = {}
    for policy in ("seed", "olm-v0", "semver"):
        count, started = 0, time.perf_counter()
        for package in index.packages.values():
            for channel in package.channels.values():
                sub = Subscription(package.name, channel.name, "community", "olm", "olm")
                for entry in channel.entries:
                    version = package.versions.get(entry.name)
                    if version is None:
                        continue
                    try:
                        resolve([source], sub, Installed(entry.name, version), policy)
                    except Exception as exc:  # resolution errors are answers too
                        if type(exc).__name__ != "ResolutionError":
                            raise
                    count += 1
        elapsed = time.perf_counter() - started
        results[policy] = {
            "resolutions": count,
            "seconds": round(elapsed, 3),
            "per_second": round(count / elapsed),
        }
    return {
        "catalog": path.name,
        "bytes": path.stat().st_size,
        "parse_json_s": round(parse_s, 3),
        "load_validate_index_s": round(full_s, 3),
        "ratio": round(full_s / parse_s, 2),
        "parse_peak_rss_mb": round(_peak_mb("parse", path), 1),
        "full_peak_rss_mb": round(_peak_mb("full", path), 1),
        "resolutions": results,
        "self_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


if __name__ == "__main__":
    print(json.dumps(bench_olm(REPO.parent / "shared" / "conformance"), indent=2))
