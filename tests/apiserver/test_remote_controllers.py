"""The controllers acting over the simulated cluster's Kubernetes API
(`cluster serve-api NAME --no-controllers` + `controller run --kubeconfig`): a whole
rehearsal ends where the in-process one does, object for object and event for event, on
OpenShift and distributed-cloud clusters; the clock, the controllers' state and events
are API objects kubectl reads; a killed remote run picks up where it stopped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.profile import Spec
from kupgrade.sim.store import Store
from tests.apiserver.test_kubeapi import KUBECTLS, PROFILE
from tests.support.processes import served_api

RELEASE = "4.14.27"
ABM = ("1.28.500-gke.120", "1.29.200-gke.243")


def _kupgrade(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "kupgrade", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        check=False,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _requested(home: Path, platform: str, profile: Path) -> None:
    """Cluster `c` in `home`, with an upgrade requested (the same in every home)."""
    if platform == "openshift":
        _kupgrade(home, "cluster", "create", "c", "--profile", str(profile))
        image = model_image(Spec(), RELEASE, home / "clusters" / "c")
        _kupgrade(
            home, "upgrade", "--cluster", "c", "--to-image", image, "--allow-explicit-upgrade"
        )
    elif platform == "gdc":
        _kupgrade(
            home,
            "cluster",
            "create",
            "c",
            "--platform",
            "gdc",
            "--role",
            "standalone",
            "--version",
            ABM[0],
            "--workers",
            "2",
        )
        _kupgrade(home, "upgrade", "--cluster", "c", "--to", ABM[1])
    else:
        _kupgrade(
            home,
            "cluster",
            "create",
            "c",
            "--platform",
            "kubernetes",
            "--version",
            "v1.30.4",
            "--control-planes",
            "2",
            "--workers",
            "2",
        )
        _kupgrade(home, "upgrade", "--cluster", "c", "--to", "v1.31.2", "--available", "v1.30.9")


def _objects(home: Path) -> dict[tuple[str, str, str], Any]:
    """Every stored object, without what only the API adds (resourceVersion, the uids of
    the object and of its owners, which a controller reads and writes back)."""
    store = Store(home / "clusters" / "c" / "cluster.db")
    try:
        out = {}
        for kind in sorted(k for k, objs in store._by_kind.items() if objs):
            for obj in store.list(kind):
                meta = {
                    k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "uid")
                }
                if meta.get("ownerReferences"):
                    meta["ownerReferences"] = [
                        {k: v for k, v in ref.items() if k != "uid"}
                        for ref in meta["ownerReferences"]
                    ]
                out[(kind, meta.get("namespace", ""), meta["name"])] = {**obj, "metadata": meta}
        return out
    finally:
        store.close()


def _report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    report = json.loads(done.stdout)
    report.pop("wallSeconds")
    return dict(report)


@pytest.mark.parametrize("platform", ["openshift", "gdc", "kubernetes"])
def test_a_rehearsal_over_the_api_ends_where_the_in_process_one_does(
    tmp_path: Path, platform: str
) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE.replace("minAvailable: 3", "minAvailable: 2"))
    here, there = tmp_path / "here", tmp_path / "there"
    for home in (here, there):
        _requested(home, platform, profile)
    local = _report(_kupgrade(here, "controller", "run", "--cluster", "c", "-o", "json"))
    with served_api(there, "c", "--no-controllers") as (_, info):
        assert info["clock"] == "stepped"
        remote = _report(
            _kupgrade(there, "controller", "run", "--kubeconfig", info["kubeconfig"], "-o", "json")
        )
    assert remote["outcome"] == local["outcome"] == "completed"
    # Same steps at the same virtual times: the timeline is the same, row for row.
    assert remote == local
    assert _objects(there) == _objects(here)


def test_the_clock_state_and_events_are_api_objects(tmp_path: Path) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE)
    _requested(tmp_path, "openshift", profile)
    with served_api(tmp_path, "c", "--no-controllers") as (_, info):
        kubeconfig = info["kubeconfig"]
        kubectl = [str(KUBECTLS[-1]), "--kubeconfig", kubeconfig]
        clock = json.loads(
            subprocess.run(
                [*kubectl, "get", "clocks", "virtual", "-o", "json"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        assert clock["spec"]["mode"] == "stepped"
        assert clock["status"]["home"] == str(tmp_path / "clusters" / "c")
        config = yaml.safe_load(Path(kubeconfig).read_text())
        user = config["users"][0]["user"]
        http = httpx.Client(
            base_url=info["server"],
            verify=False,
            headers={"Authorization": f"Bearer {user['token']}"},
        )
        step = "/apis/sim.kupgrade.io/v1/clocks/virtual/step"
        before = clock["status"]["now"]
        due = clock["status"]["nextEventAt"]
        moved = http.post(step, json={"kind": "ClockStep", "to": before + 60})
        assert moved.status_code == 201
        assert moved.json()["status"]["now"] == before + 60
        assert (
            http.post(step, json={"to": before}).json()["status"]["now"] == before + 60
        )  # never back
        assert http.post(step, json={"to": "soon"}).json()["reason"] == "BadRequest"
        assert http.get(step).status_code == 405
        assert http.delete("/apis/sim.kupgrade.io/v1/clocks/virtual").status_code == 405
        assert due is None or due >= before
        # The controllers' state, as a controller on a real cluster keeps it.
        state = "/api/v1/namespaces/kupgrade/configmaps/kupgrade-controller-state"
        assert "version" in http.get(state).json()["data"]  # the request `upgrade` recorded
        bad = http.patch(
            state,
            content=b'{"data": {"x": "{not json"}}',
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert bad.status_code == 422
        # An Event a client creates lands in the timeline; kubectl lists it.
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "n.1", "namespace": "default"},
            "involvedObject": {"kind": "Node", "name": "worker-0"},
            "reason": "Checked",
            "message": "by hand",
            "type": "Normal",
        }
        assert http.post("/api/v1/namespaces/default/events", json=event).status_code == 201
        listed = subprocess.run(
            [*kubectl, "get", "events", "-A", "-o", "json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert any(
            e["reason"] == "Checked" and e["involvedObject"]["name"] == "worker-0"
            for e in json.loads(listed)["items"]
        )
    with served_api(tmp_path, "c") as (_, info):  # its own controllers: the clock follows real time
        refused = _kupgrade(
            tmp_path, "controller", "run", "--kubeconfig", info["kubeconfig"], check=False
        )
        assert refused.returncode != 0
        assert "runs its own controllers" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        assert "Traceback" not in refused.stderr


def test_a_killed_remote_run_picks_up_where_it_stopped(tmp_path: Path) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE.replace("minAvailable: 3", "minAvailable: 2"))
    here, there = tmp_path / "here", tmp_path / "there"
    for home in (here, there):
        _requested(home, "openshift", profile)
    _kupgrade(here, "controller", "run", "--cluster", "c")
    with served_api(there, "c", "--no-controllers") as (_, info):
        args = [
            sys.executable,
            "-m",
            "kupgrade",
            "controller",
            "run",
            "--kubeconfig",
            info["kubeconfig"],
        ]
        env = {**os.environ, "KUPGRADE_HOME": str(there)}
        for wait in (1.2, 0.8):
            run = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(wait)
            run.kill()
            run.wait()
        done = subprocess.run(
            [*args, "-o", "json"], env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["outcome"] == "completed"
    ended, expected = _objects(there), _objects(here)
    for kind in ("Node", "MachineConfigPool", "ClusterOperator"):
        for k, obj in expected.items():
            if k[0] == kind:
                assert ended[k]["metadata"].get("annotations") == obj["metadata"].get("annotations")
                assert ended[k]["status"].get("versions") == obj["status"].get("versions")
    cv = ended[("ClusterVersion", "", "version")]["status"]
    assert cv["history"][0]["version"] == RELEASE and cv["history"][0]["state"] == "Completed"
