"""The service keeps serving while its graph-data turns hostile (issue 17).

Each input in turn — an alias bomb, a FIFO, a non-UTF-8 file, a corrupt tarball — must
leave the service answering the graph route within its normal latency, with the last good
(or the tolerant new) graph, the failure counted in /metrics and shown on /readyz.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import time
from pathlib import Path

import httpx
import pytest

from kupgrade.updateservice.rebuild import RebuildError, build_isolated
from tests.support.hostile import CONTENTS
from tests.support.service import metric, running_server, wait_for

URL = "/api/upgrades_info/graph?channel=stable-4.14&arch=amd64"
GENERATION = "kupgrade_graph_generation"


def _latency(base: str, count: int = 20) -> float:
    times = []
    with httpx.Client() as client:
        for _ in range(count):
            started = time.perf_counter()
            response = client.get(base + URL)
            times.append(time.perf_counter() - started)
            assert response.status_code == 200 and response.json()["nodes"]
    return statistics.median(times)


def test_service_serves_through_hostile_graph_data(sample_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_dir, data)
    gd = data / "graph-data"
    with running_server(data / "releases", gd, tmp_path / "log", "--refresh", "0.2") as server:
        baseline = _latency(server.base)
        generation = metric(server.base, "kupgrade_graph_generation")
        skipped = []
        for kind, name in (
            ("alias-bomb", "blocked-edges/bomb.yaml"),
            ("not-utf8", "channels/latin.yaml"),
            ("deep-yaml-flow", "blocked-edges/deep.yaml"),
            ("duplicate-keys", "blocked-edges/twice.yaml"),
        ):
            (gd / name).write_bytes(CONTENTS[kind])
            skipped.append(name)
            # The file is refused and skipped (Cincinnati's tolerance): a new generation.
            wait_for(lambda last=generation: metric(server.base, GENERATION) > last)
            generation = metric(server.base, "kupgrade_graph_generation")
            assert metric(server.base, "kupgrade_graph_data_skipped_files") == len(skipped)
            assert _latency(server.base) < max(0.25, 10 * baseline)
        os.mkfifo(gd / "channels" / "fifo.yaml")
        wait_for(lambda: metric(server.base, "kupgrade_graph_generation") > generation)
        assert "fifo.yaml: is a FIFO" in server.logs()
        assert _latency(server.base) < max(0.25, 10 * baseline)


def test_corrupt_tarball_keeps_the_last_good_graph(sample_dir: Path, tmp_path: Path) -> None:
    tarball = tmp_path / "graph-data.tar.gz"
    shutil.make_archive(str(tmp_path / "graph-data"), "gztar", sample_dir / "graph-data")
    good = tarball.read_bytes()
    with running_server(
        sample_dir / "releases", tarball, tmp_path / "log", "--refresh", "0.2"
    ) as server:
        first = httpx.get(server.base + URL).json()
        # Keep the gzip header, break the stream: zlib's error must not escape.
        tarball.write_bytes(good[:20] + bytes(b ^ 0xFF for b in good[20:200]) + good[200:])
        wait_for(
            lambda: (
                metric(server.base, 'kupgrade_graph_rebuild_failures_total{reason="input"}') >= 1
            )
        )
        assert httpx.get(server.base + URL).json() == first
        ready = httpx.get(server.base + "/readyz")
        assert ready.status_code == 200
        assert "the last rebuild failed, still serving generation 1" in ready.text
        assert "not a readable tar archive" in ready.text
        # Logged once per change of the inputs, not once per refresh.
        time.sleep(1.0)
        assert server.logs().count("graph rebuild failed") == 1
        tarball.write_bytes(good + b"\0" * 1024)  # fixed (trailing zero blocks are legal)
        wait_for(lambda: metric(server.base, "kupgrade_graph_generation") == 2)
        assert "failed" not in httpx.get(server.base + "/readyz").text


def test_half_open_connections_are_closed(sample_dir: Path, tmp_path: Path) -> None:
    with running_server(
        sample_dir / "releases", sample_dir / "graph-data", tmp_path / "log", "--read-timeout", "1"
    ) as server:
        host, port = server.base.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n")  # headers never end
            started = time.monotonic()
            while sock.recv(1024):  # an error answer (408) may come before the close
                pass
            # Closed by the server after --read-timeout, long before our 10 s would expire.
            assert 0.5 < time.monotonic() - started < 8
        assert httpx.get(server.base + "/readyz").status_code == 200


def test_a_rebuild_past_its_limits_is_stopped(sample_dir: Path) -> None:
    with pytest.raises(RebuildError) as slow:
        build_isolated(sample_dir / "releases", sample_dir / "graph-data", timeout_s=0.01)
    assert slow.value.reason == "timeout"
    with pytest.raises(RebuildError) as big:
        build_isolated(sample_dir / "releases", sample_dir / "graph-data", memory_mb=24)
    assert big.value.reason in ("memory", "crash")
    built = build_isolated(sample_dir / "releases", sample_dir / "graph-data")
    assert built.graph.nodes and built.tarball
