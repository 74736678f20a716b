"""The machine-config controller's metrics on a simulated cluster (SPEC E3):
mcc_drain_err{node} once a drain has run past an hour, gone when it succeeds
(machine-config-operator drain_controller.go drainNode, common/metrics.go)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kupgrade.controllers.nodes import metrics
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.loop import Local, Loop
from kupgrade.sim.profile import Budget, Change, Machine, Pool, Profile, Spec, Workload
from kupgrade.sim.store import Store
from tests.support.cli import kupgrade
from tests.support.sim import runner as sim_loop


def test_drain_error_metric_set_after_an_hour_and_cleared(tmp_path: Path) -> None:
    spec = Spec(
        pools=[Pool("worker", machines=[Machine("w-0"), Machine("w-1")])],
        workloads=[Workload("db", "data", 1, node="w-0", pdb=Budget(min_available=1))],
        changes=[Change(75, "PodDisruptionBudget", "db", {"spec": {"minAvailable": 0}}, "data")],
    )
    root = create_cluster(tmp_path, "m", Profile(spec=spec))
    store = Store(root / "cluster.db")
    pool = store.get("MachineConfigPool", "worker")
    assert pool is not None
    pool["spec"]["configuration"]["name"] = "rendered-worker-new"
    store.put(pool)
    store.commit()
    runner = sim_loop(root, store, spec)
    start = runner.transport.sim.now()
    seen: dict[str, list[str]] = {}

    def watch(r: Loop[Local]) -> None:
        minute = (r.transport.sim.now() - start) / 60
        key = "before" if minute < 59 else "past-hour" if minute < 75 else "after"
        seen.setdefault(key, []).extend(metrics.drain_errors(SimCluster(r.transport.store)))

    assert runner.run(on_step=watch, max_seconds=4 * 3600.0).reason == "completed"
    assert "w-0" not in seen.get("before", [])
    assert "w-0" in seen["past-hour"]
    assert metrics.drain_errors(SimCluster(store)) == []  # cleared by the successful drain
    text = metrics.exposition(SimCluster(store))
    assert 'mco_updated_machine_count{pool="worker"} 2.0' in text
    assert "# TYPE mcc_drain_err gauge" in text


def test_cli_prints_the_exposition(tmp_path: Path) -> None:
    env = {**os.environ, "KUPGRADE_HOME": str(tmp_path)}
    assert kupgrade("cluster", "create", "c1", env=env).returncode == 0
    done = kupgrade("cluster", "metrics", "c1", env=env)
    assert done.returncode == 0, done.stderr
    assert 'mco_machine_count{pool="master"} 3.0' in done.stdout
    as_json = json.loads(kupgrade("cluster", "metrics", "c1", "-o", "json", env=env).stdout)
    assert {"name": "mco_machine_count", "labels": {"pool": "worker"}, "value": 3.0} in as_json
