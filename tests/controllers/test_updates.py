"""Update availability and `kupgrade updates` (SPEC A3-A5), over real HTTP on loopback."""

from __future__ import annotations

import http.server
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kupgrade.cluster.upgrade_text import (
    check_for_upgrade,
    render_upgrade,
    sort_versions_desc,
)
from kupgrade.graph.client import ClusterView, fetch
from kupgrade.risks.rules import Registry
from kupgrade.risks.updates import evaluate
from kupgrade.sim.sample import EXAMPLE_CLUSTER, SNAPSHOT_END_S
from tests.support.caseuse import plain
from tests.support.conformance import conformance_cases, need_case
from tests.support.processes import PrometheusProcess
from tests.support.service import running_server

UUID = "3eb13b90-4668-4257-bdd6-40fb06671ad1"


OC = ("cvo", "oc-adm-upgrade.yaml")


@pytest.mark.parametrize("case", conformance_cases("cases", *OC))
def test_oc_adm_upgrade_renders_byte_for_byte(case: Any) -> None:
    case = need_case(case, *OC)
    out, err = render_upgrade(
        plain(case["clusterversion"]), case["flags"]["include_not_recommended"]
    )
    expect = case["expect"]
    assert out == expect["stdout_lines"]
    assert err == (expect.get("stderr_lines") or [])
    # oc's upgrade.go Run without a target prints and returns nil: rendering exits 0.
    assert expect.get("exit_code", 0) == 0


@pytest.mark.parametrize("case", conformance_cases("sort_cases", *OC))
def test_oc_adm_upgrade_sorts_versions(case: Any) -> None:
    case = need_case(case, *OC)
    assert sort_versions_desc(list(case["input"])) == case["expect"]


@pytest.mark.parametrize("case", conformance_cases("guard_cases", *OC))
def test_oc_adm_upgrade_guards(case: Any) -> None:
    case = need_case(case, *OC)
    cv = {
        "status": {
            "conditions": plain(case["input"]["conditions"]),
            "desired": {"version": case["input"]["desired_version"]},
        }
    }
    assert check_for_upgrade(cv) == case["expect_error"]


