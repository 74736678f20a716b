"""`kupgrade cluster`, `upgrade`, `controller run` and `get` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kupgrade.cli.main import app
from kupgrade.cluster.sim.create import model_image
from kupgrade.cluster.sim.profile import Spec

cli = CliRunner()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KUPGRADE_HOME", str(tmp_path))
    return tmp_path


def run(*args: str) -> tuple[int, str]:
    result = cli.invoke(app, list(args))
    return result.exit_code, result.output


def test_create_get_upgrade_run(home: Path) -> None:
    code, out = run("cluster", "create", "demo", "--workers", "2", "--seed", "3", "-o", "json")
    assert code == 0, out
    assert json.loads(out)["nodes"] == 5
    code, out = run("get", "mcp")
    lines = out.splitlines()
    assert lines[0].split() == [
        "NAME",
        "CONFIG",
        "UPDATED",
        "UPDATING",
        "DEGRADED",
        "MACHINECOUNT",
        "READYMACHINECOUNT",
        "UPDATEDMACHINECOUNT",
        "DEGRADEDMACHINECOUNT",
        "AGE",
    ]
    assert lines[2].split()[2:9] == ["True", "False", "False", "2", "2", "2", "0"]
    image = model_image(Spec(), "4.14.27", home / "clusters" / "demo")
    code, out = run("upgrade", "--to-image", image)
    assert code == 1 and "--allow-explicit-upgrade" in out
    code, out = run("upgrade", "--to-image", image, "--allow-explicit-upgrade")
    assert code == 0, out
    code, out = run("controller", "run", "-o", "json")
    assert code == 0, out
    report = json.loads(out)
    assert report["outcome"] == "completed"
    assert report["clusterversion"]["VERSION"] == "4.14.27"
    code, out = run("get", "clusterversion", "-o", "json")
    assert json.loads(out)["items"][0]["status"]["history"][0]["state"] == "Completed"
    code, out = run("get", "nodes")
    assert all("Ready" in line for line in out.splitlines()[1:])
    code, out = run("cluster", "list", "-o", "json")
    assert json.loads(out)[0]["VERSION"] == "4.14.27"
    code, out = run("cluster", "delete", "demo")
    assert code == 0 and not (home / "clusters" / "demo").exists()


def test_user_mistakes_are_one_line_errors(home: Path, tmp_path: Path) -> None:
    code, out = run("get", "mcp")
    assert code == 1 and "kupgrade cluster create" in out
    bad = tmp_path / "p.yaml"
    bad.write_text("spec:\n  pools:\n    - name: worker\n      nodes: two\n")
    code, out = run("cluster", "create", "x", "--profile", str(bad))
    assert code == 1 and "p.yaml" in out and "nodes" in out and "Traceback" not in out
    assert run("cluster", "create", "x")[0] == 0
    code, out = run("cluster", "create", "x")
    assert code == 1 and "already exists" in out
    code, out = run("get", "pods")
    assert code == 1 and "unknown resource type" in out
    code, out = run("upgrade", "--to", "9.9.9")
    assert code == 1 and "not one of the available updates" in out
