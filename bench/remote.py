"""A whole rehearsal in process and over the Kubernetes API, on the same cluster.

Two identical clusters (bench/sim.py's profile, 500 nodes by default) are asked for the
same update. One is rehearsed by `controller run` in process; the other is served by
`kupgrade cluster serve-api NAME --no-controllers` in its own process, and the same
controllers act on it through the API (informer caches, PUTs, evictions, the stepped
clock), as `controller run --kubeconfig` runs them. Reported: wall seconds of each, the
ratio, the requests the remote run sent, and whether both ended at the same virtual
time after the same number of steps. Run by `make bench` (bench/run.py) or alone:
`python -m bench.remote [--nodes N]`.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.sim import profile
from kupgrade.cluster.remote import InformedBackend
from kupgrade.resident import peak_mb
from kupgrade.sim.create import create_cluster
from kupgrade.sim.profile import Profile
from kupgrade.sim.runs import served_loop
from kupgrade.sim.store import Store
from tests.support.processes import served_api
from tests.support.sim import ask_for_target
from tests.support.sim import runner as simulated_runner


def _cluster(home: Path, nodes: int) -> Path:
    spec = profile(nodes)
    root = create_cluster(home, "c", Profile(spec=spec))
    store = Store(root / "cluster.db")
    ask_for_target(root, store, spec)
    store.close()
    return root


def _in_process(root: Path, nodes: int) -> dict[str, Any]:
    store = Store(root / "cluster.db")
    runner = simulated_runner(root, store, profile(nodes))
    started = time.perf_counter()
    outcome = runner.run()
    wall = time.perf_counter() - started
    store.close()
    return {
        "wall_s": round(wall, 2),
        "simulated_s": round(outcome.now, 3),
        "steps": outcome.steps,
        "outcome": outcome.reason,
    }


def _over_api(home: Path) -> dict[str, Any]:
    with served_api(home, "c", "--no-controllers") as (_, info):
        api = InformedBackend(Path(info["kubeconfig"]))
        sent = [0]
        api.http.event_hooks["request"].append(lambda _: sent.__setitem__(0, sent[0] + 1))
        runner = served_loop(api)
        started = time.perf_counter()
        outcome = runner.run()
        wall = time.perf_counter() - started
        api.close()
    return {
        "wall_s": round(wall, 2),
        "simulated_s": round(outcome.now, 3),
        "steps": outcome.steps,
        "outcome": outcome.reason,
        "requests": sent[0],
    }


def bench_remote(nodes: int = 500) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kupgrade-remote-bench-") as tmp:
        here, there = Path(tmp) / "here", Path(tmp) / "there"
        root = _cluster(here, nodes)
        _cluster(there, nodes)
        local = _in_process(root, nodes)
        remote = _over_api(there)
    return {
        "nodes": nodes,
        "in_process": local,
        "over_api": remote,
        "ratio_api_over_in_process": round(remote["wall_s"] / max(local["wall_s"], 1e-9), 2),
        "same_end": local["simulated_s"] == remote["simulated_s"]
        and local["steps"] == remote["steps"],
        "peak_rss_mb": peak_mb(),  # the in-process run and the remote controllers' client
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=500)
    args = parser.parse_args()
    print(json.dumps(bench_remote(args.nodes), indent=2))


if __name__ == "__main__":
    main()
