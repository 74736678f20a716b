"""The live view: a simulated cluster's upgrade (read through its Kubernetes API) and a
fleet's rehearsal, watched in headless Chromium while they run; what the live document
says checked against the commands' own reports; the event stream and its refusals."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.profile import Spec
from kupgrade.views.live_server import LiveServer, free_port
from tests.cli.test_examples_run import LAB_FLEET
from tests.support.browser import axe_violations, browser_page, install_axe, needs_chromium, shot
from tests.support.processes import served_api

# worker-0's drain is held by shop/web (3 replicas, minAvailable 3) until minute 70,
# when the budget lets one go: a node that stays draining for a while, then finishes.
PROFILE = """\
spec:
  seed: 5
  pools:
  - {name: master, nodes: 3, maxUnavailable: 1}
  - {name: worker, nodes: 3, maxUnavailable: 1}
  workloads:
  - {name: web, namespace: shop, replicas: 3, pool: worker, pdb: {minAvailable: 3}}
  nodePhases: {update: [30.0, 60.0], reboot: [30.0, 60.0]}
  changes:
  - {atMinutes: 70, kind: PodDisruptionBudget, namespace: shop, name: web,
     patch: {spec: {minAvailable: 2}}}
"""


def _kupgrade(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kupgrade", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        check=False,
    )


def _ok(home: Path, *args: str) -> str:
    done = _kupgrade(home, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _openshift(home: Path) -> None:
    profile = home.parent / "profile.yaml"
    profile.write_text(PROFILE)
    _ok(home, "cluster", "create", "c", "--profile", str(profile))
    image = model_image(Spec(), "4.14.27", home / "clusters" / "c")
    _ok(home, "upgrade", "--cluster", "c", "--to-image", image, "--allow-explicit-upgrade")


@contextmanager
def _running(home: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "kupgrade", *args],
        text=True,
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def _up(url: str, proc: subprocess.Popen[str], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer")


@contextmanager
def _watched(home: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], Any]]:
    """`kupgrade ARGS --console --console-port P` running, and a browser page on its
    console (the parent holds the port: never refused, even mid-handover)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with (
        _running(home, *args, "--console", "--console-port", str(port), "-o", "json") as proc,
        browser_page() as page,
    ):
        _up(url, proc)
        page.goto(url)
        yield proc, page


def _node(name: str, phase: str) -> str:
    return f'tr.node-row[data-node="{name}"][data-phase="{phase}"]'


@pytest.fixture(scope="module")
def axe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_axe(tmp_path_factory.mktemp("axe"))


@needs_chromium
def test_a_node_moves_from_draining_to_done_while_controller_run_progresses(
    tmp_path: Path, axe: Path
) -> None:
    """The page follows the run through the API: worker-0 drains, held by the budget
    (said in words, not only in colour), then is done; when the run ends the page says
    so and keeps the state it left, which axe-core finds accessible."""
    home = tmp_path / "home"
    _openshift(home)
    with _watched(home, "controller", "run", "--cluster", "c", "--speed", "300") as (proc, page):
        page.wait_for_selector(_node("worker-0", "draining"), timeout=90_000)
        held = page.locator(f"{_node('worker-0', 'draining')} .held")
        held.wait_for(timeout=10_000)
        assert "blocked by PodDisruptionBudget shop/web" in held.inner_text()
        # the other workers wait their turn (maxUnavailable 1); masters are done or moving
        assert page.locator(_node("worker-1", "pending")).count() == 1
        shot(page, "live-draining")
        page.wait_for_selector(_node("worker-0", "done"), timeout=90_000)
        shot(page, "live-done")
        page.wait_for_function(
            "document.querySelector('#connection').textContent.includes('the run ended (completed)')",
            timeout=90_000,
        )
        shot(page, "live-ended")
        phases = {
            r.get_attribute("data-node"): r.get_attribute("data-phase")
            for r in page.locator("tr.node-row").all()
        }
        labels = [r.get_attribute("data-label") for r in page.locator(".progress-row").all()]
        operators = {
            o.get_attribute("data-operator") for o in page.locator("[data-operator]").all()
        }
        bars = page.locator(".gantt rect").count()
        violations = axe_violations(page, axe)
        errors = list(page.errors)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    report = json.loads(out)
    assert report["outcome"] == "completed"
    assert phases == {f"{p}-{i}": "done" for p in ("master", "worker") for i in range(3)}
    assert labels[0] == "manifests" and all(lab.startswith("runlevel ") for lab in labels[1:])
    listed = json.loads(_ok(home, "get", "clusteroperators", "--cluster", "c", "-o", "json"))
    assert operators == {co["metadata"]["name"] for co in listed["items"]}
    assert bars == len(report["timeline"])  # one bar per row of the report's timeline
    assert violations == []
    assert errors == []


