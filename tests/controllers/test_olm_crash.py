"""SPEC X3 for OLM: `controller run` killed with SIGKILL at random moments while a
subscription walks its channel, install plan after install plan, then run again: the
same subscription, plans, CSVs and event log as an uninterrupted run, over several seeds.
Also: a profile's subscriptions are installed when the cluster is created."""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.sim.test_crash import events, finish, kupgrade
from tests.support.cli import kupgrade as run_kupgrade
from tests.support.olmkit import write_blobs

NAMES = [f"app.v1.{i}.0" for i in range(8)]
PROFILE = """\
spec:
  seed: {seed}
  pools:
  - {{name: master, nodes: 1, maxUnavailable: 1}}
  - {{name: worker, nodes: 2}}
  olm: {{startSeconds: 500, installTimeoutSeconds: 900}}
"""


def _catalog(directory: Path) -> Path:
    entries = [{"name": NAMES[0]}] + [
        {"name": n, "replaces": p} for p, n in itertools.pairwise(NAMES)
    ]
    return write_blobs(
        directory,
        [
            {"schema": "olm.package", "name": "app", "defaultChannel": "stable"},
            {"schema": "olm.channel", "package": "app", "name": "stable", "entries": entries},
            *(
                {
                    "schema": "olm.bundle",
                    "package": "app",
                    "name": n,
                    "image": f"quay.io/a/app:{n}",
                    "properties": [
                        {
                            "type": "olm.package",
                            "value": {"packageName": "app", "version": n.split(".v")[1]},
                        }
                    ],
                }
                for n in NAMES
            ),
        ],
    )


def _olm_state(home: Path, name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("subscriptions", "installplans", "csv"):
        items = json.loads(finish(home, "get", kind, "--cluster", name, "-o", "json"))["items"]
        out[kind] = [
            {"name": o["metadata"]["name"], "spec": o["spec"], "status": o["status"]} for o in items
        ]
    return out


def _prepare(home: Path, name: str, profile: Path, catalog: Path) -> None:
    finish(home, "cluster", "create", name, "--profile", str(profile))
    finish(
        home,
        "olm",
        "subscribe",
        "--cluster",
        name,
        "--source",
        f"apps={catalog}",
        "--starting-csv",
        NAMES[0],
    )


@pytest.mark.parametrize("seed", [5, 17, 41])
def test_sigkill_during_install_plans_then_resume(tmp_path: Path, seed: int) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE.format(seed=seed))
    catalog = _catalog(tmp_path / "catalog")
    _prepare(tmp_path, "clean", profile, catalog)
    _prepare(tmp_path, "killed", profile, catalog)
    finish(tmp_path, "controller", "run", "--cluster", "clean", "--until", "idle")
    chance = random.Random(seed)
    kills = 0
    for _ in range(3):
        proc = kupgrade(
            tmp_path,
            "controller",
            "run",
            "--cluster",
            "killed",
            "--until",
            "idle",
            "--speed",
            "3000",
            start_new_session=True,
        )
        time.sleep(chance.uniform(0.3, 1.5))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.communicate(timeout=120)
    finish(tmp_path, "controller", "run", "--cluster", "killed", "--until", "idle")
    assert kills >= 1, "no kill landed while the controller was running"
    clean, killed = _olm_state(tmp_path, "clean"), _olm_state(tmp_path, "killed")
    assert killed == clean
    assert [p["spec"]["clusterServiceVersionNames"] for p in clean["installplans"]] != []
    assert clean["subscriptions"][0]["status"]["installedCSV"] == NAMES[-1]
    assert events(tmp_path, "killed") == events(tmp_path, "clean")


def test_a_profiles_subscriptions_are_installed_when_the_cluster_is_created(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path / "catalog")
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        "spec:\n  pools:\n  - {name: master, nodes: 1, maxUnavailable: 1}\n"
        f"  olm:\n    catalogs: [{{name: apps, path: {catalog}}}]\n"
        f"    subscriptions: [{{package: app, source: apps, startingCsv: {NAMES[-2]}}}]\n"
    )
    made = json.loads(
        finish(tmp_path, "cluster", "create", "c", "--profile", str(profile), "-o", "json")
    )
    assert made["operators"] == [f"operators/{NAMES[-1]} (Succeeded)"]
    profile.write_text(profile.read_text().replace("source: apps", "source: nope"))
    refused = run_kupgrade(
        "cluster", "create", "d", "--profile", str(profile), env={"KUPGRADE_HOME": str(tmp_path)}
    )
    assert refused.returncode != 0
    assert "names catalog olm/nope, which the profile does not have" in refused.stderr
