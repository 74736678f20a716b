"""`kupgrade cluster`, `upgrade`, `controller run` and `get` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kupgrade.cli.main import app
from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.profile import Spec

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
    code, out = run("cluster", "delete", "nope")
    assert code == 1 and "NAME" in out and "nope" in out and "--cluster" not in out
    code, out = run("get", "secrets")
    assert code == 1 and "unknown resource type" in out
    code, out = run("upgrade", "--to", "9.9.9")  # no upstream: oc's answer names why
    assert code == 1 and "cannot refresh available updates:" in out and "NoUpstream" in out
    assert "specify --to-image to continue with the update." in out


@pytest.mark.parametrize(
    ("pools", "field"),
    [
        ("- {name: worker, nodes: 3, machines: [{name: a}]}", "spec.pools[0].nodes"),
        ("- {name: worker, machines: [{name: a}, {name: a}]}", "spec.pools[0].machines"),
        ("- {name: worker}", "spec.pools[0].nodes"),
    ],
)
def test_profile_machines_are_checked(home: Path, tmp_path: Path, pools: str, field: str) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(f"spec:\n  pools:\n  {pools}\n")
    code, out = run("cluster", "create", "x", "--profile", str(profile))
    assert code == 1 and field in out and "p.yaml" in out, out
    assert not (home / "clusters" / "x").exists()


def test_profile_changes_patch_objects_at_their_minute(home: Path, tmp_path: Path) -> None:
    """A paused pool unpaused at minute 30 by a scheduled change (SPEC E5)."""
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "spec:\n"
        "  pools:\n"
        "  - {name: master, nodes: 1}\n"
        "  - {name: worker, machines: [{name: w1, zone: b}, {name: w2, zone: a}], paused: true}\n"
        "  changes:\n"
        "  - {atMinutes: 300, kind: MachineConfigPool, name: worker, patch: {spec: {paused: false}}}\n"
    )
    code, out = run("cluster", "create", "x", "--profile", str(profile), "-o", "json")
    assert code == 0 and json.loads(out)["nodes"] == 3
    code, out = run("get", "nodes", "-o", "json")
    names = [n["metadata"]["name"] for n in json.loads(out)["items"]]
    assert sorted(names) == ["master-0", "w1", "w2"]
    image = model_image(Spec(), "4.14.27", home / "clusters" / "x")
    assert run("upgrade", "--to-image", image, "--allow-explicit-upgrade")[0] == 0
    code, out = run("controller", "run", "-o", "json")
    assert code == 0, out
    assert json.loads(out)["outcome"] == "completed"
    code, out = run("get", "nodes", "-o", "json")
    by_name = {n["metadata"]["name"]: n for n in json.loads(out)["items"]}
    done = [
        by_name[n]["metadata"]["annotations"]["machineconfiguration.openshift.io/currentConfig"]
        for n in ("w1", "w2")
    ]
    pool = json.loads(run("get", "mcp", "-o", "json")[1])["items"][1]
    assert done == [pool["spec"]["configuration"]["name"]] * 2
    # The pool held its nodes until the change, and no node was left degraded (a drain
    # timer from the finished drain must not fire later).
    code, out = run("get", "mcp")
    assert [line.split()[2:5] for line in out.splitlines()[1:]] == [["True", "False", "False"]] * 2
    assert len(json.loads(run("get", "nodes", "-o", "json")[1])["items"]) == 3


@pytest.mark.parametrize("name", ["", "a b", "a\x01b", "../x", ".hidden", "x-", "x" * 64])
def test_cluster_names_follow_the_help(home: Path, name: str) -> None:
    code, out = run("cluster", "create", name)
    assert code == 1 and "invalid cluster name" in out
    assert not (home / "clusters").exists() or not any((home / "clusters").iterdir())
