"""The sample dataset and `kupgrade demo` (what `make demo` runs) work without ../shared."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kupgrade.errors import InputError
from kupgrade.graph.lint import lint_tree
from kupgrade.graph.loading import build_from_paths
from kupgrade.graph.policy import PolicyView
from kupgrade.sim.sample import write_sample


def test_sample_builds_lints_clean_and_is_deterministic(sample_dir: Path, tmp_path: Path) -> None:
    built = build_from_paths(sample_dir / "releases", sample_dir / "graph-data")
    assert built.data.skipped == [] and lint_tree(built.tree) == []
    again = write_sample(tmp_path / "again")
    files = sorted(p.relative_to(sample_dir) for p in sample_dir.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((sample_dir / f).read_bytes() == (again / f).read_bytes() for f in files)


def test_sample_reproduces_the_seed_example(sample_dir: Path) -> None:
    """Seed 000 §1.2.1: 4.13.40 on stable-4.14 (available updates and updates with known issues)."""
    doc = PolicyView(
        build_from_paths(sample_dir / "releases", sample_dir / "graph-data").graph
    ).filter("stable-4.14")
    versions = [n["version"] for n in doc["nodes"]]
    here = versions.index("4.13.40")
    recommended = {versions[b] for a, b in doc["edges"] if a == here}
    assert recommended == {
        "4.14.27",
        "4.14.26",
        "4.14.25",
        "4.14.24",
        "4.14.23",
        "4.13.42",
        "4.13.41",
    }
    known = {
        e["to"]: [r["name"] for r in entry["risks"]]
        for entry in doc["conditionalEdges"]
        for e in entry["edges"]
        if e["from"] == "4.13.40"
    }
    assert known == {
        "4.14.22": ["AzureRegistryImageMigrationUserProvisioned", "IngressDegradedOnRouterReloads"],
        "4.14.21": ["AzureRegistryImageMigrationUserProvisioned", "IngressDegradedOnRouterReloads"],
    }
    node = doc["nodes"][versions.index("4.14.27")]
    assert node["payload"].endswith(
        "4d30b359aa6600a89ed49ce6a9a5fdab54092bcb821a25480fdfbc47e66af9ec"
    )


def test_sample_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "file").write_text("keep me")
    with pytest.raises(InputError, match="not empty"):
        write_sample(tmp_path / "x")
    assert (tmp_path / "x" / "file").read_text() == "keep me"


def test_demo_runs_end_to_end() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kupgrade", "demo", "-o", "json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["channel"] == "stable-4.14" and summary["nodes"] == 31
    # verified=False in the history is explained, in the controller's words
    assert (
        "No release authenticity verification is configured" in (summary["rehearsal"]["unverified"])
    )
    assert summary["url"].startswith("http://127.0.0.1:")
    assert {r["name"] for r in summary["risks"]} == {
        "AzureRegistryImageMigrationUserProvisioned",
        "IngressDegradedOnRouterReloads",
    }
    # The rehearsal: a simulated cluster at the example release asks the same service,
    # upgrades to the newest recommended release, and every pool ends updated.
    rehearsal = summary["rehearsal"]
    assert rehearsal["outcome"] == "completed"
    assert rehearsal["target"] == summary["exampleCluster"]["availableUpdates"][0]["version"]
    assert [(h["state"], h["version"]) for h in rehearsal["history"]] == [
        ("Completed", rehearsal["target"]),
        ("Completed", "4.13.40"),
    ]
    assert rehearsal["clusterversion"]["STATUS"] == f"Cluster version is {rehearsal['target']}"
    assert {p["UPDATED"] for p in rehearsal["pools"].values()} == {"True"}
    objects = {row["object"] for row in rehearsal["timeline"]}
    assert "clusteroperator/etcd" in objects and "node/worker-0" in objects
