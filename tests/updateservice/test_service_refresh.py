"""The service re-reads its inputs off the request path and never stops serving (SPEC A3)."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import httpx

from tests.support.service import metric, running_server, wait_for

URL = "/api/upgrades_info/graph?channel=stable-4.14&arch=amd64"


def copy_sample(sample_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(sample_dir, target)
    return target


def test_rebuild_on_change_and_keep_serving_on_failure(sample_dir: Path, tmp_path: Path) -> None:
    data = copy_sample(sample_dir, tmp_path)
    gd = data / "graph-data"
    with running_server(data / "releases", gd, tmp_path / "log", "--refresh", "0.2") as server:
        first = httpx.get(server.base + URL).json()
        assert metric(server.base, "kupgrade_graph_generation") == 1

        # A change to graph-data gives a new generation: block every edge into 4.14.27.
        (gd / "blocked-edges" / "4.14.27.yaml").write_text("to: 4.14.27\nfrom: .*\n")
        wait_for(lambda: metric(server.base, "kupgrade_graph_generation") == 2)
        second = httpx.get(server.base + URL).json()
        versions = [n["version"] for n in second["nodes"]]
        target = versions.index("4.14.27")
        assert not any(b == target for _, b in second["edges"])
        assert len(second["edges"]) < len(first["edges"])

        # Invalid YAML is skipped (Cincinnati's tolerance), counted, and logged.
        (gd / "blocked-edges" / "4.14.26-broken.yaml").write_text("to: [unclosed\n")
        wait_for(lambda: metric(server.base, "kupgrade_graph_generation") == 3)
        assert metric(server.base, "kupgrade_graph_data_skipped_files") == 1
        wait_for(lambda: "4.14.26-broken.yaml" in server.logs())

        # A catastrophic regex cannot stall the build: RE2 runs in linear time.
        (gd / "blocked-edges" / "4.14.25-evil.yaml").write_text(
            'to: 4.14.25\nfrom: "(a*)*(a*)*(a*)*$"\n'
        )
        wait_for(lambda: metric(server.base, "kupgrade_graph_generation") == 4)

        # A build failure (bad version file) keeps the last good graph.
        before_failures = metric(server.base, 'kupgrade_graph_refreshes_total{result="failed"}')
        (gd / "version").write_text("2.0.0\n")
        wait_for(
            lambda: (
                metric(server.base, 'kupgrade_graph_refreshes_total{result="failed"}')
                > before_failures
            )
        )
        assert metric(server.base, "kupgrade_graph_generation") == 4
        assert metric(server.base, "kupgrade_graph_last_failed_refresh_timestamp_seconds") > 0
        response = httpx.get(server.base + URL)
        assert response.status_code == 200 and response.json()["nodes"]
        assert httpx.get(server.base + "/readyz").status_code == 200
        wait_for(lambda: "still serving generation 4" in server.logs())
        assert "Traceback" not in server.logs()

        # Fixing the input recovers.
        (gd / "version").write_text("1.1.0\n")
        wait_for(lambda: metric(server.base, "kupgrade_graph_generation") == 5)


def test_not_ready_until_a_graph_builds(sample_dir: Path, tmp_path: Path) -> None:
    data = copy_sample(sample_dir, tmp_path)
    raw = tmp_path / "raw.json"
    raw.write_text(
        '{"nodes": [{"version": "1.0.0"}, {"version": "1.0.1"}], "edges": [[0, 1], [1, 0]]}'
    )
    with running_server(
        raw, data / "graph-data", tmp_path / "log", "--refresh", "0.2", expect_ready=False
    ) as server:
        ready = httpx.get(server.base + "/readyz")
        assert ready.status_code == 503 and "cycle" in ready.text
        response = httpx.get(server.base + URL)
        assert response.status_code == 500
        assert (
            response.json()["kind"] == "failed_upstream_fetch"
            and "cycle" in response.json()["value"]
        )
        assert httpx.get(server.base + "/livez").status_code == 200
        # Once the input is fixed the service becomes ready without a restart.
        raw.write_text('{"nodes": [{"version": "1.0.0"}, {"version": "1.0.1"}], "edges": [[0, 1]]}')
        wait_for(lambda: httpx.get(server.base + "/readyz").status_code == 200)
        assert "Traceback" not in server.logs()


def test_tarball_graph_data_and_prefix(sample_dir: Path, tmp_path: Path) -> None:

    tgz = tmp_path / "graph-data.tar.gz"
    with tarfile.open(tgz, "w:gz") as archive:
        archive.add(sample_dir / "graph-data", arcname="cincinnati-graph-data-0123abc")
    with running_server(
        sample_dir / "releases", tgz, tmp_path / "log", "--path-prefix", "custom/"
    ) as server:
        response = httpx.get(server.base + "/custom/graph", params={"channel": "stable-4.14"})
        assert response.status_code == 200 and response.json()["nodes"]
        assert httpx.get(server.base + URL).status_code == 404
        spec = httpx.get(server.base + "/custom/openapi").json()
        assert "/custom/v1/graph" in spec["paths"]


def test_workers_share_the_port_and_one_metrics_view(sample_dir: Path, tmp_path: Path) -> None:
    """`--workers 2`: two processes answer on one port, each builds its own graph, and
    /metrics, whichever worker answers it, counts every request of both."""
    data = copy_sample(sample_dir, tmp_path)
    gd = data / "graph-data"
    with running_server(
        data / "releases", gd, tmp_path / "log", "--workers", "2", "--refresh", "0.3"
    ) as server:
        wait_for(lambda: metric(server.base, 'kupgrade_graph_refreshes_total{result="built"}') == 2)
        requests = 120
        bodies = set()
        for _ in range(requests):  # a new connection each: the kernel spreads them
            with httpx.Client() as client:
                bodies.add(client.get(server.base + URL).content)
        assert len(bodies) == 1  # both workers serve the same graph, byte for byte
        served = metric(server.base, 'kupgrade_http_requests_total{code="200",route="graph"}')
        assert served == requests
        assert metric(server.base, "kupgrade_ready") == 1
        assert server.logs().count("graph generation 1:") == 2
        # A change is picked up by both workers: the generation (their newest) moves on,
        # and both rebuild (built counts 4 over the two).
        (gd / "blocked-edges" / "4.14.27.yaml").write_text("to: 4.14.27\nfrom: .*\n")
        wait_for(lambda: metric(server.base, 'kupgrade_graph_refreshes_total{result="built"}') == 4)
        assert metric(server.base, "kupgrade_graph_generation") == 2
        answers = set()
        for _ in range(20):
            with httpx.Client() as client:
                answers.add(client.get(server.base + URL).content)
        assert len(answers) == 1 and answers != bodies
