"""`kupgrade upgrade recommend` from the command line: on a simulated cluster whose
ClusterVersion a real `kupgrade serve` filled (the sample data), its alerts from the
sample's metrics snapshot; through a kubeconfig (`cluster serve-api`); and the inputs it
refuses, each in one line with a non-zero exit, as `oc adm upgrade recommend` exits
(openshift/oc pkg/cli/admin/upgrade/recommend/recommend.go)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kupgrade.cluster.conditions import find
from kupgrade.versions import sort_versions_desc
from tests.support.cli import kupgrade
from tests.support.processes import served_api


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return kupgrade(*args, cwd=home, env={"KUPGRADE_HOME": str(home)})


@pytest.fixture
def cluster(tmp_path: Path, upstream: str) -> dict[str, Any]:
    """Cluster c1 at 4.13.40 on stable-4.14, its updates fetched; its ClusterVersion."""
    made = _cli(
        tmp_path,
        "cluster",
        "create",
        "c1",
        "--version",
        "4.13.40",
        "--channel",
        "stable-4.14",
        "--upstream",
        upstream,
    )
    assert made.returncode == 0, made.stderr
    assert _cli(tmp_path, "upgrade", "--cluster", "c1").returncode == 0
    done = _cli(tmp_path, "get", "clusterversion", "--cluster", "c1", "-o", "json")
    found = json.loads(done.stdout)
    return dict(found["items"][0] if "items" in found else found)


def _recommended(cv: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The versions offered without a risk, and those with one, highest first."""
    status = cv["status"]
    risky = [
        u["release"]["version"]
        for u in status.get("conditionalUpdates") or []
        if (find(u.get("conditions"), "Recommended") or {}).get("status") != "True"
    ]
    every = {u["version"] for u in status.get("availableUpdates") or []}
    every |= {u["release"]["version"] for u in status.get("conditionalUpdates") or []}
    return sort_versions_desc(sorted(every - set(risky))), sort_versions_desc(risky)


def test_a_simulated_clusters_updates_by_minor(
    tmp_path: Path, cluster: dict[str, Any], sample_dir: Path
) -> None:
    good, risky = _recommended(cluster)
    assert good and risky, "the sample offers both kinds"
    metrics = str(sample_dir / "metrics" / "cluster.om")
    done = _cli(tmp_path, "upgrade", "recommend", "--cluster", "c1", "--metrics", metrics)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(
        "The following conditions found no cause for concern in updating this cluster to "
        "later releases: recommended/CriticalAlerts (AsExpected)"
    )
    assert "Channel: stable-4.14" in lines
    minors = [line for line in lines if line.startswith("Updates to ")]
    assert minors == sorted(minors, reverse=True) and "Updates to 4.14:" in minors
    newest = [v for v in good if v.startswith("4.14.")][:2]
    rows = [
        line.split()[0]
        for line in lines
        if line.endswith("no known issues relevant to this cluster")
    ]
    assert rows[:2] == newest
    # Every update once with --show-outdated-releases; the risky ones by their reason.
    every = _cli(tmp_path, "upgrade", "recommend", "--cluster", "c1", "--show-outdated-releases")
    listed = [line.split()[0] for line in every.stdout.splitlines() if line.startswith("  4.")]
    assert sorted(listed) == sorted(good + risky)
    data = json.loads(
        _cli(tmp_path, "upgrade", "recommend", "--cluster", "c1", "-o", "json").stdout
    )
    assert {u["version"] for u in data["updates"]} == set(good + risky)
    assert data["unaccepted"] == ["FailedToCompletePrecheck"]  # no snapshot: no alerts read
    assert data["precheckError"].startswith("the simulated cluster has no metrics snapshot")


