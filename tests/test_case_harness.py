"""The harness itself: a conformance-reading test must fail on a case carrying a field it
does not read. Every such test runs once more, on the first case of its section with an
undefined field added (tests/support/caseuse.py MUTATE), and none may pass."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.caseuse import MUTATE, REPORT
from tests.support.conformance import CONFORMANCE, REPO


def _modules() -> list[str]:
    """Test modules that hand out tracked conformance cases."""
    found = []
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if "conformance_cases(" in text or "mutated(" in text:
            found.append(str(path.relative_to(REPO)))
    return found


def test_every_case_reading_test_fails_on_an_unread_field(tmp_path: Path) -> None:
    if not CONFORMANCE.exists():
        pytest.skip(f"conformance data not found at {CONFORMANCE}")
    modules = _modules()
    assert len(modules) >= 10
    report = tmp_path / "report.tsv"
    env = {**os.environ, MUTATE: "1", REPORT: str(report)}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--no-header",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            *modules,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    rows = [line.split("\t") for line in report.read_text().splitlines()]
    outcomes = {node: outcome for node, outcome in rows}
    functions = {node.split("[")[0] for node in outcomes}
    assert len(functions) >= 40, sorted(functions)
    passed = sorted(node for node, outcome in outcomes.items() if outcome != "failed")
    assert not passed, f"these tests ignore a field their case carries: {passed}"
