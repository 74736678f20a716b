"""`controller run --leader-elect` against a served cluster, as replicas of a Deployment
run (client-go's leader election on a coordination.k8s.io/v1 Lease): one writer at a time
in the API server's audit log, a SIGKILLed leader replaced within the lease duration, a
leader paused past its lease writes nothing more and stops, a Lease held by another
identity waits without writing; bad timings in one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.cli import run_cli
from tests.support.processes import served_api

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
FAST = ("--lease-duration", "3", "--renew-deadline", "2", "--retry-period", "0.5")


@contextmanager
def served(tmp_path: Path, workers: int = 8) -> Iterator[tuple[dict[str, Any], Path]]:
    for args in (
        [
            "cluster",
            "create",
            "k",
            "--platform",
            "kubernetes",
            "--version",
            "v1.30.4",
            "--control-planes",
            "1",
            "--workers",
            str(workers),
        ],
        ["upgrade", "--cluster", "k", "--to", "v1.31.2", "--available", "v1.31.2"],
    ):
        done = run_cli(args, tmp_path)
        assert done.exit_code == 0, done.stderr
    audit = tmp_path / "audit.jsonl"
    with served_api(tmp_path, "k", "--no-controllers", "--audit-log", str(audit)) as (_, info):
        yield info, audit


def replica(
    tmp_path: Path, info: dict[str, Any], identity: str, *extra: str
) -> subprocess.Popen[str]:
    err = (tmp_path / f"{identity}.err").open("w")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "controller",
            "run",
            "--kubeconfig",
            info["kubeconfig"],
            "--leader-elect",
            "--identity",
            identity,
            *extra,
            "-o",
            "json",
        ],
        env={**os.environ, "KUPGRADE_HOME": str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
    )


def said(tmp_path: Path, identity: str) -> str:
    return (tmp_path / f"{identity}.err").read_text()


def until(check: Any, seconds: float = 60.0) -> float:
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < seconds, "timed out"
        time.sleep(0.05)
    return time.monotonic()


def writers(audit: Path) -> list[str]:
    """The identity of every write but the Lease's own, in the order the server took them."""
    out = []
    for line in audit.read_text().splitlines():
        event = json.loads(line)
        if (
            event["verb"] in ("create", "update", "patch", "delete")
            and "/leases" not in event["requestURI"]
        ):
            out.append(event["userAgent"].removeprefix("kupgrade-controller/"))
    return out


def runs(seq: list[str]) -> list[str]:
    """Each stretch of one writer, once: a..a b..b is [a, b]."""
    return [w for i, w in enumerate(seq) if i == 0 or seq[i - 1] != w]


def test_a_killed_leader_is_replaced_within_the_lease_duration(tmp_path: Path) -> None:
    with served(tmp_path) as (info, audit):
        a = replica(tmp_path, info, "a", *FAST, "--speed", "200")
        until(lambda: "took the lease" in said(tmp_path, "a"))
        b = replica(tmp_path, info, "b", *FAST)
        until(
            lambda: (
                "waiting for lease kube-system/kupgrade-controller held by a" in said(tmp_path, "b")
            )
        )
        until(lambda: "a" in writers(audit))
        a.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        a.wait()
        took = until(lambda: "took the lease" in said(tmp_path, "b"))
        assert took - killed <= 3 + 0.5 * 2.2 + 1.0  # lease duration + one jittered retry
        out, _ = b.communicate(timeout=120)
        assert b.returncode == 0, said(tmp_path, "b")
        assert json.loads(out)["outcome"] == "completed"
        seq = writers(audit)
    assert runs(seq) == ["a", "b"]  # one writer at a time, never interleaved


def test_a_leader_paused_past_its_lease_writes_nothing_more(tmp_path: Path) -> None:
    with served(tmp_path) as (info, audit):
        a = replica(tmp_path, info, "a", *FAST, "--speed", "100")
        until(lambda: "a" in writers(audit))
        b = replica(tmp_path, info, "b", *FAST, "--speed", "100")
        until(lambda: "held by a" in said(tmp_path, "b"))
        a.send_signal(signal.SIGSTOP)
        until(lambda: "b" in writers(audit), 30)
        a.send_signal(signal.SIGCONT)
        a.communicate(timeout=30)
        assert a.returncode == 1
        lines = said(tmp_path, "a").strip().splitlines()
        assert lines[-1].startswith("error: lost the lease kube-system/kupgrade-controller")
        assert "Traceback" not in said(tmp_path, "a")
        b.communicate(timeout=120)
        assert b.returncode == 0, said(tmp_path, "b")
        seq = writers(audit)
    assert runs(seq) == ["a", "b"]  # nothing from a after b began


