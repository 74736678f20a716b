"""`kupgrade serve --role builder|replica` as users run them: real processes, real ports."""

from __future__ import annotations

import shutil
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from kupgrade.updateservice.process import ChildProcess, free_port
from kupgrade.updateservice.snapshot_stores import DirectoryStore
from tests.support.cli import kupgrade
from tests.support.service import wait_for

URL = "/api/upgrades_info/graph?channel=stable-4.14&arch=amd64"


def serve(log: Path, *args: str) -> ChildProcess:
    port = free_port()
    command = [sys.executable, "-m", "kupgrade", "serve", "--port", str(port), *args]
    return ChildProcess(command, f"http://127.0.0.1:{port}", log)


def test_replica_switches_atomically_under_load(sample_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_dir, data)
    snaps = tmp_path / "snaps"
    blocked = data / "graph-data" / "blocked-edges" / "zz.yaml"
    builder = serve(
        tmp_path / "builder.log",
        *("--role", "builder", "--releases", str(data / "releases")),
        *("--graph-data", str(data / "graph-data"), "--snapshots", str(snaps)),
        *("--refresh", "0.2", "--keep", "100"),
    )
    replica = serve(
        tmp_path / "replica.log",
        *("--role", "replica", "--snapshots", str(snaps), "--refresh", "0.1"),
    )
    seen: list[tuple[str, bytes, str]] = []
    stop = threading.Event()
    errors: list[str] = []

    def ask() -> None:
        plain = {"accept-encoding": "identity"}  # the etag compared is the plain body's
        with httpx.Client(base_url=replica.base, timeout=10, headers=plain) as client:
            while not stop.is_set():
                response = client.get(URL)
                if response.status_code != 200:
                    errors.append(f"{response.status_code} {response.text}")
                seen.append(
                    (
                        response.headers["kupgrade-snapshot"],
                        response.content,
                        response.headers["etag"],
                    )
                )

    with builder:
        builder.wait_for()
        replica.start()
        replica.wait_for()
        threads = [threading.Thread(target=ask) for _ in range(4)]
        for thread in threads:
            thread.start()
        try:
            for version in ("4.14.25", "4.14.26", "4.14.27", "4.14.25", "4.14.26"):
                blocked.write_text(f"to: {version}\nfrom: .*\n")
                time.sleep(1.2)
        finally:
            stop.set()
            for thread in threads:
                thread.join()
            replica.stop()
        logs = replica.logs()
    assert not errors
    digests = {digest for digest, _, _ in seen}
    assert len(digests) >= 3, digests  # it switched, several times, while answering
    store = DirectoryStore(snaps)
    expected = {d: store.read(d).renders["stable-4.14", "amd64"] for d in digests}
    for digest, body, etag in seen:  # every answer is its snapshot's, whole
        assert body == expected[digest].body and etag == expected[digest].etag
    assert "Traceback" not in logs


def test_replica_keeps_serving_when_the_source_goes(sample_dir: Path, tmp_path: Path) -> None:
    snaps = tmp_path / "snaps"
    done = kupgrade(
        *("serve", "--role", "replica", "--snapshots", str(snaps)),
    )
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert str(snaps) in done.stderr and "start the builder" in done.stderr
    builder = serve(
        tmp_path / "builder.log",
        *("--role", "builder", "--releases", str(sample_dir / "releases")),
        *("--graph-data", str(sample_dir / "graph-data"), "--snapshots", str(snaps)),
    )
    with builder:
        builder.wait_for()
        assert "published snapshot sha256:" in httpx.get(builder.base + "/readyz").text
    replica = serve(
        tmp_path / "replica.log",
        *("--role", "replica", "--snapshots", str(snaps), "--refresh", "0.1"),
    )
    with replica:
        replica.wait_for()
        digest = httpx.get(replica.base + URL).headers["kupgrade-snapshot"]
        assert (snaps / "latest").read_text().strip() == digest
        # gone in one step: a tree removed file by file is seen half-removed by a poll,
        # which is a distinct fault (a missing blob) and rightly a line of its own
        snaps.rename(tmp_path / "gone")
        shutil.rmtree(tmp_path / "gone")
        wait_for(lambda: "still serving snapshot" in replica.logs())
        response = httpx.get(replica.base + URL)
        assert response.status_code == 200 and response.headers["kupgrade-snapshot"] == digest
        assert httpx.get(replica.base + "/readyz").status_code == 200
        assert httpx.get(replica.base + "/livez").status_code == 200
        data = httpx.get(replica.base + "/api/upgrades_info/graph-data")
        assert data.headers["kupgrade-snapshot"] == digest
        time.sleep(0.5)
        assert replica.logs().count("still serving snapshot") == 1  # one line, not per poll


def test_a_waiting_replica_is_live_but_not_ready(tmp_path: Path) -> None:
    replica = serve(
        tmp_path / "replica.log",
        *("--role", "replica", "--snapshots", str(tmp_path / "none"), "--wait-for-snapshot"),
    )
    with replica:
        replica.wait_for("/livez")
        ready = httpx.get(replica.base + "/readyz")
        assert ready.status_code == 503 and "start the builder" in ready.text
        graph = httpx.get(replica.base + URL)
        assert graph.status_code == 500 and graph.json()["kind"] == "failed_upstream_fetch"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--role", "replica"], "--snapshots"),
        (["--role", "replica", "--snapshots", "{tmp}/none"], "no such directory"),
        (["--role", "replica", "--snapshots", "{tmp}/file"], "no such directory"),
        (["--role", "replica", "--snapshots", "127.0.0.1:1/kupgrade/graph"], "reachable"),
        (["--role", "replica", "--snapshots", "127.0.0.1:1/a/b@sha256:" + "0" * 64], "not one"),
        (["--role", "replica", "--snapshots", "{tmp}/bad"], "does not name a snapshot"),
        (["--role", "replica", "--snapshots", "{tmp}", "--releases", "{tmp}/file"], "reads no"),
        (["--role", "builder", "--snapshots", "{tmp}/s"], "--releases"),
        (["--role", "builder", "--releases", "{tmp}/file", "--graph-data", "{tmp}"], "--snapshots"),
        (
            [
                "--role",
                "builder",
                "--snapshots",
                "{tmp}/file/s",
                "--releases",
                "{tmp}/file",
                "--graph-data",
                "{tmp}",
            ],
            "cannot create",
        ),
        (
            [
                "--role",
                "builder",
                "--snapshots",
                "{tmp}/s",
                "--releases",
                "{tmp}/file",
                "--graph-data",
                "{tmp}",
                "--workers",
                "2",
            ],
            "one builder",
        ),
        (
            ["--releases", "{tmp}/file", "--graph-data", "{tmp}", "--snapshots", "{tmp}/s"],
            "only --role builder",
        ),
        (["--role", "leader"], "leader"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], says: str) -> None:
    (tmp_path / "file").write_text("{}")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "latest").write_bytes(b"\x00garbage")
    done = kupgrade("serve", *(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert done.returncode != 0
    assert says in done.stderr, done.stderr
    if done.returncode == 1:  # ours (2 is the option parser's usage message)
        assert done.stderr.startswith("error:") and done.stderr.count("\n") == 1