@pytest.mark.parametrize("platform", ["openshift", "gdc", "kubernetes"])
def test_the_live_document_says_what_the_commands_say(tmp_path: Path, platform: str) -> None:
    """After a run, the cluster served with its console: the timeline is the run's
    report's, row for row; every node is done; the progress rows are the command's own
    (runlevels, `upgrade` stages, plan steps)."""
    home = tmp_path / "home"
    if platform == "openshift":
        _openshift(home)
    elif platform == "gdc":
        _ok(
            home,
            "cluster",
            "create",
            "c",
            "--platform",
            "gdc",
            "--role",
            "standalone",
            "--version",
            "1.28.500-gke.120",
            "--workers",
            "2",
        )
        _ok(home, "upgrade", "--cluster", "c", "--to", "1.29.200-gke.243")
    else:
        _ok(
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
        _ok(home, "upgrade", "--cluster", "c", "--to", "v1.31.2", "--available", "v1.30.9")
    report = json.loads(_ok(home, "controller", "run", "--cluster", "c", "-o", "json"))
    status = json.loads(_ok(home, "upgrade", "--cluster", "c", "-o", "json"))
    with served_api(home, "c", "--no-controllers", "--console") as (_, info):
        doc = httpx.get(f"{info['console']}console/api/live", timeout=30).json()
        for _ in range(50):
            if doc.get("kind") == "cluster":
                break
            time.sleep(0.1)
            doc = httpx.get(f"{info['console']}console/api/live", timeout=30).json()
    assert doc["platform"] == platform
    assert doc["timeline"] == report["timeline"]
    nodes = [n for p in doc["pools"] for n in p["nodes"]]
    assert nodes and all(n["phase"] == "done" for n in nodes)
    rows = [(r["label"], r["done"], r["total"]) for r in doc["progress"]]
    if platform == "gdc":
        assert rows == [(f"stage {s['stage']}", s["done"], s["of"]) for s in status["stages"]]
    elif platform == "kubernetes":
        steps = status["upgrade"]["steps"]
        assert rows == [(f"{s['id']} {s['object']} to {s['to']}", 1, 1) for s in steps]
    else:
        assert doc["history"][0]["state"] == "Completed"
        assert doc["history"][0]["version"] == status["status"]["desired"]["version"]


@needs_chromium
def test_the_fleet_view_shows_steps_running_then_done(tmp_path: Path, axe: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "lab-fleet.yaml").write_text(LAB_FLEET)
    _ok(home, "fleet", "create", str(tmp_path / "lab-fleet.yaml"))
    with _watched(home, "fleet", "rehearse", "--fleet", "lab-fleet", "--speed", "400") as (
        proc,
        page,
    ):
        page.wait_for_selector('tr.step-row[data-state="running"]', timeout=60_000)
        shot(page, "fleet-running")
        roles = page.locator("#clusters caption").all_inner_texts()
        page.wait_for_function(
            "document.querySelector('#connection').textContent.includes('the rehearsal is completed')",
            timeout=120_000,
        )
        shot(page, "fleet-done")
        states = {
            r.get_attribute("data-step"): r.get_attribute("data-state")
            for r in page.locator("tr.step-row").all()
        }
        clusters = {
            r.get_attribute("data-cluster"): r.locator("td").nth(2).inner_text()
            for r in page.locator("tr.cluster-row").all()
        }
        violations = axe_violations(page, axe)
        errors = list(page.errors)
        proc.communicate(timeout=60)
    assert proc.returncode == 0
    status = json.loads(_ok(home, "fleet", "status", "--fleet", "lab-fleet", "-o", "json"))
    assert states == {s["id"]: s["state"] for s in status["steps"]}
    assert set(states.values()) == {"done"}
    assert clusters == {c["name"]: c["versions"] for c in status["clusters"]}
    assert sorted(roles) == ["admin clusters", "user clusters"]
    assert violations == []
    assert errors == []


ROLLOUT = """\
apiVersion: kupgrade.io/v1alpha1
kind: FleetRollout
metadata: {name: lab}
spec:
  stages:
  - {name: managers, clusters: {roles: [admin]}}
  - {name: canary, clusters: {names: [lab-user-1]}, soak: 30m}
  - {name: rest, clusters: {}}
"""


@needs_chromium
def test_the_rollout_view_shows_its_stages_in_order(tmp_path: Path, axe: Path) -> None:
    """SPEC X9: `fleet rollout rehearse --console`: the stages table follows the run
    (each stage's status in words and as data), then the page keeps the state it left."""
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "lab-fleet.yaml").write_text(LAB_FLEET)
    (tmp_path / "rollout.yaml").write_text(ROLLOUT)
    _ok(home, "fleet", "create", str(tmp_path / "lab-fleet.yaml"))
    args = ("fleet", "rollout", "rehearse", str(tmp_path / "rollout.yaml"), "--fleet", "lab-fleet")
    with _watched(home, *args, "--speed", "600") as (proc, page):
        page.wait_for_selector('tr.stage-row[data-status="soaking"]', timeout=90_000)
        shot(page, "rollout-soaking")
        soaking = page.locator('tr.stage-row[data-status="soaking"]').get_attribute("data-stage")
        page.wait_for_function(
            "document.querySelector('#connection').textContent.includes('the rollout is completed')",
            timeout=120_000,
        )
        shot(page, "rollout-done")
        stages = [
            (r.get_attribute("data-stage"), r.get_attribute("data-status"))
            for r in page.locator("tr.stage-row").all()
        ]
        violations = axe_violations(page, axe)
        errors = list(page.errors)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    report = json.loads(out)
    assert soaking == "canary"
    assert stages == [(s["name"], "done") for s in report["stages"]]
    assert [s["name"] for s in report["stages"]] == ["managers", "canary", "rest"]
    assert violations == []
    assert errors == []