def test_version_exits_as_oc_does_and_accept_lets_it_through(
    tmp_path: Path, cluster: dict[str, Any], sample_dir: Path
) -> None:
    good, risky = _recommended(cluster)
    base = (
        "upgrade",
        "recommend",
        "--cluster",
        "c1",
        "--metrics",
        str(sample_dir / "metrics" / "cluster.om"),
    )
    fine = _cli(tmp_path, *base, "--version", good[0])
    assert fine.returncode == 0, fine.stderr
    assert f"Update to {good[0]} has no known issues relevant to this cluster.\n" in fine.stdout
    bad = _cli(tmp_path, *base, "--version", risky[0])
    assert bad.returncode == 1
    assert f"Update to {risky[0]} Recommended=False:\n" in bad.stdout
    assert bad.stderr.splitlines()[-1] == (
        "error: issues that apply to this cluster but which were not included in --accept: "
        "ConditionalUpdateRisk"
    )
    quiet = _cli(tmp_path, *base, "--version", risky[0], "--quiet")
    assert (quiet.returncode, quiet.stdout) == (1, "")
    assert quiet.stderr.strip().endswith("ConditionalUpdateRisk")
    accepted = _cli(tmp_path, *base, "--version", risky[0], "--accept", "ConditionalUpdateRisk")
    assert accepted.returncode == 0, accepted.stderr
    assert accepted.stdout.endswith(
        f"Update to {risky[0]} has no known issues relevant to this cluster other than the "
        "accepted ConditionalUpdateRisk.\n"
    )
    data = json.loads(_cli(tmp_path, *base, "--version", risky[0], "-o", "json").stdout)
    assert data["version"]["version"] == risky[0] and data["error"].endswith(
        "ConditionalUpdateRisk"
    )


def test_through_a_kubeconfig_as_on_the_cluster(tmp_path: Path, cluster: dict[str, Any]) -> None:
    local = _cli(tmp_path, "upgrade", "recommend", "--cluster", "c1")
    assert local.returncode == 0, local.stderr
    with served_api(tmp_path, "c1", "--no-controllers") as (_, info):
        remote = _cli(tmp_path, "upgrade", "recommend", "--kubeconfig", info["kubeconfig"])
    assert remote.returncode == 0, remote.stderr
    # The served cluster has no thanos-querier Route: its alerts cannot be read, as oc says.
    first, *rest = remote.stdout.splitlines()
    assert first.startswith("Failed to check for at least some preconditions: ")
    assert "thanos-querier" in first
    assert rest == local.stdout.splitlines()[1:]


def _one_line_refusal(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    for word in words:
        assert word in done.stderr


def test_bad_inputs_are_refused_in_one_line(tmp_path: Path) -> None:
    run = ("upgrade", "recommend", "--mock-clusterversion")
    _one_line_refusal(_cli(tmp_path, *run, str(tmp_path / "none-cv.yaml")), "none-cv.yaml")
    (tmp_path / "bad-cv.yaml").write_text("kind: [unclosed\n")
    _one_line_refusal(_cli(tmp_path, *run, str(tmp_path / "bad-cv.yaml")), "bad-cv.yaml")
    (tmp_path / "cm-cv.yaml").write_text("kind: ConfigMap\nmetadata: {name: x}\n")
    _one_line_refusal(_cli(tmp_path, *run, str(tmp_path / "cm-cv.yaml")), "ConfigMap")
    (tmp_path / "c-cv.yaml").write_text("kind: ClusterVersion\nmetadata: {name: version}\n")
    _one_line_refusal(
        _cli(tmp_path, *run, str(tmp_path / "c-cv.yaml"), "--version", "4.x"),
        "cannot parse SemVer target",
    )
    _one_line_refusal(
        _cli(tmp_path, *run, str(tmp_path / "c-cv.yaml"), "--quiet"), "--quiet can only be set"
    )
    _one_line_refusal(_cli(tmp_path, "upgrade", "--version", "4.15.1"), "--version goes with")
    unknown = _cli(tmp_path, *run, str(tmp_path / "c-cv.yaml"), "--version", "4.15.1")
    assert unknown.returncode == 1
    assert unknown.stderr.splitlines()[-1] == (
        "error: no updates available, so cannot display context for the requested release 4.15.1"
    )
    _one_line_refusal(_cli(tmp_path, "upgrade", "recommend", "--cluster", "nope"), "nope")