def test_a_lease_held_by_another_waits_and_writes_nothing(tmp_path: Path) -> None:
    with served(tmp_path, workers=2) as (info, audit):
        config = info["kubeconfig"]
        run_cli(["get", "nodes", "--kubeconfig", config], tmp_path)
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "kupgrade-controller", "namespace": "kube-system"},
            "spec": {"holderIdentity": "other", "leaseDurationSeconds": 3600},
        }
        server = info["server"]
        token = _token(Path(config))
        with httpx.Client(verify=False, headers={"Authorization": f"Bearer {token}"}) as http:
            made = http.post(
                f"{server}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", json=lease
            )
            assert made.status_code == 201, made.text
        c = replica(tmp_path, info, "c", *FAST)
        until(lambda: "held by other" in said(tmp_path, "c"))
        time.sleep(2)
        c.send_signal(signal.SIGTERM)
        c.wait(timeout=30)
        assert said(tmp_path, "c").count("waiting for lease") == 1  # said once
        assert said(tmp_path, "c").strip().splitlines()[-1] == (
            "stopped by SIGTERM; did not hold the lease kube-system/kupgrade-controller"
        )
        assert writers(audit) == []
        with httpx.Client(verify=False, headers={"Authorization": f"Bearer {token}"}) as http:
            kept = http.get(f"{server}{LEASES}/kupgrade-controller").json()
        assert kept["spec"]["holderIdentity"] == "other"  # untouched: nothing lost
        assert kept["metadata"]["resourceVersion"] == made.json()["metadata"]["resourceVersion"]


def test_a_leader_whose_lease_is_taken_writes_nothing_more(tmp_path: Path) -> None:
    """The Lease edited to another holder through the API: the leader's next renewal is a
    409, it reads the Lease, sees the other holder, and stops before any other write."""
    with served(tmp_path) as (info, audit):
        a = replica(tmp_path, info, "a", *FAST, "--speed", "50")
        until(lambda: "a" in writers(audit))
        url = f"{info['server']}{LEASES}/kupgrade-controller"
        headers = {"Authorization": f"Bearer {_token(Path(info['kubeconfig']))}"}
        with httpx.Client(verify=False, headers={**headers, "User-Agent": "editor"}) as http:
            lease = http.get(url).json()
            lease["spec"].update(holderIdentity="intruder", leaseDurationSeconds=3600)
            assert http.put(url, json=lease).status_code == 200
        a.communicate(timeout=30)
        assert a.returncode == 1
        lines = said(tmp_path, "a").strip().splitlines()
        assert lines[-1] == (
            "error: lost the lease kube-system/kupgrade-controller to intruder; stopping"
        )
        events = [json.loads(line) for line in audit.read_text().splitlines()]
    edit = next(
        i for i, e in enumerate(events) if e["userAgent"] == "editor" and e["verb"] == "update"
    )
    # a's first look at the Lease after the edit that answered (the GET after its 409).
    seen = next(
        i
        for i, e in enumerate(events)
        if i > edit and "/leases/" in e["requestURI"] and e["verb"] == "get"
    )
    after = [e for e in events[seen + 1 :] if e["userAgent"].endswith("/a")]
    assert [e for e in after if e["verb"] != "get" and "/leases" not in e["requestURI"]] == []
    assert [e["verb"] for e in after if "/leases" in e["requestURI"]] == []  # nor the Lease


def test_sigterm_releases_the_lease_and_the_other_takes_it_at_once(tmp_path: Path) -> None:
    """client-go's timings (15 s, 10 s, 2 s): a pod deleted (SIGTERM) gives its Lease up
    (holder empty), so the waiting replica takes it within a retry period, not 15 s."""
    with served(tmp_path) as (info, audit):
        a = replica(tmp_path, info, "a", "--speed", "50")
        until(lambda: "a" in writers(audit))
        b = replica(tmp_path, info, "b")
        until(lambda: "held by a" in said(tmp_path, "b"))
        a.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        out, _ = a.communicate(timeout=30)
        assert a.returncode == 128 + signal.SIGTERM
        assert json.loads(out)["outcome"] == "terminated"
        lines = said(tmp_path, "a").strip().splitlines()
        assert lines[-1] == "stopped by SIGTERM; released the lease kube-system/kupgrade-controller"
        took = until(lambda: "took the lease" in said(tmp_path, "b"), 15)
        assert took - stopped < 2 * 2.2 + 1.0  # one jittered retry period, not 15 s
        out, _ = b.communicate(timeout=120)
        assert b.returncode == 0, said(tmp_path, "b")
        assert json.loads(out)["outcome"] == "completed"
        events = [json.loads(line) for line in audit.read_text().splitlines()]
    leases = [e for e in events if "/leases" in e["requestURI"] and e["verb"] == "update"]
    by = [e["userAgent"].removeprefix("kupgrade-controller/") for e in leases]
    assert by[-1] == "b" and "a" not in by[by.index("b") :]  # b took it and released it
    assert runs(writers(audit)) == ["a", "b"]


def _token(kubeconfig: Path) -> str:
    doc = yaml.safe_load(kubeconfig.read_text())
    return str(doc["users"][0]["user"].get("token", ""))


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--lease-duration", "5", "--renew-deadline", "5"], "--lease-duration must be greater"),
        (["--renew-deadline", "2", "--retry-period", "2"], "--renew-deadline must be greater"),
        (["--retry-period", "0", "--renew-deadline", "1"], "must be greater than zero"),
        (["--lease-namespace", "Kube_System"], "is not a namespace name"),
        (["--lease-name", "-controller"], "is not an object name"),
    ],
)
def test_bad_timings_are_one_line(tmp_path: Path, args: list[str], says: str) -> None:
    done = run_cli(["controller", "run", "--leader-elect", *args], tmp_path)
    assert done.exit_code == 1
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1
