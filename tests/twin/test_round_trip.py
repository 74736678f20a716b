"""A twin is the cluster it was read from (SPEC X7): a simulated cluster served over its
API and imported with --kubeconfig, or written out as a must-gather and imported from
there, rehearses the same upgrade to the same timeline (same seed). The live import only
reads: the API server's audit log holds gets and lists, no watch, no write."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import run_cli
from tests.support.processes import served_api

PROFILE = """
spec:
  version: 4.13.40
  channel: stable-4.14
  pools:
    - {name: master, nodes: 3, maxUnavailable: 1, zones: [a, b, c]}
    - {name: worker, nodes: 3, maxUnavailable: 1, zones: [a, b, c]}
  workloads:
    - {name: web, namespace: shop, replicas: 4, pdb: {maxUnavailable: 1}}
    - {name: cache, namespace: shop, replicas: 2, pdb: {minAvailable: 1}, emptyDir: true}
"""
# What a must-gather holds of each kind: (what `get` names, where a must-gather puts it).
GATHERED = {
    "nodes": "core/nodes",
    "clusterversion": "config.openshift.io/clusterversions",
    "co": "config.openshift.io/clusteroperators",
    "mcp": "machineconfiguration.openshift.io/machineconfigpools",
    "pods": "core/pods",
    "deploy": "apps/deployments",
    "rs": "apps/replicasets",
    "ds": "apps/daemonsets",
    "pdb": "policy/poddisruptionbudgets",
}


def _timeline(home: Path, name: str) -> list[dict[str, Any]]:
    asked = run_cli(["upgrade", "--cluster", name, "--to", "4.14.27"], home)
    assert asked.exit_code == 0, asked.stderr
    ran = run_cli(["controller", "run", "--cluster", name, "-o", "json"], home)
    assert ran.exit_code == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["outcome"] == "completed"
    return list(report["timeline"])


def _must_gather(home: Path, name: str, root: Path) -> None:
    """The cluster's objects in a must-gather's layout, as `oc adm inspect` writes them."""
    for what, where in GATHERED.items():
        listed = run_cli(["get", what, "-A", "--cluster", name, "-o", "json"], home)
        assert listed.exit_code == 0, listed.stderr
        items = json.loads(listed.stdout)["items"]
        by_namespace: dict[str, list[Any]] = defaultdict(list)
        for item in items:
            by_namespace[item["metadata"].get("namespace", "")].append(item)
        for namespace, objs in by_namespace.items():
            top = (
                root / "namespaces" / namespace if namespace else root / "cluster-scoped-resources"
            )
            path = top / f"{where}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}))


def test_a_twin_rehearses_as_its_cluster_does(tmp_path: Path, upstream: str) -> None:
    home = tmp_path / "home"
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE)
    made = run_cli(
        ["cluster", "create", "orig", "--profile", str(profile), "--upstream", upstream], home
    )
    assert made.exit_code == 0, made.stderr
    audit = tmp_path / "audit.jsonl"
    with served_api(home, "orig", "--no-controllers", "--audit-log", str(audit)) as (_, info):
        live = run_cli(
            ["cluster", "import", "live", "--kubeconfig", info["kubeconfig"], "-o", "json"], home
        )
        checked = run_cli(
            [
                "upgrade",
                "--kubeconfig",
                info["kubeconfig"],
                "--to",
                "4.14.27",
                "--preflight",
                "-o",
                "json",
            ],
            home,
        )
    assert live.exit_code == 0, live.stderr
    requests = [json.loads(line) for line in audit.read_text().splitlines()]
    verbs = {r["verb"] for r in requests}
    assert requests and verbs <= {"get", "list"}, verbs
    assert all("watch" not in r["requestURI"] for r in requests)
    assert checked.exit_code == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["forecast"]["completed"] == 3
    gathered = tmp_path / "must-gather.local.1" / "quay-io-openshift-release-dev-sha256-0"
    _must_gather(home, "orig", gathered)
    dumped = run_cli(["cluster", "import", "dumped", "--from", str(gathered.parent)], home)
    assert dumped.exit_code == 0, dumped.stderr
    original = _timeline(home, "orig")
    assert any(row["object"].startswith("node/worker") for row in original)
    assert _timeline(home, "live") == original
    assert _timeline(home, "dumped") == original


def test_the_history_moves_the_forecast(tmp_path: Path, upstream: str) -> None:
    """Longer reboots in the cluster's own events make a longer forecast."""
    home = tmp_path / "home"
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE)
    assert (
        run_cli(
            ["cluster", "create", "orig", "--profile", str(profile), "--upstream", upstream], home
        ).exit_code
        == 0
    )
    gathered = tmp_path / "mg"
    _must_gather(home, "orig", gathered)
    forecasts = []
    for reboot in (60, 3600):
        events = [
            _event(node, reason, at)
            for i, node in enumerate(("worker-0", "worker-1"))
            for reason, at in (("OSUpdateStarted", 0), ("Reboot", 100), ("NodeReady", 100 + reboot))
        ]
        path = gathered / "namespaces" / "default" / "core" / "events.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "EventList", "items": events}))
        name = f"t{reboot}"
        assert run_cli(["cluster", "import", name, "--from", str(gathered)], home).exit_code == 0
        found = run_cli(
            ["upgrade", "--cluster", name, "--to", "4.14.27", "--preflight", "-o", "json"], home
        )
        forecasts.append(json.loads(found.stdout)["forecast"]["seconds"]["low"])
    assert forecasts[1] > forecasts[0] + 3 * 3000


def _event(node: str, reason: str, offset: int) -> dict[str, Any]:
    from kupgrade.versions.times import rfc3339  # noqa: PLC0415

    stamp = rfc3339(1714730000 + offset)  # a day before the profile's start
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{node}.{reason}", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": node},
        "reason": reason,
        "message": reason,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "type": "Normal",
    }


PLATFORMS = {
    "gdc": (
        ["--platform", "gdc", "--role", "standalone", "--version", "1.28.500-gke.120"],
        ["--to", "1.29.100-gke.251"],
    ),
    "kubernetes": (
        ["--platform", "kubernetes", "--version", "v1.30.4", "--control-planes", "1"],
        ["--to", "v1.31.2", "--available", "v1.30.9,v1.31.2"],
    ),
}


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_a_twin_of_each_platform_rehearses_as_its_cluster_does(
    tmp_path: Path, platform: str
) -> None:
    create, upgrade = PLATFORMS[platform]
    home = tmp_path / "home"
    made = run_cli(["cluster", "create", "orig", *create, "--workers", "3"], home)
    assert made.exit_code == 0, made.stderr
    with served_api(home, "orig", "--no-controllers") as (_, info):
        live = run_cli(
            ["cluster", "import", "live", "--kubeconfig", info["kubeconfig"], "-o", "json"], home
        )
    assert live.exit_code == 0, live.stderr
    assert json.loads(live.stdout)["platform"] == platform
    timelines = []
    for name in ("orig", "live"):
        asked = run_cli(["upgrade", "--cluster", name, *upgrade], home)
        assert asked.exit_code == 0, asked.stderr
        ran = run_cli(["controller", "run", "--cluster", name, "-o", "json"], home)
        assert ran.exit_code == 0, ran.stderr
        # A distributed-cloud cluster's own name is in its objects (cluster/NAME, its
        # control-plane NodePool): the twin's is its own.
        timelines.append(json.loads(ran.stdout.replace(f'/{name}"', '/NAME"'))["timeline"])
    assert timelines[0] and timelines[1] == timelines[0]
