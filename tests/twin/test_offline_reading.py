"""`--from PATH... [--now TIME]` on `upgrade status`, `upgrade`, `get` and `updates`: a dump
read the way oc reads a live cluster (SPEC X7), offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.conformance import SHARED

EXAMPLES = SHARED / "peer" / "oc" / "status-examples"
AWS = Path(__file__).parents[1] / "data" / "captures" / "must-gather-aws"


def _examples() -> list[str]:
    if not EXAMPLES.is_dir():
        return []
    return sorted(p.name.removesuffix("-cv.yaml") for p in EXAMPLES.glob("*-cv.yaml"))


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"{EXAMPLES} not found")
@pytest.mark.parametrize("name", _examples())
def test_upgrade_status_from_a_capture_reads_as_oc_mock_mode(tmp_path: Path, name: str) -> None:
    """The same files as --mock-clusterversion reads (its alerts answer too), given as a
    dump: the same output."""
    files = [*EXAMPLES.glob(f"{name}-*.yaml"), *EXAMPLES.glob(f"{name}-alerts.json")]
    args = [a for p in sorted(files) for a in ("--from", str(p))]
    mocked = run_cli(
        ["upgrade", "status", "--mock-clusterversion", str(EXAMPLES / f"{name}-cv.yaml")], tmp_path
    )
    shown = run_cli(["upgrade", "status", *args], tmp_path)
    assert shown.exit_code == mocked.exit_code, shown.stderr
    assert shown.stdout == mocked.stdout


def test_a_must_gather_is_read_by_get_upgrade_and_updates(tmp_path: Path) -> None:
    nodes = run_cli(["get", "nodes", "--from", str(AWS), "-o", "json"], tmp_path)
    assert nodes.exit_code == 0, nodes.stderr
    assert len(json.loads(nodes.stdout)["items"]) == 6
    table = run_cli(["get", "nodes", "--from", str(AWS)], tmp_path)
    later = run_cli(["get", "nodes", "--from", str(AWS), "--now", "2021-08-13T00:00:00Z"], tmp_path)
    assert table.stdout.splitlines()[0].split()[:4] == ["NAME", "STATUS", "ROLES", "AGE"]
    assert "41m" in table.stdout and "9d" in later.stdout  # ages at the capture's time, or --now
    shown = run_cli(["upgrade", "--from", str(AWS)], tmp_path)
    assert shown.exit_code == 0, shown.stderr
    assert "Cluster version is 4.8.0-0.nightly-2021-07-31-065602" in shown.stdout
    status = run_cli(["upgrade", "status", "--from", str(AWS)], tmp_path)
    assert status.exit_code == 0 and "successfully completed" in status.stdout, status.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["upgrade", "--to", "4.9.0"],
        ["upgrade", "channel", "stable-4.9"],
        ["get", "nodes", "--kubeconfig", "/dev/null"],
        ["get", "nodes", "--now", "yesterday"],
    ],
)
def test_a_dump_is_read_not_changed(tmp_path: Path, args: list[str]) -> None:
    refused = run_cli([*args, "--from", str(AWS)], tmp_path)
    assert refused.exit_code == 1
    assert refused.stderr.strip().count("\n") == 0 and "--" in refused.stderr
