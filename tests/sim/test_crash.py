"""SPEC X3: `kupgrade controller run` killed with SIGKILL at random moments, then run again.

Each seed creates two identical clusters: one upgraded without interruption, one whose
controller process group is killed (twice, at random wall-clock moments) and restarted.
The interrupted run must finish with the same event log as the clean one, and that log
must keep the ordering invariants: no operator started before every lower runlevel
reported the new version, one history entry per release, never more nodes of a pool
drained at once than its maxUnavailable.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.profile import Spec, operators_of
from kupgrade.sim.store import Store

TARGET = "4.14.27"
PROFILE = """\
spec:
  seed: {seed}
  pools:
  - {{name: master, nodes: 3, maxUnavailable: 1, zones: [a, b, c]}}
  - {{name: worker, nodes: 5, maxUnavailable: 2, zones: [a, b]}}
  workloads:
  - {{name: web, namespace: shop, replicas: 6, pdb: {{minAvailable: 5}}, terminationSeconds: 40}}
  - {{name: db, namespace: data, replicas: 3, pdb: {{maxUnavailable: 1}}, terminationSeconds: 90}}
"""
LIMITS = {"master": 1, "worker": 2}


def kupgrade(home: Path, *args: str, **kw: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "KUPGRADE_HOME": str(home)}
    return subprocess.Popen(
        [sys.executable, "-m", "kupgrade", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        **kw,
    )


def finish(home: Path, *args: str) -> str:
    proc = kupgrade(home, *args)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out.decode()
    return out.decode()


def prepare(home: Path, name: str, profile: Path) -> None:
    finish(home, "cluster", "create", name, "--profile", str(profile))
    image = model_image(Spec(), TARGET, home / "clusters" / name)
    finish(home, "upgrade", "--cluster", name, "--to-image", image, "--allow-explicit-upgrade")


def events(home: Path, name: str) -> list[tuple[float, str, str, str]]:
    store = Store(home / "clusters" / name / "cluster.db")
    try:
        return [(e["at"], e["object"], e["reason"], e["message"]) for e in store.events()]
    finally:
        store.close()


def check_invariants(log: list[tuple[float, str, str, str]]) -> None:
    runlevel = {o.name: o.runlevel for o in operators_of(Spec())}
    reached: set[str] = set()
    draining: dict[str, set[str]] = {"master": set(), "worker": set()}
    for _, obj, reason, _ in log:
        if obj.startswith("clusteroperator/"):
            name = obj.removeprefix("clusteroperator/")
            if reason == "VersionReached":
                reached.add(name)
            elif reason == "Progressing":
                lower = {n for n, r in runlevel.items() if r < runlevel[name]}
                assert lower <= reached, f"{name} started before {sorted(lower - reached)}"
        elif obj.startswith("node/"):
            node = obj.removeprefix("node/")
            pool = node.split("-")[0]
            if reason == "Drain":
                assert node not in draining[pool], f"{node} drained twice at once"
                draining[pool].add(node)
            elif reason == "Done":
                draining[pool].discard(node)
            assert len(draining[pool]) <= LIMITS[pool], f"{pool}: {sorted(draining[pool])}"


def history(home: Path, name: str) -> list[dict[str, Any]]:
    out = finish(home, "get", "clusterversion", "--cluster", name, "-o", "json")
    return list(json.loads(out)["items"][0]["status"]["history"])


def kill_and_resume(
    home: Path, name: str, seed: int, *, tries: int, speed: int, window: tuple[float, float]
) -> dict[str, Any]:
    """Kill `controller run` (its process group) at random moments, then let it finish;
    the final report. At least one kill must land while the controller runs."""
    chance = random.Random(seed)
    kills = 0
    for _ in range(tries):
        proc = kupgrade(
            home,
            "controller",
            "run",
            "--cluster",
            name,
            "--speed",
            str(speed),
            "-o",
            "json",
            start_new_session=True,
        )
        time.sleep(chance.uniform(*window))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.communicate(timeout=120)
    report: dict[str, Any] = json.loads(
        finish(home, "controller", "run", "--cluster", name, "-o", "json")
    )
    assert report["outcome"] == "completed"
    assert kills >= 1, "no kill landed while the controller was running"
    return report


@pytest.mark.parametrize("seed", [3, 11, 29, 47, 83])
def test_sigkill_at_random_moments_then_resume(tmp_path: Path, seed: int) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE.format(seed=seed))
    prepare(tmp_path, "clean", profile)
    prepare(tmp_path, "killed", profile)
    finish(tmp_path, "controller", "run", "--cluster", "clean", "-o", "json")

    # At --speed 3000 the whole upgrade takes a few seconds of wall time, so the kills
    # fall anywhere from process start-up to the node rollout.
    kill_and_resume(tmp_path, "killed", seed, tries=2, speed=3000, window=(0.2, 2.5))

    clean, killed = events(tmp_path, "clean"), events(tmp_path, "killed")
    assert killed == clean
    check_invariants(killed)
    entries = history(tmp_path, "killed")
    assert [(h["state"], h["version"]) for h in entries] == [
        ("Completed", TARGET),
        ("Completed", Spec().version),
    ]
