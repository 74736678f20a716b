"""Fleet rehearsals on the local engine against Ray on this machine's cores, and a sweep.

1. A fleet of independent Kubernetes clusters (two pools of N nodes each), created once
   per size, copied, and rehearsed from 1.29 to 1.31 by `kupgrade fleet rehearse`, once
   with --engine local and once with --engine ray: each a whole command (Ray's start
   included), the two reports compared (the same but for their wall time), and the ratio
   local/ray. Sizes 100 and 1,000 give the growth.
2. `kupgrade rehearse sweep` of one distributed-cloud cluster over 4 settings of its worker
   pool's concurrentNodes × 20 seeds, local and on Ray, with its distribution: a cluster
   of 12 workers (runs of milliseconds) and one of 150.

Run by `make bench` or alone: `python -m bench.fleet_engines [--sizes 100,1000]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

KUPGRADE = [sys.executable, "-m", "kupgrade"]


def fleet_doc(clusters: int, nodes: int) -> dict[str, Any]:
    return {
        "platform": "kubernetes",
        "policy": "k8s-n3",
        "target": "1.31.0",
        "available": ["1.30.0", "1.31.0"],
        "simulation": {"nodesPerPool": nodes, "seed": 7},
        "clusters": {
            f"c{i:04d}": {"cp": "1.29.0", "pools": {"md0": "1.29.0", "md1": "1.29.0"}}
            for i in range(clusters)
        },
    }


def _kupgrade(home: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "KUPGRADE_HOME": str(home)}
    started = time.perf_counter()
    done = subprocess.run([*KUPGRADE, *args], check=False, env=env, capture_output=True, text=True)
    return time.perf_counter() - started, done


def _report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    if done.returncode != 0:
        raise SystemExit(f"kupgrade failed: {done.stderr.strip()[-400:]}")
    out: dict[str, Any] = json.loads(done.stdout)
    out.pop("wallSeconds", None)
    return out


def bench_fleet_engines(clusters: int, nodes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kupgrade-engines-") as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        (base / "fleet.yaml").write_text(yaml.safe_dump(fleet_doc(clusters, nodes)))
        made, created = _kupgrade(base, "fleet", "create", str(base / "fleet.yaml"), "--name", "f")
        if created.returncode != 0:
            raise SystemExit(created.stderr)
        walls: dict[str, float] = {}
        reports = {}
        for engine in ("local", "ray"):
            home = Path(tmp) / engine
            shutil.copytree(base, home)
            walls[engine], done = _kupgrade(
                home, "fleet", "rehearse", "-o", "json", "--engine", engine
            )
            reports[engine] = _report(done)
    return {
        "clusters": clusters,
        "nodes": clusters * (1 + 2 * nodes),
        "create_s": round(made, 2),
        "local_s": round(walls["local"], 2),
        "ray_s": round(walls["ray"], 2),
        "speedup": round(walls["local"] / walls["ray"], 2),
        "same_report": reports["local"] == reports["ray"],
        "outcome": reports["ray"]["outcome"],
        "simulated_min": round(reports["ray"]["simulatedSeconds"] / 60, 1),
    }


def bench_sweep(seeds: int = 20, workers: int = 12) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kupgrade-sweep-bench-") as tmp:
        home = Path(tmp)
        _, made = _kupgrade(
            home,
            "cluster",
            "create",
            "edge",
            "--platform",
            "gdc",
            "--role",
            "standalone",
            "--version",
            "1.28.500-gke.120",
            "--workers",
            str(workers),
        )
        if made.returncode != 0:
            raise SystemExit(made.stderr)
        args = (
            "rehearse",
            "sweep",
            "--cluster",
            "edge",
            "--to",
            "1.29.100-gke.251",
            "--set",
            "pools.worker.concurrentNodes=1,2,4,6",
            "--seeds",
            f"1-{seeds}",
            "-o",
            "json",
        )
        walls, reports = {}, {}
        for engine in ("local", "ray"):
            walls[engine], done = _kupgrade(home, *args, "--engine", engine)
            reports[engine] = json.loads(done.stdout)
    groups = reports["ray"]["settings"]
    return {
        "runs": len(reports["ray"]["runs"]),
        "local_s": round(walls["local"], 2),
        "ray_s": round(walls["ray"], 2),
        "speedup": round(walls["local"] / walls["ray"], 2),
        "same_rows": reports["local"]["runs"] == reports["ray"]["runs"],
        "distribution_min": {
            g["label"]: {k: round(v / 60, 1) for k, v in g["duration"].items()} for g in groups
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--nodes", type=int, default=4, help="nodes per pool")
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    fleets = [bench_fleet_engines(int(s), args.nodes) for s in args.sizes.split(",")]
    out: dict[str, Any] = {"fleets": fleets}
    if len(fleets) > 1:
        out["growth_local"] = round(fleets[-1]["local_s"] / fleets[0]["local_s"], 2)
        out["growth_ray"] = round(fleets[-1]["ray_s"] / fleets[0]["ray_s"], 2)
    out["sweep"] = bench_sweep(args.seeds)
    out["sweep_big"] = bench_sweep(args.seeds, workers=150)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
