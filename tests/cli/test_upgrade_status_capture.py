"""`kupgrade upgrade status --mock-clusterversion`: oc's mock mode on a captured cluster,
as a user runs it; refused with one line outside `upgrade status` or on a bad capture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import kupgrade
from tests.support.conformance import SHARED

EXAMPLES = SHARED / "peer" / "oc" / "status-examples"


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"{EXAMPLES} not found")
def test_a_capture_is_shown_as_oc_shows_it() -> None:
    cv = EXAMPLES / "4.14.1-degraded-cv.yaml"
    shown = kupgrade("upgrade", "status", "--mock-clusterversion", str(cv))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == (EXAMPLES / "4.14.1-degraded.output").read_text()
    as_json = kupgrade("upgrade", "status", "--mock-clusterversion", str(cv), "-o", "json")
    assert json.loads(as_json.stdout)["controlPlane"]["assessment"] == "Stalled"


def test_a_capture_goes_with_upgrade_status_and_its_files(tmp_path: Path) -> None:
    cv = tmp_path / "c-cv.yaml"
    cv.write_text("kind: ClusterVersion\nmetadata: {name: version}\n")
    alone = kupgrade("upgrade", "--mock-clusterversion", str(cv))
    assert alone.returncode == 1 and "goes with `upgrade status`" in alone.stderr
    missing = kupgrade("upgrade", "status", "--mock-clusterversion", str(cv))
    assert missing.returncode == 1
    assert missing.stderr.count("\n") == 1 and "c-co.yaml" in missing.stderr
    assert "Traceback" not in missing.stderr
