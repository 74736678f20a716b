"""SPEC X6, X9, X3: a staged rollout carried out on clusters reached through the contexts
of one kubeconfig, on the wall clock: three simulated OpenShift clusters, each served on
its own API (`cluster serve-api`), upgraded through that API stage by stage; an approval
waits; a killed run is resumed without asking any cluster twice; a cluster whose
upgrades no API request starts is refused by name."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.graphserver import serve_graph
from tests.support.processes import served_api

NAMES = ("a", "b", "c")
ROLLOUT: dict[str, Any] = {
    "apiVersion": "kupgrade.io/v1alpha1",
    "kind": "FleetRollout",
    "metadata": {"name": "live"},
    "spec": {
        "target": "4.14.0",
        "stages": [
            {"name": "canary", "clusters": {"names": ["a"]}, "soak": "1s"},
            {"name": "rest", "clusters": {}, "maxConcurrency": 1, "approval": True},
        ],
    },
}


def _kupgrade(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "kupgrade", *args],
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Path]:
    """Three served OpenShift clusters (a clock 600 times real time) and one kubeconfig
    with a context for each; yields the kubeconfig."""
    home = tmp_path / "served"
    with serve_graph() as upstream, ExitStack() as stack:
        merged: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [],
            "users": [],
            "contexts": [],
            "current-context": "a",
        }
        for name in NAMES:
            _kupgrade(home, "cluster", "create", name, "--upstream", upstream)
            _, said = stack.enter_context(served_api(home, name, "--speed", "600"))
            own = yaml.safe_load(Path(said["kubeconfig"]).read_text())
            for key in ("clusters", "users", "contexts"):
                merged[key] += own[key]
        path = tmp_path / "fleet.kubeconfig"
        path.write_text(yaml.safe_dump(merged))
        yield path


def _versions(kubeconfig: Path, tmp_path: Path) -> dict[str, list[str]]:
    """Each context's ClusterVersion history (newest first)."""
    out = {}
    for name in NAMES:
        done = _kupgrade(
            tmp_path,
            "get",
            "clusterversion",
            "--kubeconfig",
            str(kubeconfig),
            "--context",
            name,
            "-o",
            "json",
            check=False,
        )
        if done.returncode != 0:  # `get` may not list it: read through kubectl's shape
            raise AssertionError(done.stderr)
        found = json.loads(done.stdout)
        items = found.get("items", [found])
        out[name] = [h["version"] for h in items[0]["status"]["history"]]
    return out


def test_a_rollout_over_a_kubeconfig_goes_stage_by_stage(fleet: Path, tmp_path: Path) -> None:
    home = tmp_path / "runner"
    rollout = tmp_path / "r.yaml"
    rollout.write_text(yaml.safe_dump(ROLLOUT))
    planned = json.loads(
        _kupgrade(
            home, "fleet", "rollout", "plan", str(rollout), "--kubeconfig", str(fleet), "-o", "json"
        ).stdout
    )
    assert planned["outcome"] == "completed"
    assert [(s["cluster"], s["stage"]) for s in planned["steps"]] == [
        ("a", "canary"),
        ("b", "rest"),
        ("c", "rest"),
    ]
    assert {s["forecastFrom"] for s in planned["steps"]} == {"default"}
    by = {s["cluster"]: s for s in planned["steps"]}
    assert (
        by["b"]["startedAt"] >= by["a"]["finishedAt"]
        and by["c"]["startedAt"] >= by["b"]["finishedAt"]
    )
    assert not (home / "fleets").exists()  # a plan writes nothing
    first = json.loads(
        _kupgrade(
            home,
            "fleet",
            "rollout",
            "start",
            str(rollout),
            "--kubeconfig",
            str(fleet),
            "--poll",
            "0.5",
            "-o",
            "json",
        ).stdout
    )
    assert first["outcome"] == "waiting" and "approve rest" in first["waitingFor"]
    steps = {s["cluster"]: s for s in first["steps"]}
    assert steps["a"]["finishedAt"] is not None
    assert steps["b"]["startedAt"] is None and steps["c"]["startedAt"] is None
    _kupgrade(home, "fleet", "rollout", "approve", "rest", "--fleet", "live", "--by", "alice")
    done = json.loads(
        _kupgrade(
            home, "fleet", "rollout", "resume", "--fleet", "live", "--poll", "0.5", "-o", "json"
        ).stdout
    )
    assert done["outcome"] == "completed"
    steps = {s["cluster"]: s for s in done["steps"]}
    # stage order and maxConcurrency 1: b and c one after the other, after a
    assert steps["a"]["finishedAt"] <= steps["b"]["startedAt"]
    assert steps["b"]["finishedAt"] <= steps["c"]["startedAt"]
    assert done["stages"][1]["approval"]["approvedBy"] == "alice"
    histories = _versions(fleet, tmp_path)
    assert all(h[0] == "4.14.0" and h.count("4.14.0") == 1 for h in histories.values())
    status = json.loads(
        _kupgrade(home, "fleet", "rollout", "status", "--fleet", "live", "-o", "json").stdout
    )
    assert status["outcome"] == "completed" and status["steps"] == done["steps"]
    plain = _kupgrade(home, "fleet", "status", "--fleet", "live", check=False)
    assert plain.returncode == 1 and "the clusters of a kubeconfig" in plain.stderr
    listed = json.loads(_kupgrade(home, "fleet", "list", "-o", "json").stdout)
    assert listed == [
        {
            "name": "live",
            "platform": "live",
            "clusters": 3,
            "rehearsal": "completed",
            "target": "4.14.0",
        }
    ]