@pytest.fixture(scope="module")
def sample_service(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("svc") / "serve.log"
    with running_server(sample_dir / "releases", sample_dir / "graph-data", log) as server:
        yield f"{server.base}/api/upgrades_info/graph"


def kupgrade(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kupgrade", *args], capture_output=True, text=True, check=False
    )


def _updates(
    url: str, *backend: str, version: str = "4.13.40", fmt: str = "json"
) -> subprocess.CompletedProcess[str]:
    return kupgrade(
        "updates",
        "--upstream",
        url,
        "--channel",
        "stable-4.14",
        "--version",
        version,
        "--id",
        UUID,
        *backend,
        "--include-not-recommended",
        "-o",
        fmt,
    )


def test_updates_for_the_sample_cluster(sample_service: str, sample_dir: Path) -> None:
    done = _updates(sample_service, "--metrics", str(sample_dir / "metrics" / "cluster.om"))
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    versions = [u["version"] for u in status["availableUpdates"]]
    assert versions == ["4.14.27", "4.14.26", "4.14.25", "4.14.24", "4.14.23", "4.13.42", "4.13.41"]
    conditional = {
        c["release"]["version"]: c["conditions"][0] for c in status["conditionalUpdates"]
    }
    assert (
        conditional["4.14.22"]["status"] == "False"
        and conditional["4.14.22"]["reason"] == "MultipleReasons"
    )
    assert "user-provisioned registry storage" in conditional["4.14.22"]["message"]
    assert [c["release"]["version"] for c in status["conditionalUpdates"]][:2] == [
        "4.14.22",
        "4.14.21",
    ]
    assert (
        status["conditions"][0]["type"] == "RetrievedUpdates"
        and status["conditions"][0]["status"] == "True"
    )
    text = _updates(
        sample_service, "--metrics", str(sample_dir / "metrics" / "cluster.om"), fmt="text"
    )
    lines = text.stdout.split("\n")
    assert lines[0] == "Cluster version is 4.13.40"
    assert "Updates with known issues:" in lines and "  Version: 4.14.22" in lines


@pytest.mark.skipif(
    shutil.which("prometheus") is None, reason="Debian's prometheus package is not installed"
)
def test_same_answer_from_a_real_prometheus(
    sample_service: str, sample_dir: Path, tmp_path: Path
) -> None:
    snapshot = sample_dir / "metrics" / "cluster.om"
    offline = _updates(sample_service, "--metrics", str(snapshot))
    prom = PrometheusProcess(tmp_path / "prom")
    prom.backfill(snapshot)
    with prom:
        prom.wait_for("/-/ready")
        live = _updates(sample_service, "--prometheus", prom.base, "--time", str(SNAPSHOT_END_S))
    assert live.returncode == 0, live.stderr

    def strip(doc: dict[str, Any]) -> dict[str, Any]:
        for c in doc["conditions"] + [
            c for u in doc["conditionalUpdates"] for c in u["conditions"]
        ]:
            c.pop("lastTransitionTime")
        return doc

    assert strip(json.loads(live.stdout)) == strip(json.loads(offline.stdout))


class _Handler(http.server.BaseHTTPRequestHandler):
    body: bytes = b""
    status: int = 200

    def do_GET(self) -> None:
        self.send_response(self.status)
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def answering() -> Iterator[type[_Handler]]:
    handler = type("H", (_Handler,), {})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    handler.base = f"http://127.0.0.1:{server.server_address[1]}/graph"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield handler
    server.shutdown()


@pytest.mark.parametrize(
    ("view", "reason"),
    [
        (ClusterView("", "stable-4.14", "4.14.1", cluster_id=UUID), "NoUpstream"),
        (ClusterView("not a url", "stable-4.14", "4.14.1", cluster_id=UUID), "InvalidURI"),
        (
            ClusterView("http://127.0.0.1:9/graph", "stable-4.14", "4.14.1", cluster_id="nope"),
            "InvalidID",
        ),
        (
            ClusterView("http://127.0.0.1:9/graph", "stable-4.14", "4.14.1", "", UUID),
            "NoArchitecture",
        ),
        (
            ClusterView("http://127.0.0.1:9/graph", "stable-4.14", "", cluster_id=UUID),
            "NoCurrentVersion",
        ),
        (ClusterView("http://127.0.0.1:9/graph", "", "4.14.1", cluster_id=UUID), "NoChannel"),
        (
            ClusterView("http://127.0.0.1:9/graph", "stable-4.14", "4.14", cluster_id=UUID),
            "InvalidCurrentVersion",
        ),
        (
            ClusterView("http://127.0.0.1:9/graph", "stable-4.14", "4.14.1", cluster_id=UUID),
            "RemoteFailed",
        ),
    ],
)
def test_retrieved_updates_reasons_before_a_graph(view: ClusterView, reason: str) -> None:
    retrieval = fetch(view, lambda: 0.0)
    assert retrieval.condition["status"] == "False"
    assert retrieval.condition["reason"] == reason


@pytest.mark.parametrize(
    ("status", "body", "reason", "message"),
    [
        (404, b"{}", "ResponseFailed", "unexpected HTTP status: 404"),
        (200, b"<html>", "ResponseInvalid", "Unable to retrieve available updates"),
        (
            200,
            b'{"nodes": [{"version": "4.14.2", "payload": "x", "metadata": {}}], "edges": []}',
            "VersionNotFound",
            'currently reconciling cluster version 4.14.1 not found in the "stable-4.14" channel',
        ),
    ],
)
def test_retrieved_updates_reasons_from_the_answer(
    answering: type[_Handler], status: int, body: bytes, reason: str, message: str
) -> None:
    answering.status, answering.body = status, body
    view = ClusterView(answering.base, "stable-4.14", "4.14.1", cluster_id=UUID)  # type: ignore[attr-defined]
    result = evaluate(view, fetch(view, lambda: 0.0), Registry.standard(None), lambda: 0.0)
    assert result.retrieved["reason"] == reason
    assert message in result.retrieved["message"]


def test_cli_unreachable_upstream_is_a_message_not_a_traceback(sample_dir: Path) -> None:
    done = _updates(
        "http://127.0.0.1:9/graph",
        "--metrics",
        str(sample_dir / "metrics" / "cluster.om"),
        fmt="text",
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "Reason: RemoteFailed" in done.stderr


def test_without_metrics_risks_are_unknown_not_dropped(sample_service: str, tmp_path: Path) -> None:
    """As the version controller does when it cannot query Prometheus: each PromQL risk
    fails to evaluate, so its update reads Recommended=Unknown (EvaluationFailed) with the
    reason, and is still listed; nothing demands a metrics source."""
    done = _updates(sample_service)
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["conditionalUpdates"], "conditional updates are listed, not dropped"
    promql = [
        c["conditions"][0]
        for c in status["conditionalUpdates"]
        if "no metrics to evaluate it against" in c["conditions"][0]["message"]
    ]
    assert promql and all(c["status"] in ("Unknown", "False") for c in promql)
    # A risk that always applies joins in: EvaluationFailed + exposed is MultipleReasons.
    assert all(c["reason"] in ("EvaluationFailed", "MultipleReasons") for c in promql)
    text = _updates(sample_service, fmt="text")
    assert (
        "Updates with known issues" in text.stdout or "Supported but not recommended" in text.stdout
    )
    bad = tmp_path / "bad.om"
    bad.write_text("up 1\n")
    done = _updates(sample_service, "--metrics", str(bad))
    assert done.returncode == 1 and "bad.om" in done.stderr and "Traceback" not in done.stderr
    assert EXAMPLE_CLUSTER["version"] == "4.13.40"
