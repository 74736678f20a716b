"""A distributed-cloud fleet rehearsed along its plan (SPEC X5): one admin cluster and
99 user clusters, each user cluster with three worker pools of five nodes (a Deployment
per pool with a budget), all from 1.28 to 1.30 through 1.29 on one virtual clock.
Reported: wall time, simulated time, steps, states recorded, and the peak memory of the
process that ran it (its own process: `make bench` starts one for it). Run alone:
`python -m bench.fleet_rehearsal [--users N] [--max-parallel N]`.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from kupgrade.resident import peak_mb
from kupgrade.sim.fleet.doc import read_fleet
from kupgrade.sim.fleet.home import create_fleet, opened_fleet
from kupgrade.sim.fleet.rehearsal import Rehearsal, Settings
from kupgrade.sim.fleet.report import fleet_report

START, MIDDLE, TARGET = "1.28.500-gke.120", "1.29.100-gke.251", "1.30.0-gke.1930"


def fleet_doc(users: int) -> dict[str, Any]:
    pools = {f"np{i}": START for i in range(1, 4)}
    clusters: dict[str, Any] = {"admin": {"version": START, "role": "admin"}}
    for i in range(users):
        clusters[f"user-{i:03d}"] = {
            "version": START,
            "role": "user",
            "managed_by": "admin",
            "pools": dict(pools),
        }
    return {"clusters": clusters, "simulation": {"controlPlanes": 1, "nodesPerPool": 5, "seed": 11}}


def bench_fleet_rehearsal(users: int = 99, max_parallel: int = 0) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kupgrade-fleet-bench-") as tmp:
        os.environ["KUPGRADE_HOME"] = tmp
        doc = fleet_doc(users)
        made = time.perf_counter()
        create_fleet("bench", read_fleet(doc, str(Path(tmp) / "fleet.yaml")))
        created = time.perf_counter() - made
        with opened_fleet("bench") as (_, store, info, members):
            rehearsal = Rehearsal(store, members, info)
            started = time.perf_counter()
            rehearsal.begin(Settings(TARGET, [MIDDLE], "gdc", max_parallel))
            rehearsal.run()
            wall = time.perf_counter() - started
            report = fleet_report(rehearsal, "bench")
    return {
        "clusters": users + 1,
        "nodes": (users * 15) + users + 1,
        "outcome": report["outcome"],
        "steps": len(report["steps"]),
        "create_s": round(created, 2),
        "wall_s": round(wall, 2),
        "simulated_min": round(report["simulatedSeconds"] / 60, 1),
        "states": report["statesRecorded"],
        "critical_path": [p["id"] for p in report["criticalPath"]],
        "peak_rss_mb": peak_mb(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=99)
    parser.add_argument("--max-parallel", type=int, default=0)
    args = parser.parse_args()
    print(json.dumps(bench_fleet_rehearsal(args.users, args.max_parallel), indent=2))


if __name__ == "__main__":
    main()