def test_a_killed_live_rollout_resumes_without_asking_twice(fleet: Path, tmp_path: Path) -> None:
    home = tmp_path / "runner"
    doc = {**ROLLOUT, "spec": {**ROLLOUT["spec"], "stages": [{"name": "all", "maxConcurrency": 1}]}}
    rollout = tmp_path / "r.yaml"
    rollout.write_text(yaml.safe_dump(doc))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "fleet",
            "rollout",
            "start",
            str(rollout),
            "--kubeconfig",
            str(fleet),
            "--poll",
            "0.5",
            "-o",
            "json",
        ],
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    time.sleep(6.0)  # the first cluster is under way
    assert proc.poll() is None, proc.communicate()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    done = json.loads(
        _kupgrade(
            home, "fleet", "rollout", "resume", "--fleet", "live", "--poll", "0.5", "-o", "json"
        ).stdout
    )
    assert done["outcome"] == "completed"
    started = [e for e in done["events"] if e["reason"] == "StepStarted"]
    assert sorted(e["object"] for e in started) == ["step/s1", "step/s2", "step/s3"]
    histories = _versions(fleet, tmp_path)
    assert all(h.count("4.14.0") == 1 for h in histories.values())


def test_bad_kubeconfigs_and_options_are_refused_in_one_line(tmp_path: Path) -> None:
    rollout = tmp_path / "r.yaml"
    rollout.write_text(yaml.safe_dump(ROLLOUT))
    (tmp_path / "bad.kubeconfig").write_bytes(b"\xff\xfe")
    (tmp_path / "empty.kubeconfig").write_text("apiVersion: v1\nkind: Config\ncontexts: []\n")
    for kubeconfig, said in (
        ("bad.kubeconfig", "bad.kubeconfig"),
        ("empty.kubeconfig", "names no contexts"),
        ("missing.kubeconfig", "missing.kubeconfig"),
    ):
        done = _kupgrade(
            tmp_path,
            "fleet",
            "rollout",
            "start",
            str(rollout),
            "--kubeconfig",
            str(tmp_path / kubeconfig),
            check=False,
        )
        assert done.returncode == 1 and said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
        assert not (tmp_path / "fleets" / "live").exists()  # nothing left behind
    done = _kupgrade(
        tmp_path,
        "fleet",
        "rollout",
        "start",
        str(rollout),
        "--kubeconfig",
        str(tmp_path / "empty.kubeconfig"),
        "--prometheus",
        "a:http://x",
        check=False,
    )
    assert done.returncode == 1 and "is not CONTEXT=URL" in done.stderr
