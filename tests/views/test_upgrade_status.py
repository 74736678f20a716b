"""`kupgrade upgrade status` assesses an update as `oc adm upgrade status` does
(openshift/oc pkg/cli/admin/upgrade/status): Go's duration text, oc's estimate, node
phases read from the daemon's annotations and the rendered MachineConfigs, pool
summaries, and health insights; checked at every step of a rehearsal against what the
objects say, on a drain that never ends (Degraded), a paused pool (Excluded), and
through a kubeconfig."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kupgrade.cluster import mco
from kupgrade.sim.loop import Local, Loop
from kupgrade.sim.profile import Budget, Fault, Pool, Spec, Workload
from kupgrade.views.status_health import go_round, short_duration
from kupgrade.views.upgrade_status import assess, estimate_completion, read_objects
from kupgrade.views.upgrade_status_text import as_data, render
from tests.support.processes import served_api
from tests.support.sim import TARGET, runner, start


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "now"),
        (4, "4s"),
        (90, "1m30s"),
        (844, "14m4s"),
        (300, "5m"),
        (3600, "1h"),
        (3660, "1h1m"),
        (3723, "1h2m3s"),
        (12660, "3h31m"),
        (5.7, "5s"),
        (-300, "-5m"),
        # Under a second Go's Duration.String counts milliseconds: no "." to truncate at.
        (-0.4, "-400ms"),
        (0.5, "500ms"),
    ],
)
def test_short_duration_is_gos_duration_text_trimmed(seconds: float, text: str) -> None:
    assert short_duration(seconds) == text


def test_go_round_takes_halves_away_from_zero() -> None:
    assert go_round(90, 60) == 120 and go_round(-90, 60) == -120 and go_round(89, 60) == 60


def test_the_estimate_uses_the_baseline_until_progress_is_measured() -> None:
    # Under 5 minutes of observed progress: the baseline (an hour) less the time spent,
    # overestimated by 1.2, rounded to the minute above 10 minutes.
    assert estimate_completion(3600, 60, 600, 0.5) == 3600
    # Measured: elapsed / timewise(0.5) is the expected total.
    measured = estimate_completion(3600, 1800, 1800, 0.5)
    timewise = 0.1851215 + 1.64994 / 2 - 4.676898 / 4 + 5.451824 / 8 - 2.125286 / 16
    assert measured == go_round(int((1800 / timewise - 1800) * 1.2), 60) == 3360
    # Late: the remaining time is negative and shrunk by 1/1.2, rounded to the second.
    assert estimate_completion(60, 60, 600, 0.5) == -450
    assert estimate_completion(3600, 60, 600, 1.0) == 0


SPEC = Spec(
    seed=3,
    pools=[
        Pool(name="master", nodes=3, max_unavailable=1),
        Pool(name="worker", nodes=4, max_unavailable=2),
    ],
    workloads=[Workload(name="web", namespace="shop", replicas=3, pdb=Budget(max_unavailable=1))],
)


def _expected_rows(r: Loop[Local], pool: str) -> dict[str, dict[str, str]]:
    """Each node's phase and version as the objects say them, without oc's code."""
    releases = {
        mc["metadata"]["name"]: mc["metadata"]["annotations"][mco.RELEASE_IMAGE_VERSION]
        for mc in r.transport.sim.list("MachineConfig")
    }
    cv = r.transport.sim.get("ClusterVersion", "version")
    assert cv is not None
    latest = cv["status"]["history"][0]["version"]
    wanted = r.transport.sim.get("MachineConfigPool", pool)["spec"]["configuration"]["name"]  # type: ignore[index]
    out = {}
    for node in r.transport.sim.list("Node"):
        if f"node-role.kubernetes.io/{pool}" not in node["metadata"]["labels"]:
            continue
        notes = node["metadata"]["annotations"]
        current = releases[notes[mco.CURRENT]]
        updated = current == latest
        updating = not updated and notes[mco.DESIRED] == wanted and notes[mco.CURRENT] != wanted
        out[node["metadata"]["name"]] = {
            "version": current,
            "updated": str(updated),
            "updating": str(updating),
        }
    return out


def test_every_step_of_a_rehearsal_is_assessed_from_its_objects(tmp_path: Path) -> None:
    root, store = start(tmp_path, SPEC)
    r = runner(root, store, SPEC)
    assert (
        assess(read_objects(r.transport.sim), r.transport.sim.now()) is None
    )  # asked, not started
    seen_phases: set[str] = set()
    seen_texts: list[str] = []

    def check(run: Loop[Local]) -> None:
        status = assess(read_objects(run.transport.sim), run.transport.sim.now())
        if status is None:
            return
        cp = status.control_plane
        assert cp.total == 14 and 0 <= cp.updated <= cp.total
        assert f"{cp.updated * 100 / cp.total:.0f}%" in render(status, set())
        for pool in [status.masters, *status.workers]:
            assert pool is not None
            expected = _expected_rows(run, pool.name)
            assert {row.name for row in pool.rows} == set(expected)
            for row in pool.rows:
                assert row.version == expected[row.name]["version"]
                assert (row.phase == "Updated") == (expected[row.name]["updated"] == "True")
                if expected[row.name]["updating"] == "True":
                    assert row.phase in ("Draining", "Updating", "Rebooting")
                    assert row.assessment in ("Progressing", "Degraded")
                seen_phases.add(row.phase)
            assert pool.total - pool.outdated == sum(r.phase == "Updated" for r in pool.rows)
            ranks = [
                (
                    "Degraded",
                    "Unavailable",
                    "Progressing",
                    "Excluded",
                    "Outdated",
                    "Completed",
                ).index(r.assessment)
                for r in pool.rows
            ]
            assert ranks == sorted(ranks)
        seen_texts.append(render(status, {"nodes"}))

    outcome = r.run(on_step=check)
    assert outcome.reason == "completed"
    assert {"Pending", "Draining", "Updated"} <= seen_phases
    assert any("Est. Time Remaining" in t for t in seen_texts)
    assert any("= Worker Upgrade =" in t and "Progressing" in t for t in seen_texts)
    # Done: the control plane and every pool at the target: not updating any more.
    assert assess(read_objects(r.transport.sim), r.transport.sim.now()) is None
    assert render(None, set()) == "The cluster is not updating.\n"


def test_a_drain_that_never_ends_degrades_the_node_and_says_so(tmp_path: Path) -> None:
    spec = Spec(
        seed=4,
        pools=[
            Pool(name="master", nodes=1, max_unavailable=1),
            Pool(name="worker", nodes=2, max_unavailable=1),
        ],
        workloads=[Workload(name="stuck", namespace="shop", replicas=1, pool="worker")],
        faults=[Fault(pod="shop/stuck")],
    )
    root, store = start(tmp_path, spec)
    r = runner(root, store, spec)
    r.run(max_seconds=6 * 3600)
    status = assess(read_objects(r.transport.sim), r.transport.sim.now())
    assert status is not None
    worker = next(p for p in status.workers if p.name == "worker")
    stuck = [row for row in worker.rows if row.assessment == "Degraded"]
    assert stuck, render(status, {"nodes"})
    assert stuck[0].phase == "Draining" and stuck[0].estimate == "?"
    assert stuck[0].message.startswith("failed to drain node: <node> after 1 hour")
    assert worker.assessment == "Degraded" and worker.degraded == 1
    assert "1 Degraded" in worker.summary()
    text = render(status, set())
    assert f"Node {stuck[0].name} is degraded" in text
    assert text.rstrip().endswith("related online documentation")
    first = status.insights[0]
    assert (first.level, first.impact) == (2, "Update Stalled")  # errors first
    detailed = render(status, {"health"})
    assert "Reference:" in detailed and "nodes: " in detailed
    assert "  Description: failed to drain node" in detailed


def test_a_paused_pool_is_excluded_with_a_warning(tmp_path: Path) -> None:
    spec = Spec(
        seed=5,
        pools=[
            Pool(name="master", nodes=1, max_unavailable=1),
            Pool(name="worker", nodes=2, paused=True),
        ],
    )
    root, store = start(tmp_path, spec)
    r = runner(root, store, spec)
    r.run(until="idle", max_seconds=4 * 3600)
    status = assess(read_objects(r.transport.sim), r.transport.sim.now())
    assert status is not None  # the worker pool is still outdated
    worker = status.workers[0]
    assert worker.assessment == "Excluded" and worker.excluded == 2
    assert {row.phase for row in worker.rows} == {"Paused"}
    assert "Outdated nodes in a paused pool 'worker' will not be updated" in render(status, set())
    data = as_data(status)
    assert data["workerPools"][0]["excluded"] == 2
    assert data["controlPlane"]["nodes"]["completion"] == 100.0


def _kupgrade(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kupgrade", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        check=False,
    )


def _mid_update(tmp_path: Path) -> str:
    """Run the rehearsal until a worker drains; commit there; its `upgrade status`."""
    root, store = start(tmp_path, SPEC)
    r = runner(root, store, SPEC)
    texts: list[str] = []

    def stop(run: Loop[Local]) -> None:
        status = assess(read_objects(run.transport.sim), run.transport.sim.now())
        if status is not None and any(
            row.phase == "Draining" for p in status.workers for row in p.rows
        ):
            texts.append(render(status, {"nodes", "operators"}))
            raise StopIteration

    with pytest.raises(StopIteration):
        r.run(on_step=stop)
    r.commit()
    store.close()
    return texts[0]


def test_a_draining_worker_reads_as_oc_prints_it(tmp_path: Path) -> None:
    lines = _mid_update(tmp_path).splitlines()
    assert lines[:2] == ["= Control Plane =", "Assessment:      Progressing"]
    assert lines[2] == f"Target Version:  {TARGET} (from 4.13.40)"
    draining = next(line for line in lines if " Draining " in line and line.startswith("worker-"))
    assert draining.split()[1:5] == ["Progressing", "Draining", "4.13.40", "+10m"]
    header = next(line for line in lines if line.startswith("WORKER POOL"))
    assert re.split(r"\s{3,}", header) == ["WORKER POOL", "ASSESSMENT", "COMPLETION", "STATUS"]
    assert "= Update Health =" in lines


def test_upgrade_status_on_the_cluster_and_through_its_api_agree(tmp_path: Path) -> None:
    expected = _mid_update(tmp_path)
    local = _kupgrade(tmp_path, "upgrade", "status", "--cluster", "c", "--details", "all")
    assert local.returncode == 0, local.stderr
    assert "= Worker Upgrade =" in local.stdout and "Draining" in local.stdout
    # A stepped clock: nothing moves while both read.
    with served_api(tmp_path, "c", "--no-controllers") as (_, info):
        kubeconfig = info["kubeconfig"]
        remote = _kupgrade(
            tmp_path, "upgrade", "status", "--kubeconfig", kubeconfig, "--details", "all"
        )
        assert remote.returncode == 0, remote.stderr
        assert remote.stdout == local.stdout
        data = json.loads(
            _kupgrade(
                tmp_path, "upgrade", "status", "--kubeconfig", kubeconfig, "-o", "json"
            ).stdout
        )
    assert data["updating"] is True
    assert data["controlPlane"]["targetVersion"] == f"{TARGET} (from 4.13.40)"
    assert any(n["phase"] == "Draining" for p in data["workerPools"] for n in p["nodes"])
    assert "Control Plane Nodes" in expected
    wrong = _kupgrade(tmp_path, "upgrade", "status", "--cluster", "c", "--to", TARGET)
    assert wrong.returncode != 0 and "takes no --to" in wrong.stderr
