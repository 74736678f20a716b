"""A cluster's store survives what machines do to it (issue 17): a damaged file, two
controllers at once, a killed parent, a full disk, a read-only home, a release that
failed to load and was then fixed. Each ends in one line that says what to do, a
non-zero exit, and a store holding exactly its last committed step."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.profile import Spec
from kupgrade.sim.store import Store
from kupgrade.sim.store_errors import StoreError
from tests.support.hostile import Outcome, run_bounded


def kup(home: Path, *args: str) -> Outcome:
    outcome = run_bounded(*args, env={"KUPGRADE_HOME": str(home)}, timeout=120)
    assert not outcome.crashed, outcome.stderr
    return outcome


def one_error_line(outcome: Outcome) -> str:
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, outcome.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    assert kup(home, "cluster", "create", "a", "--workers", "2", "--seed", "1").returncode == 0
    return home


def _store(home: Path, name: str = "a") -> Path:
    return home / "clusters" / name / "cluster.db"


def test_a_damaged_store_is_named_and_the_others_still_list(home: Path) -> None:
    assert kup(home, "cluster", "create", "b", "--workers", "1").returncode == 0
    db = _store(home, "b")
    data = bytearray(db.read_bytes())
    for offset in range(4096, len(data), 97):  # every page after the first, scribbled
        data[offset] ^= 0x5A
    db.write_bytes(bytes(data))
    got = kup(home, "get", "nodes", "--cluster", "b")
    assert got.returncode == 1
    line = one_error_line(got)
    assert "the store of cluster b is damaged" in line
    assert "kupgrade cluster delete b" in line
    listed = kup(home, "cluster", "list", "-o", "json")
    assert listed.returncode == 1
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["a"]["VERSION"] and rows["b"]["STATUS"] == "store unreadable"
    assert "cluster b is damaged" in listed.stderr
    assert kup(home, "cluster", "delete", "b").returncode == 0
    assert kup(home, "cluster", "list").returncode == 0


def test_not_a_database_at_all(home: Path) -> None:
    _store(home).write_bytes(b"this is not SQLite\n" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(_store(home)) + suffix).unlink(missing_ok=True)
    line = one_error_line(kup(home, "get", "clusterversion"))
    assert "the store of cluster a is damaged" in line


def _upgrade(home: Path) -> None:
    image = model_image(Spec(), "4.14.27", home / "clusters" / "a")
    done = kup(home, "upgrade", "--to-image", image, "--allow-explicit-upgrade")
    assert done.returncode == 0, done.stderr


def _start_run(home: Path) -> subprocess.Popen[bytes]:
    # --speed keeps the rehearsal going for minutes of wall time.
    return subprocess.Popen(
        [sys.executable, "-m", "kupgrade", "controller", "run", "--speed", "2"],
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _children(parent_pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent_pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_for(predicate: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError("condition not reached in time")


def test_one_controller_at_a_time_and_none_outlives_its_parent(home: Path) -> None:
    _upgrade(home)
    first = _start_run(home)
    try:
        _wait_for(lambda: _children(first.pid))
        child = _children(first.pid)[0]
        second = kup(home, "controller", "run")
        assert second.returncode == 1
        line = one_error_line(second)
        assert "controllers of cluster a are already running" in line
        assert f"process {first.pid}" in line
        # Killing only the parent stops its child too: no orphan writes the store.
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        _wait_for(lambda: not _alive(child))
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    # The lock went with them, and the stored state carries on to completion.
    done = kup(home, "controller", "run", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outcome"] == "completed"


def test_a_full_disk_writes_nothing_half_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "c" / "cluster.db"
    path.parent.mkdir()
    store = Store(path)
    store.put({"kind": "Node", "metadata": {"name": "n0"}, "status": {}})
    store.commit()
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    # SQLite's own limit on the file's size: the same SQLITE_FULL a full disk gives.
    store._db.execute(f"PRAGMA max_page_count={pages}")
    for i in range(2000):
        store.put({"kind": "Node", "metadata": {"name": f"n{i + 1}"}, "status": {"x": "y" * 100}})
    with pytest.raises(StoreError) as full:
        store.commit()
    assert "no space left on the device" in str(full.value)
    assert "cannot rollback" not in str(full.value)
    store.close()
    again = Store(path)
    assert [n["metadata"]["name"] for n in again.list("Node")] == ["n0"]
    again.close()


def _unshare_works() -> bool:
    if not shutil.which("unshare") or os.geteuid() != 0:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


needs_mounts = pytest.mark.skipif(
    not _unshare_works(), reason="needs root and mount namespaces (unshare -m) for a real mount"
)


def _in_namespace(script: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "KUPGRADE_HOME": str(home), "PYTHON": sys.executable},
    )


@needs_mounts
def test_read_only_home(home: Path) -> None:
    done = _in_namespace(
        'mount --bind -o ro "$KUPGRADE_HOME" "$KUPGRADE_HOME" && '
        '"$PYTHON" -m kupgrade get nodes; echo "rc=$?" >&2; '
        '"$PYTHON" -m kupgrade cluster create b; echo "rc=$?" >&2',
        home,
    )
    lines = done.stderr.splitlines()
    assert "Traceback" not in done.stderr
    assert lines[0].startswith("error: ") and "read-only" in lines[0]
    assert lines[1] == "rc=1"
    assert lines[2].startswith("error: ") and "read-only" in lines[2]
    assert lines[3] != "rc=0"


@needs_mounts
def test_a_full_disk_under_a_running_controller(home: Path, tmp_path: Path) -> None:
    _upgrade(home)
    before = json.loads(kup(home, "get", "clusterversion", "-o", "json").stdout)
    small = tmp_path / "small"
    small.mkdir()
    # The cluster's home on a tmpfs with just room for what it holds now.
    size_kib = sum(f.stat().st_size for f in home.rglob("*") if f.is_file()) // 1024 + 400
    done = _in_namespace(
        f'mount -t tmpfs -o size={size_kib}k tmpfs "{small}" && cp -a "$KUPGRADE_HOME/." "{small}" && '
        f'KUPGRADE_HOME="{small}" "$PYTHON" -m kupgrade controller run; echo "rc=$?" >&2; '
        f'KUPGRADE_HOME="{small}" "$PYTHON" -m kupgrade get clusterversion -o json',
        home,
    )
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert errors and "no space left on the device" in errors[0], done.stderr
    assert "rc=0" not in done.stderr
    # What is stored is a whole step: readable, and never behind what was there before.
    after = json.loads(done.stdout)
    assert after["items"][0]["spec"] == before["items"][0]["spec"]


def test_a_release_that_failed_to_load_is_retried_once_fixed(home: Path, tmp_path: Path) -> None:
    built = tmp_path / "built"
    image = model_image(Spec(), "4.14.27", built)
    mirror = tmp_path / "mirror"
    profile = json.loads(kup(home, "get", "clusterversion", "-o", "json").stdout)
    assert profile["items"]
    # Point the cluster at a mirror that is not there yet: the payload cannot be loaded.
    db = sqlite3.connect(_store(home))
    (raw,) = db.execute("SELECT value FROM meta WHERE key='profile'").fetchone()
    doc = json.loads(raw)
    doc.setdefault("spec", {})["mirrors"] = {image: str(mirror)}
    db.execute("UPDATE meta SET value=? WHERE key='profile'", (json.dumps(doc),))
    db.commit()
    db.close()
    assert kup(home, "upgrade", "--to-image", image, "--allow-explicit-upgrade").returncode == 0
    failed = kup(home, "controller", "run", "-o", "json")
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["outcome"] == "failing"
    assert "cluster a is left failing" in failed.stderr
    cv = json.loads(kup(home, "get", "clusterversion", "-o", "json").stdout)["items"][0]
    accepted = next(c for c in cv["status"]["conditions"] if c["type"] == "ReleaseAccepted")
    assert accepted["status"] == "False"
    # The mirror appears: the next run retries and the update completes.
    shutil.copytree(built / "releases" / "4.14.27", mirror)
    fixed = kup(home, "controller", "run", "-o", "json")
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["outcome"] == "completed"
    assert json.loads(fixed.stdout)["clusterversion"]["VERSION"] == "4.14.27"


@pytest.mark.parametrize(
    "what",
    [
        "machineconfigpool",
        "machineconfigpools",
        "mcp",
        "MCP",
        "machineconfigpools.machineconfiguration.openshift.io",
    ],
)
def test_get_accepts_the_names_oc_accepts(tmp_path: Path, what: str) -> None:
    home = tmp_path / "home"
    assert kup(home, "cluster", "create", "n").returncode == 0
    done = kup(home, "get", what, "--cluster", "n", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert {i["kind"] for i in json.loads(done.stdout)["items"]} == {"MachineConfigPool"}
