"""One operator channel of 5,000 and of 50,000 bundles in a straight replaces chain,
validated as `opm validate` does (`kupgrade olm validate`), each in a process of its own:
wall time, peak memory, and the growth from one size to the next (goal: about 10x per 10x
bundles, linear; opm's own walk of the chain is quadratic). Run by `make bench` or alone:
`python -m bench.catalog_scale`."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SIZES = (5_000, 50_000)


def write_channel(size: int, root: Path, *, broken: str = "") -> Path:
    """A file-based catalog with one package whose one channel holds `size` bundles, each
    replacing the one before; `broken="cycle"` closes the chain into a loop."""
    out = root / f"catalog-{size}{broken}"
    out.mkdir()
    entries: list[dict[str, Any]] = [
        {"name": f"big.v0.0.{i}", **({"replaces": f"big.v0.0.{i - 1}"} if i else {})}
        for i in range(size)
    ]
    if broken == "cycle":
        entries[0]["replaces"] = f"big.v0.0.{size - 1}"
        entries.append({"name": "big.v1.0.0", "replaces": f"big.v0.0.{size - 1}"})
    lines: list[dict[str, Any]] = [
        {"schema": "olm.package", "name": "big", "defaultChannel": "stable"},
        {"schema": "olm.channel", "package": "big", "name": "stable", "entries": entries},
    ]
    for e in entries:
        version = e["name"].removeprefix("big.v")
        lines.append(
            {
                "schema": "olm.bundle",
                "name": e["name"],
                "package": "big",
                "image": f"quay.io/x/big:v{version}",
                "properties": [
                    {"type": "olm.package", "value": {"packageName": "big", "version": version}}
                ],
            }
        )
    (out / "catalog.json").write_text("\n".join(json.dumps(line) for line in lines))
    return out


def validate(catalog: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kupgrade", "olm", "validate", str(catalog)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def bench_catalog_scale() -> dict[str, Any]:
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in SIZES:
            catalog = write_channel(size, Path(tmp))
            started = time.perf_counter()
            done = validate(catalog)
            wall = time.perf_counter() - started
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            rows[str(size)] = {
                "ok": done.returncode == 0,
                "wall_s": round(wall, 2),
                "peak_rss_mb": round(peak),
            }
    small, large = (rows[str(s)]["wall_s"] for s in SIZES)
    rows["growth_per_10x"] = round(large / small, 1)
    return rows


if __name__ == "__main__":
    print(json.dumps(bench_catalog_scale(), indent=2))
