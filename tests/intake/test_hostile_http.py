"""Answers from servers kupgrade asks (an update service, a Prometheus) can be hostile
too (issue 17): bodies that are not UTF-8, nested past any stack, larger than memory,
dripped a byte at a time, or risks whose PromQL would run for minutes. Each becomes a
reported failure (RetrievedUpdates=False, Recommended=Unknown) within bounded time."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from kupgrade.intake.http import TooSlow, bounded_get
from tests.support.hostile import run_bounded
from tests.support.service import serving


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("metrics") / "m.om"
    path.write_text('# TYPE up gauge\nup{job="a"} 1 1700000000\n# EOF\n')
    return path


def _updates(
    upstream: str, snapshot: Path, *extra: str, env: dict[str, str] | None = None
) -> tuple[str, float]:
    started = time.monotonic()
    outcome = run_bounded(
        "updates",
        "--upstream",
        upstream + "/graph",
        "--channel",
        "stable-4.14",
        "--version",
        "4.14.1",
        "--metrics",
        str(snapshot),
        *extra,
        env=env,
    )
    assert not outcome.crashed, outcome.stderr
    return outcome.stdout + outcome.stderr, time.monotonic() - started


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"[" * 200_000 + b"]" * 200_000, "nesting exceeds the limit"),
        (b'{"nodes": [{"version": "4.14.1", "payload": "\xff\xfe"}]}', "not UTF-8"),
        (b'{"nodes": 1, "edges": "x"}', "Unable to retrieve available updates"),
        (b"\x1f\x8b\x08\x00garbage", "not valid JSON"),
    ],
)
def test_a_hostile_update_service_is_a_retrieval_failure(
    body: bytes, expected: str, snapshot: Path
) -> None:
    with serving(body) as upstream:
        text, _ = _updates(upstream, snapshot)
    assert "RetrievedUpdates" in text or "Unable to retrieve available updates" in text
    assert expected in text


def test_an_answer_over_the_size_limit_is_not_read(snapshot: Path) -> None:
    with serving(b'{"nodes": [], "edges": [], "pad": "' + b"x" * 200_000 + b'"}') as upstream:
        text, _ = _updates(upstream, snapshot, env={"KUPGRADE_MAX_INPUT_BYTES": "100000"})
    assert "over the limit of 100,000" in text


def _graph_with_risk(expr: str) -> bytes:
    nodes = [
        {
            "version": v,
            "payload": f"quay.io/openshift-release-dev/ocp-release@sha256:{c * 64}",
            "metadata": {"io.openshift.upgrades.graph.release.channels": "stable-4.14"},
        }
        for v, c in (("4.14.1", "a"), ("4.14.2", "b"))
    ]
    risk = {
        "url": "https://example.com/risk",
        "name": "HostileQuery",
        "message": "a risk whose query never ends",
        "matchingRules": [{"type": "PromQL", "promql": {"promql": expr}}],
    }
    doc = {
        "nodes": nodes,
        "edges": [],
        "conditionalEdges": [{"edges": [{"from": "4.14.1", "to": "4.14.2"}], "risks": [risk]}],
    }
    return json.dumps(doc).encode()


def test_a_risk_that_would_run_for_minutes_becomes_unknown(snapshot: Path) -> None:
    with serving(_graph_with_risk("count_over_time(up[30d:1ms]) > 0")) as upstream:
        text, seconds = _updates(
            upstream,
            snapshot,
            "--include-not-recommended",
            "-o",
            "json",
            env={"KUPGRADE_QUERY_TIMEOUT": "2s"},
        )
    assert seconds < 20
    answer = json.loads(text[: text.rindex("}") + 1])
    (update,) = answer["conditionalUpdates"]
    recommended = next(c for c in update["conditions"] if c["type"] == "Recommended")
    assert recommended["status"] == "Unknown"
    assert "query timed out in expression evaluation" in recommended["message"]


def test_a_dripping_server_is_cut_off_at_the_total_timeout() -> None:

    with serving(b'{"nodes": []}' + b" " * 400, drip=True) as upstream, httpx.Client() as client:
        started = time.monotonic()
        with pytest.raises(TooSlow):
            bounded_get(client, upstream + "/graph", total_timeout=1.0)
        assert time.monotonic() - started < 5
