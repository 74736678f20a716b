"""A distributed-cloud (bare metal) cluster upgraded end to end at 50 and 500 nodes.

Each size has three control-plane nodes, two load-balancer nodes and the rest as workers
in five pools (concurrentNodes 5), 20 pods per worker in workloads of 20 replicas with a
PodDisruptionBudget (maxUnavailable 1 or minAvailable 90%), upgraded from 1.28 to 1.29
(Eviction API drains honouring the budgets). Timed: the whole rehearsal on the virtual
clock (preflight, stages, drains, health checks), committed as `controller run` does.
Reported: wall time, simulated time, steps, simulated seconds per wall second, and the
wall-time ratio from one size to the next.
Run by `make bench` (bench/run.py) or alone: `python -m bench.gdc [--sizes 50,500]`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.sim import PODS_PER_WORKER, REPLICAS, by_size, sizes_main, timed_run
from kupgrade.controllers.gdc.request import request_upgrade
from kupgrade.resident import peak_mb
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.profile import Budget, Gdc, Pool, Profile, Spec, Workload
from kupgrade.sim.store import Store
from tests.support.sim import runner as sim_loop

SOURCE, TARGET = "1.28.500-gke.120", "1.29.100-gke.251"
WORKER_POOLS = 5


def profile(nodes: int) -> Spec:
    workers = nodes - 5
    per_pool = [
        workers // WORKER_POOLS + (1 if i < workers % WORKER_POOLS else 0)
        for i in range(WORKER_POOLS)
    ]
    pools = [Pool("control-plane", 3), Pool("load-balancer", 2)] + [
        Pool(f"pool-{i}", n, concurrent_nodes=5) for i, n in enumerate(per_pool) if n
    ]
    workloads = [
        Workload(
            f"app-{i}-{j}",
            f"team-{j % 50}",
            REPLICAS,
            pool=f"pool-{i}",
            pdb=Budget(max_unavailable=1) if j % 2 else Budget(min_available="90%"),
            start_seconds=15.0,
            termination_seconds=30.0,
        )
        for i, n in enumerate(per_pool)
        for j in range(n * PODS_PER_WORKER // REPLICAS)
    ]
    return Spec(
        version=SOURCE,
        platform="gdc",
        seed=7,
        gdc=Gdc(role="standalone"),
        pools=pools,
        workloads=workloads,
    )


def upgrade(nodes: int, tmp: Path) -> dict[str, Any]:
    spec = profile(nodes)
    root = create_cluster(tmp, f"g{nodes}", Profile(spec=spec))
    store = Store(root / "cluster.db")
    request_upgrade(SimCluster(store), TARGET, bmctl=TARGET)
    store.commit()
    outcome, wall, pods = timed_run(sim_loop(store.path.parent, store, spec))
    return {
        "nodes": nodes,
        "pods": pods,
        "pdbs": len(spec.workloads),
        "wall_s": round(wall, 2),
        "simulated_min": round(outcome.simulated / 60, 1),
        "steps": outcome.steps,
        "simulated_per_wall": round(outcome.simulated / max(wall, 1e-9)),
        "peak_rss_mb": peak_mb(),
    }


def bench_gdc(sizes: list[int]) -> dict[str, Any]:
    return by_size(sizes, upgrade)


if __name__ == "__main__":
    sizes_main(__doc__ or "", "50,500", bench_gdc, upgrade)