def _events(url: str, count: int) -> list[str]:
    """The first `count` data lines of the event stream (or all of it, if it ends)."""
    got: list[str] = []
    with httpx.stream("GET", url, timeout=10) as response:
        assert response.headers["content-type"] == "text/event-stream"
        for line in response.iter_lines():
            if line.startswith(("data:", "event:")):
                got.append(line)
            if len(got) >= count:
                break
    return got


def test_the_event_stream_sends_each_new_look_once_and_says_when_the_run_ended() -> None:
    with LiveServer() as live:
        stream = f"{live.url}console/api/live/events"
        live.publish({"kind": "cluster", "n": 1})
        assert _events(stream, 1) == ['data: {"kind": "cluster", "n": 1}']
        live.publish({"kind": "cluster", "n": 1})  # the same look: not a new event
        live.publish({"kind": "cluster", "n": 2})
        assert live.published.seq == 2
        assert httpx.get(f"{live.url}console/api/live").json() == {"kind": "cluster", "n": 2}
        assert httpx.get(f"{live.url}nothing-here").status_code == 404
        assert httpx.post(f"{live.url}console/api/live").status_code == 501
        page = httpx.get(live.url)
        assert "text/html" in page.headers["content-type"] and "console/live.js" in page.text
        collected: list[str] = []
        with httpx.stream("GET", stream, timeout=10) as response:
            lines = response.iter_lines()
            for line in lines:
                if line.startswith("data:"):
                    collected.append(line)
                    break
            live.end("the run ended (completed); this is the state it left")
            live.__exit__(None, None, None)
            collected += [line for line in lines if line.startswith(("event:", "data:"))]
    assert collected == [
        'data: {"kind": "cluster", "n": 2}',
        "event: end",
        'data: {"message": "the run ended (completed); this is the state it left"}',
    ]


def test_a_console_port_in_use_is_refused_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _ok(
        home,
        "cluster",
        "create",
        "c",
        "--platform",
        "kubernetes",
        "--version",
        "v1.30.4",
        "--control-planes",
        "1",
        "--workers",
        "1",
    )
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _kupgrade(
            home, "cluster", "serve-api", "c", "--console", "--console-port", str(port)
        )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and f"127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr
    wrong = _kupgrade(home, "controller", "run", "--kubeconfig", str(home / "kc"), "--console")
    assert wrong.returncode != 0 and "--console" in wrong.stderr
