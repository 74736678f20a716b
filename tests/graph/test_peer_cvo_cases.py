"""The cluster-version operator's own TestGetUpdates cases (../shared/peer/cluster-version-operator,
transcribed from pkg/cincinnati/cincinnati_test.go), run through `kupgrade updates` against a
loopback update service answering with each case's graph (SPEC A3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from tests.support.caseuse import case_params, plain
from tests.support.cli import kupgrade
from tests.support.conformance import SHARED
from tests.support.service import serving

CASES = SHARED / "peer" / "cluster-version-operator" / "cases.yaml"
PREFIX = "Unable to retrieve available updates: "


def _cases() -> list[Any]:
    if not CASES.exists():
        return [pytest.param(None, id="peer-cvo-absent")]
    return case_params(yaml.safe_load(Path(CASES).read_text())["cases"])


def _release(release: dict[str, Any]) -> str:
    return json.dumps(release, sort_keys=True)


@pytest.mark.parametrize("case", _cases())
def test_get_updates(case: Any) -> None:
    if case is None:
        pytest.skip(f"{CASES} is absent")
    asked: list[dict[str, str]] = []

    def answer(path: str) -> bytes:
        asked.append({k: v[0] for k, v in parse_qs(urlsplit(path).query).items()})
        return str(case["graph"]).encode()

    with serving(answer=answer) as base:
        done = kupgrade(
            "updates",
            "--upstream",
            f"{base}/graph",
            "--channel",
            str(case["channel"]),
            "--version",
            str(case["version"]),
            "--arch",
            str(case["arch"]),
            "--current-arch",
            str(case["current_arch"]),
            "--id",
            str(case["id_param"]),
            "-o",
            "json",
        )
    expect = case["expect"]
    assert asked == [plain(expect["query"])]
    status = json.loads(done.stdout)
    condition = status["conditions"][0]
    if "error" in expect:
        assert done.returncode == 1
        assert condition["status"] == "False"
        message = str(condition["message"]).removeprefix(PREFIX)
        assert f"{condition['reason']}: {message}" == expect["error"]
        return
    assert done.returncode == 0, done.stderr
    assert condition["status"] == "True"
    got = {_release(r) for r in status["availableUpdates"]}
    assert got == {_release(plain(r)) for r in expect["available"]}
    conditional = {
        _release({"release": c["release"], "risks": c["risks"]})
        for c in status["conditionalUpdates"]
    }
    assert conditional == {_release(plain(c)) for c in expect["conditional"]}
