"""SPEC X3 for distributed cloud: `kupgrade controller run` killed with SIGKILL at random
moments during a bare-metal upgrade, then run again, ends with the same event log as an
uninterrupted run, and that log keeps the stage order and the pools' limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sim.test_crash import events, finish, kill_and_resume

TARGET = "1.29.100-gke.251"
PROFILE = """\
spec:
  platform: gdc
  version: 1.28.500-gke.120
  seed: {seed}
  gdc: {{role: standalone, healthCheckSeconds: 90}}
  pools:
  - {{name: control-plane, nodes: 3}}
  - {{name: load-balancer, nodes: 2}}
  - {{name: w1, nodes: 4, concurrentNodes: 2}}
  - {{name: w2, nodes: 3}}
  workloads:
  - {{name: web, namespace: shop, replicas: 6, pool: w1, pdb: {{minAvailable: 5}}, terminationSeconds: 40}}
  - {{name: db, namespace: data, replicas: 3, pool: w2, pdb: {{maxUnavailable: 1}}, terminationSeconds: 90}}
  faults:
  - {{component: anetd, slow: 2}}
  - {{node: w2-1, healthFailures: 2}}
"""
LIMITS = {"control-plane": 1, "load-balancer": 1, "w1": 2, "w2": 1}


def check_order(log: list[tuple[float, str, str, str]]) -> None:
    done: set[str] = set()
    busy: dict[str, set[str]] = {pool: set() for pool in LIMITS}
    for _, obj, reason, _ in log:
        if obj.startswith("stage/"):
            stage = obj.removeprefix("stage/")
            if reason == "StageDone":
                done.add(stage)
            elif reason == "StageStarted" and stage.startswith("worker-node-pool/"):
                assert "load-balancer-node-pool" in done
            elif reason == "StageStarted" and stage == "health-checks":
                assert {"connect-agent", "cluster-addons", "worker-node-pool/w1"} <= done
        elif obj.startswith("node/") and reason in ("Drain", "Done"):
            node = obj.removeprefix("node/")
            pool = node.rsplit("-", 1)[0]
            (busy[pool].add if reason == "Drain" else busy[pool].discard)(node)
            assert len(busy[pool]) <= LIMITS[pool], (pool, sorted(busy[pool]))


def named(log: list[tuple[float, str, str, str]], name: str) -> list[tuple[float, str, str, str]]:
    """The log with the cluster's own name (in its objects and messages) made neutral."""
    return [(at, o.replace(name, "NAME"), r, m.replace(name, "NAME")) for at, o, r, m in log]


@pytest.mark.parametrize("seed", [5, 17, 41])
def test_sigkill_during_a_bare_metal_upgrade_then_resume(tmp_path: Path, seed: int) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE.format(seed=seed))
    for name in ("clean", "killed"):
        finish(tmp_path, "cluster", "create", name, "--profile", str(profile))
        finish(tmp_path, "upgrade", "--cluster", name, "--to", TARGET)
    finish(tmp_path, "controller", "run", "--cluster", "clean", "-o", "json")

    kill_and_resume(tmp_path, "killed", seed, tries=3, speed=2500, window=(0.3, 2.2))
    clean, killed = (
        named(events(tmp_path, "clean"), "clean"),
        named(events(tmp_path, "killed"), "killed"),
    )
    assert killed == clean
    check_order(killed)
    status = json.loads(finish(tmp_path, "get", "clusters", "--cluster", "killed", "-o", "json"))
    cluster = status["items"][0]
    assert (
        cluster["status"]["anthosBareMetalVersion"]
        == cluster["spec"]["anthosBareMetalVersion"]
        == TARGET
    )
