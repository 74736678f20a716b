"""SPEC X3 for fleets: `kupgrade fleet rehearse` killed with SIGKILL at random moments,
then run again, ends exactly like an uninterrupted rehearsal: the same fleet event log
(steps, waits, every recorded state), the same member event logs and the same report."""

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

FLEET = {
    "clusters": {
        "admin": {"version": "1.28.500-gke.120", "role": "admin"},
        "u1": {
            "version": "1.28.500-gke.120",
            "role": "user",
            "managed_by": "admin",
            "pools": {"np1": "1.28.500-gke.120", "np2": "1.28.500-gke.120"},
        },
        "u2": {"version": "1.16.9", "role": "user", "managed_by": "admin"},
        "u3": {"version": "1.28.500-gke.120", "role": "user", "managed_by": "admin"},
    },
    "target": "1.29.100-gke.251",
    "available": ["1.28.500-gke.120", "1.29.100-gke.251"],
}


KUBE_FLEET = {
    "platform": "kubernetes",
    "policy": "k8s-n3",
    "clusters": {
        "edge": {"cp": "1.30.0", "pools": {"md0": "1.30.0", "md1": "1.28.0"}},
        "core": {"cp": "1.31.0", "pools": {"md0": "1.31.0"}},
    },
    "target": "1.32.0",
    "available": ["1.31.0", "1.32.0"],
}


def _finish(home: Path, *args: str) -> str:
    proc = started(home, *args)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    return out.decode()


def _report(home: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(_finish(home, "fleet", "status", "-o", "json"))
    return report


@pytest.mark.parametrize(
    ("seed", "doc"), [(7, FLEET), (23, FLEET), (61, FLEET), (5, KUBE_FLEET), (37, KUBE_FLEET)]
)
def test_sigkill_during_a_fleet_rehearsal_then_resume(
    tmp_path: Path, seed: int, doc: dict[str, Any]
) -> None:
    fleet = {**doc, "simulation": {"seed": seed, "nodesPerPool": 2}}
    names = list(doc["clusters"])
    homes = {name: tmp_path / name for name in ("clean", "killed")}
    for home in homes.values():
        home.mkdir()
        (home / "f.yaml").write_text(yaml.safe_dump(fleet))
        _finish(home, "fleet", "create", str(home / "f.yaml"))
    _finish(homes["clean"], "fleet", "rehearse", "--max-parallel", "2", "-o", "json")

    chance = random.Random(seed)
    kills = 0
    # The same command each time, as a script would rerun it.
    args = ["fleet", "rehearse", "--max-parallel", "2", "--speed", "400", "-o", "json"]
    for _ in range(3):
        proc = started(homes["killed"], *args)
        time.sleep(chance.uniform(1.2, 3.0))  # start-up takes about a second
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.communicate(timeout=120)
    _run_to_end = started(homes["killed"], "fleet", "rehearse", "--max-parallel", "2", "-o", "json")
    _out, err = _run_to_end.communicate(timeout=300)
    assert _run_to_end.returncode == 0, err.decode()
    assert kills >= 1, "no kill landed while the rehearsal ran"

    assert event_logs(homes["killed"], names) == event_logs(homes["clean"], names)
    clean, killed = _report(homes["clean"]), _report(homes["killed"])
    assert killed == clean
    assert killed["outcome"] == "completed"
