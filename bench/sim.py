"""A simulated cluster upgraded end to end at 50, 500, 5,000 and 20,000 nodes.

Each size has three control-plane nodes and the rest as workers in three zones
(maxUnavailable 10%), 20 pods per worker in workloads of 20 replicas each with a
PodDisruptionBudget (maxUnavailable 1 or minAvailable 90%), and a release of about
1,000 manifests. Timed: creating the cluster (not counted) and the whole upgrade on the
virtual clock, from desiredUpdate to every pool Updated, with the store committed after
every step as `controller run` does. Reported: wall time, simulated time, simulated
seconds per wall second (goal at 5,000 nodes: 225), steps, peak memory, and the wall-time
ratio from one size to the next and the same growth per x10 nodes (goal: at most 11x).
Each size runs in a process of its own, and its cluster is created in another, so that
the peak memory is the rehearsal's own (goal at 20,000 nodes: under 1 GB).
Run by `make bench` (bench/run.py) or alone: `python -m bench.sim [--sizes 50,500]`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kupgrade.resident import peak_mb
from kupgrade.sim.create import create_cluster
from kupgrade.sim.loop import Local, Loop
from kupgrade.sim.profile import Budget, Pool, Profile, Spec, Workload
from kupgrade.sim.store import Store
from tests.support.sim import ask_for_target
from tests.support.sim import runner as simulated_runner

REPO = Path(__file__).resolve().parents[1]


PODS_PER_WORKER = 20
REPLICAS = 20
EXTRA_MANIFESTS = 960  # plus the ~45 of the operators: about 1,000 in all


def profile(nodes: int) -> Spec:
    workers = nodes - 3
    pods = workers * PODS_PER_WORKER
    workloads = [
        Workload(
            f"app-{i}",
            f"team-{i % 50}",
            REPLICAS,
            pdb=Budget(max_unavailable=1) if i % 2 else Budget(min_available="90%"),
            start_seconds=15.0,
            termination_seconds=30.0,
        )
        for i in range(pods // REPLICAS)
    ]
    return Spec(
        seed=7,
        pools=[
            Pool("master", 3, max_unavailable=1, zones=["a", "b", "c"]),
            Pool("worker", workers, max_unavailable="10%", zones=["a", "b", "c"]),
        ],
        workloads=workloads,
        extra_manifests=EXTRA_MANIFESTS,
    )


def _create(tmp: Path, name: str, spec: Spec) -> Path:
    return create_cluster(tmp, name, Profile(spec=spec))


def created_apart(tmp: Path, name: str, spec: Spec) -> tuple[Path, float]:
    """The cluster created in a process of its own, so that the peak memory reported is
    the rehearsal's (creating builds every object at once); its root and seconds."""
    started = time.perf_counter()
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        root = pool.submit(_create, tmp, name, spec).result()
    return root, time.perf_counter() - started


def upgrade(nodes: int, tmp: Path) -> dict[str, Any]:
    spec = profile(nodes)
    root, created = created_apart(tmp, f"n{nodes}", spec)
    store = Store(root / "cluster.db")
    ask_for_target(root, store, spec)
    runner = simulated_runner(root, store, spec)
    outcome, wall, pods = timed_run(runner)
    return {
        "nodes": nodes,
        "pods": pods,
        "pdbs": len(spec.workloads),
        "manifests": (runner.transport.sim.state("version") or {}).get("total"),
        "create_s": round(created, 2),
        "wall_s": round(wall, 2),
        "simulated_min": round(outcome.simulated / 60, 1),
        "steps": outcome.steps,
        "steps_per_s": round(outcome.steps / wall),
        "simulated_per_wall": round(outcome.simulated / max(wall, 1e-9)),
        "peak_rss_mb": peak_mb(),
    }


@dataclass
class Timed:
    now: float  # virtual time at the end
    simulated: float  # virtual seconds the run took
    steps: int


def timed_run(runner: Loop[Local]) -> tuple[Timed, float, int]:
    """Run to completion: (outcome, wall seconds, pods at the end); the store is closed."""
    t0, wall = runner.transport.sim.now(), time.perf_counter()
    outcome = runner.run()
    wall = time.perf_counter() - wall
    assert outcome.reason == "completed", outcome
    pods = sum(1 for _ in runner.transport.store.scan("Pod"))  # read, not kept as dicts
    runner.transport.store.close()
    return Timed(outcome.now, outcome.now - t0, outcome.steps), wall, pods


def by_size(sizes: list[int], run: Callable[[int, Path], dict[str, Any]]) -> dict[str, Any]:
    """`run` at each size, each in a process of its own (`python -m <module> --one N`, so
    its peak memory is its own), with the wall-time ratio between sizes."""
    rows = []
    module = run.__module__
    if module == "__main__":  # run as `python -m bench.sim`
        module = sys.modules["__main__"].__spec__.name  # type: ignore[union-attr]
    for nodes in sizes:
        done = subprocess.run(
            [sys.executable, "-m", module, "--one", str(nodes)],
            capture_output=True,
            text=True,
            check=False,
            cwd=REPO,
        )
        if done.returncode != 0:
            raise SystemExit(f"{module} at {nodes} nodes failed:\n{done.stderr[-2000:]}")
        rows.append(json.loads(done.stdout))
        print(json.dumps(rows[-1]), file=sys.stderr)
    for before, after in itertools.pairwise(rows):
        ratio = after["wall_s"] / max(before["wall_s"], 1e-9)
        after["wall_ratio_to_previous"] = round(ratio, 1)
        # the same growth per x10 nodes (5,000 -> 20,000 is x4 nodes: its ratio ** (1/0.6))
        scale = math.log10(after["nodes"] / before["nodes"])
        if scale > 0:
            after["growth_per_10x_nodes"] = round(ratio ** (1 / scale), 1)
    return {"sizes": rows}


def bench_sim(sizes: list[int]) -> dict[str, Any]:
    return by_size(sizes, upgrade)


def sizes_main(
    description: str,
    default: str,
    bench: Callable[[list[int]], Any],
    one: Callable[[int, Path], dict[str, Any]],
) -> None:
    """Run a bench by size from the command line: `--sizes 50,500` prints its JSON;
    `--one N` runs one size in this process (what `by_size` starts)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sizes", default=default)
    parser.add_argument("--one", type=int, help="one size, in this process")
    args = parser.parse_args()
    if args.one is not None:
        with tempfile.TemporaryDirectory(prefix="kupgrade-sim-bench-") as tmp:
            print(json.dumps(one(args.one, Path(tmp))))
        return
    print(json.dumps(bench([int(s) for s in args.sizes.split(",")]), indent=2))


if __name__ == "__main__":
    sizes_main(__doc__ or "", "50,500,5000,20000", bench_sim, upgrade)
