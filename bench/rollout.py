"""A staged rollout of a distributed-cloud fleet (SPEC X9): ten management groups (an
admin cluster and its user clusters, each user with one pool of two nodes), in four
stages (the admins; a canary of ten users soaking 2h; a ring of a tenth of the users
soaking 1h behind an approval the rehearsal takes as given; the rest, 50 at once), users
only in a nightly six-hour window in Europe/Berlin, from 1.28 to 1.29.

Each size runs in its own process (its peak memory its own): the fleet is created, the
rollout planned on forecasts (`fleet rollout plan`) and carried out on the fleet itself
(`fleet rollout start`'s work, in process). Reported per size: wall time of each part,
steps, simulated days, peak memory; and the growth of each part from the smaller fleet
to the larger (×10 clusters). Run alone: `python -m bench.rollout [--clusters 100 1000]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kupgrade.plan.rollout_doc import read_rollout
from kupgrade.resident import peak_mb
from kupgrade.sim.fleet.doc import read_fleet
from kupgrade.sim.fleet.home import create_fleet, opened_fleet
from kupgrade.sim.fleet.rehearsal import Rehearsal
from kupgrade.sim.fleet.rollouts import begin, plan_report, rollout_report

V128, V129 = "1.28.500-gke.120", "1.29.100-gke.251"
GROUPS = 10


def fleet_doc(clusters: int) -> dict[str, Any]:
    per_group = clusters // GROUPS - 1
    members: dict[str, Any] = {}
    for g in range(GROUPS):
        admin = f"admin-{g}"
        members[admin] = {"version": V128, "role": "admin"}
        for i in range(per_group):
            members[f"user-{g}-{i:03d}"] = {
                "version": V128,
                "role": "user",
                "managed_by": admin,
                "labels": {"ring": "canary" if i == 0 else "early" if i % 10 == 1 else "late"},
            }
    return {
        "clusters": members,
        "target": V129,
        "available": [V128, V129],
        "simulation": {"start": "2026-12-04T12:00:00Z", "controlPlanes": 1, "nodesPerPool": 2},
    }


ROLLOUT = {
    "apiVersion": "kupgrade.io/v1alpha1",
    "kind": "FleetRollout",
    "metadata": {"name": "bench"},
    "spec": {
        "stages": [
            {"name": "admins", "clusters": {"roles": ["admin"]}, "maxConcurrency": 10},
            {
                "name": "canary",
                "clusters": {"labels": {"ring": "canary"}},
                "maxConcurrency": 10,
                "soak": "2h",
            },
            {
                "name": "early",
                "clusters": {"labels": {"ring": "early"}},
                "maxConcurrency": 25,
                "soak": "1h",
                "approval": True,
            },
            {"name": "late", "clusters": {}, "maxConcurrency": 50},
        ],
        "windows": [
            {
                "clusters": {"roles": ["user"]},
                "start": "22:00",
                "duration": "6h",
                "timeZone": "Europe/Berlin",
            }
        ],
    },
}


def bench_one(clusters: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kupgrade-rollout-bench-") as tmp:
        os.environ["KUPGRADE_HOME"] = tmp
        made = time.perf_counter()
        create_fleet("bench", read_fleet(fleet_doc(clusters), str(Path(tmp) / "fleet.yaml")))
        created = time.perf_counter() - made
        rollout = read_rollout(ROLLOUT, "bench")
        with opened_fleet("bench") as (_, store, info, members):
            rehearsal = Rehearsal(store, members, info)
            started = time.perf_counter()
            planned = plan_report(rehearsal, rollout, "bench", None)
            plan_s = time.perf_counter() - started
            started = time.perf_counter()
            begin(rehearsal, rollout, "bench", None, assume=True)
            rehearsal.run()
            run_s = time.perf_counter() - started
            report = rollout_report(rehearsal, rollout, "bench")
    return {
        "clusters": clusters,
        "steps": len(report["steps"]),
        "outcome": report["outcome"],
        "planned_outcome": planned["outcome"],
        "create_s": round(created, 2),
        "plan_s": round(plan_s, 2),
        "rehearse_s": round(run_s, 2),
        "planned_days": round(planned["finishedAt"] / 86400, 2),
        "simulated_days": round((report["finishedAt"] or 0) / 86400, 2),
        "peak_rss_mb": peak_mb(),
    }


def bench_rollout(sizes: tuple[int, ...] = (100, 1000)) -> dict[str, Any]:
    """Each size in its own process; the growth of each part between the sizes."""
    runs = []
    for size in sizes:
        done = subprocess.run(
            [sys.executable, "-m", "bench.rollout", "--one", str(size)],
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(done.stdout))
    out: dict[str, Any] = {"runs": runs}
    if len(runs) == 2:
        small, large = runs
        out["growth"] = {
            part: round(large[part] / small[part], 1) if small[part] else None
            for part in ("create_s", "plan_s", "rehearse_s", "peak_rss_mb")
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--one", type=int, help="One size, in this process.")
    parser.add_argument("--clusters", type=int, nargs="*", default=[100, 1000])
    args = parser.parse_args()
    if args.one:
        print(json.dumps(bench_one(args.one)))
        return
    print(json.dumps(bench_rollout(tuple(args.clusters)), indent=2))


if __name__ == "__main__":
    main()
