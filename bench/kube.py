"""A plain Kubernetes cluster rehearsed from one minor to the next, kubeadm-style: three
control-plane nodes and the rest workers (20 pods per worker in workloads of 20 replicas
with a budget each), v1.30.4 -> v1.31.2 through v1.30.9. Reported: wall time, simulated
time, steps and peak memory (in a process of its own under `make bench`). Run by
`make bench` (bench/run.py) or alone: `python -m bench.kube [--nodes N]`.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from kupgrade.controllers.kube.request import request_upgrade
from kupgrade.resident import peak_mb
from kupgrade.sim.create import create_cluster
from kupgrade.sim.profile import Budget, Pool, Profile, Spec, Workload
from kupgrade.sim.store import Store
from tests.support.sim import runner as sim_loop


def profile(nodes: int) -> Spec:
    workers = nodes - 3
    workloads = [
        Workload(
            f"app-{i}",
            f"team-{i % 20}",
            20,
            pdb=Budget(max_unavailable=1) if i % 2 else Budget(min_available="90%"),
        )
        for i in range(workers * 20 // 20)
    ]
    return Spec(
        platform="kubernetes",
        version="1.30.4",
        seed=7,
        pools=[
            Pool("control-plane", 3, role="control-plane"),
            Pool("worker", workers, zones=["a", "b", "c"]),
        ],
        workloads=workloads,
    )


def bench_kube(nodes: int = 500) -> dict[str, Any]:
    spec = profile(nodes)
    with tempfile.TemporaryDirectory(prefix="kupgrade-kube-bench-") as tmp:
        root = create_cluster(Path(tmp), "k", Profile(spec=spec))
        store = Store(root / "cluster.db")
        runner = sim_loop(store.path.parent, store, spec)
        since = runner.transport.sim.now()
        request_upgrade(runner.transport.sim, "1.31.2", ["1.30.9"], "auto")
        store.commit()
        started = time.perf_counter()
        outcome = runner.run()
        wall = time.perf_counter() - started
        pods = len(store.list("Pod"))
        store.close()
    return {
        "nodes": nodes,
        "pods": pods,
        "outcome": outcome.reason,
        "wall_s": round(wall, 2),
        "simulated_min": round((outcome.now - since) / 60, 1),
        "steps": outcome.steps,
        "peak_rss_mb": peak_mb(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=500)
    args = parser.parse_args()
    print(json.dumps(bench_kube(args.nodes), indent=2))


if __name__ == "__main__":
    main()
