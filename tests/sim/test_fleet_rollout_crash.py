"""SPEC X3 and X9: `kupgrade fleet rollout start` on a 50-cluster simulated fleet killed
with SIGKILL at random moments, then `resume`: the same end state as a run never
killed, the same fleet and member event logs, each cluster upgraded once and the stages
in their order."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.fleetkit import event_logs, started

V128, V129 = "1.28.500-gke.120", "1.29.100-gke.251"
USERS = [f"u{i:02d}" for i in range(1, 50)]
FLEET = {
    "clusters": {
        "admin": {"version": V128, "role": "admin"},
        **{
            name: {
                "version": V128,
                "role": "user",
                "managed_by": "admin",
                "labels": {"ring": str(min(i // 10, 3))},
            }
            for i, name in enumerate(USERS, start=1)
        },
    },
    "target": V129,
    "available": [V128, V129],
    "simulation": {"start": "2026-12-04T20:00:00Z", "controlPlanes": 1, "nodesPerPool": 2},
}
ROLLOUT = {
    "apiVersion": "kupgrade.io/v1alpha1",
    "kind": "FleetRollout",
    "metadata": {"name": "rings"},
    "spec": {
        "stages": [
            {"name": "mgmt", "clusters": {"roles": ["admin"]}},
            {
                "name": "ring0",
                "clusters": {"labels": {"ring": "0"}},
                "maxConcurrency": 3,
                "soak": "1h",
            },
            {
                "name": "ring1",
                "clusters": {"labels": {"ring": "1"}},
                "maxConcurrency": 5,
                "soak": "30m",
            },
            {"name": "rest", "clusters": {}, "maxConcurrency": 10},
        ]
    },
}
NAMES = ["admin", *USERS]


def _finish(home: Path, *args: str) -> dict[str, Any]:
    proc = started(home, *args, "-o", "json")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    found: dict[str, Any] = json.loads(out)
    return found


@pytest.mark.parametrize("seed", [3, 41])
def test_sigkill_during_a_rollout_then_resume(tmp_path: Path, seed: int) -> None:
    homes = {name: tmp_path / name for name in ("clean", "killed")}
    for home in homes.values():
        home.mkdir()
        (home / "f.yaml").write_text(yaml.safe_dump(FLEET))
        (home / "r.yaml").write_text(yaml.safe_dump(ROLLOUT))
        proc = started(home, "fleet", "create", str(home / "f.yaml"))
        assert proc.wait(timeout=120) == 0
    clean = _finish(homes["clean"], "fleet", "rollout", "start", str(homes["clean"] / "r.yaml"))

    chance = random.Random(seed)
    killed_home = homes["killed"]
    start = ["fleet", "rollout", "start", str(killed_home / "r.yaml"), "--speed", "6000"]
    kills = 0
    for attempt in range(3):
        args = (
            start
            if attempt == 0
            else ["fleet", "rollout", "resume", "--fleet", "f", "--speed", "6000"]
        )
        proc = started(killed_home, *args)
        time.sleep(chance.uniform(1.0, 2.5))  # start-up takes about a second
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.communicate(timeout=120)
    killed = _finish(killed_home, "fleet", "rollout", "resume", "--fleet", "f")
    assert kills >= 1, "no kill landed while the rollout ran"

    assert killed["outcome"] == clean["outcome"] == "completed"
    assert killed["steps"] == clean["steps"]
    assert killed["stages"] == clean["stages"]
    assert event_logs(killed_home, NAMES) == event_logs(homes["clean"], NAMES)
    # each cluster upgraded once, and no stage began before the one ahead of it was done
    fleet_log = event_logs(killed_home, NAMES)["fleet"]
    steps_started = [obj for _, obj, reason, _ in fleet_log if reason == "StepStarted"]
    assert len(steps_started) == len(set(steps_started)) == len(NAMES)
    order = [obj for _, obj, reason, _ in fleet_log if reason in ("StageStarted", "StageDone")]
    stages = [s["name"] for s in ROLLOUT["spec"]["stages"]]  # type: ignore[index]
    assert order == [f"stage/{s}" for s in stages for _ in range(2)]
    members = event_logs(killed_home, NAMES)
    for name in NAMES:
        asked = [e for e in members[name] if e[2] == "UpgradeRequested"]
        assert len(asked) == 1 and V129 in asked[0][3], name
