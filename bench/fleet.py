"""Plan a distributed-cloud fleet across two minors at 100, 1,000 and 10,000 clusters.

Each management cluster has 20 user clusters; every cluster has 5 node pools. Management
clusters start at 1.28.500-gke.120; user clusters alternate between 1.28.300-gke.131 and
1.16.9 (one minor behind, legal under a 1.28 manager); pools sit at their cluster's
version or one minor behind it. Target 1.30.0-gke.1930 with 1.29.100-gke.251 available
on the way. Timed: parsing the fleet and planning it (every state checked pair by pair),
each size in a fresh process so that peak memory (max RSS) is its own. Reported: wall
time, peak memory, steps, states checked and the ratio from one size to the next (goal:
linear, 10,000 clusters under 5 s).
Run by `make bench` (bench/run.py) or alone: `python bench/fleet.py [--sizes 100,10000]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kupgrade.plan.gdc_fleet import Goal, plan_fleet
from kupgrade.resident import peak_mb
from kupgrade.skew.fleet import parse_fleet

REPO = Path(__file__).resolve().parents[1]


USERS = 20
POOLS = 5
TARGET = "1.30.0-gke.1930"
AVAILABLE = ["1.28.500-gke.120", "1.29.100-gke.251", TARGET]
BEHIND = {"1.28.500-gke.120": "1.16.9", "1.28.300-gke.131": "1.16.8", "1.16.9": "1.15.12"}


def _cluster(version: str, role: str, manager: str | None) -> dict[str, Any]:
    pools = {f"pool-{p}": version if p % 2 else BEHIND[version] for p in range(POOLS)}
    out: dict[str, Any] = {"version": version, "role": role, "pools": pools}
    if manager:
        out["managed_by"] = manager
    return out


def fleet(clusters: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for g in range(max(1, round(clusters / (USERS + 1)))):
        admin = f"admin-{g}"
        out[admin] = _cluster("1.28.500-gke.120", "admin", None)
        for u in range(USERS):
            version = "1.28.300-gke.131" if u % 2 else "1.16.9"
            out[f"user-{g}-{u}"] = _cluster(version, "user", admin)
    return {"clusters": out}


def one(clusters: int) -> dict[str, Any]:
    data = fleet(clusters)
    started = time.perf_counter()
    parsed = parse_fleet(data, "bench")
    parsed_at = time.perf_counter()
    plan = plan_fleet(parsed, Goal.of(TARGET, AVAILABLE, parsed.history))
    done = time.perf_counter()
    assert plan.refused is None, plan.refused
    return {
        "clusters": len(data["clusters"]),
        "parse_s": round(parsed_at - started, 3),
        "plan_s": round(done - parsed_at, 3),
        "total_s": round(done - started, 3),
        "peak_rss_mb": peak_mb(),
        "steps": len(plan.steps),
        "pool_rollouts": plan.pool_rollouts,
        "states_checked": plan.states_checked,
    }


def bench_fleet(sizes: list[int]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for size in sizes:
        done = subprocess.run(
            [sys.executable, "-m", "bench.fleet", "--one", str(size)],
            cwd=Path(__file__).resolve().parents[1],  # the repository: `bench` importable
            check=True,
            capture_output=True,
            text=True,
        )
        rows.append(json.loads(done.stdout))
        if len(rows) > 1:
            before = rows[-2]
            rows[-1]["time_ratio"] = round(rows[-1]["total_s"] / max(before["total_s"], 1e-6), 1)
            rows[-1]["size_ratio"] = round(rows[-1]["clusters"] / before["clusters"], 1)
        print(json.dumps(rows[-1]), file=sys.stderr)
    return {"sizes": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return
    print(json.dumps(bench_fleet([int(s) for s in args.sizes.split(",")]), indent=2))


if __name__ == "__main__":
    main()
