"""End to end on real parts (issue 5): the update service on loopback recommends a release
held in a real registry and signed with GnuPG; a simulated cluster asks the service,
verifies the signature, pulls the release by digest and upgrades, all through the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kupgrade.sim.openshift.releases import build_release, rendered_config
from kupgrade.sim.profile import Spec
from kupgrade.updateservice.app import DEFAULT_PREFIX
from tests.support.cli import kupgrade
from tests.support.conformance import needs_gpg, needs_registry
from tests.support.processes import RegistryProcess
from tests.support.service import running_server

FROM, TO = "4.13.40", "4.14.27"
CHANNEL = "stable-4.14"


def _json(home: Path, *args: str) -> Any:
    done = kupgrade(*args, env={"KUPGRADE_HOME": str(home)})
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[RegistryProcess]:
    with RegistryProcess(tmp_path / "registry") as process:
        yield process


def _publish(tmp_path: Path, registry: RegistryProcess, gnupg: str) -> tuple[str, Path]:
    """Build the next release, push it, sign its digest; return pull spec and signatures."""
    layout = tmp_path / "layout"
    build_release(Spec(), TO, layout)
    pushed = _json(
        tmp_path, "release", "push", str(layout), f"{registry.host}/ocp/release:{TO}", "-o", "json"
    )
    signatures = tmp_path / "signatures"
    signed = kupgrade(
        "release",
        "sign",
        pushed["pullSpec"],
        "--key",
        "release@example.com",
        "--store",
        str(signatures),
        "--gnupghome",
        gnupg,
    )
    assert signed.returncode == 0, signed.stderr
    return str(pushed["pullSpec"]), signatures


def _graph_data(tmp_path: Path, target: str) -> tuple[Path, Path]:
    releases = tmp_path / "releases"
    releases.mkdir()
    for version, previous, payload in (
        (FROM, [], "sim.kupgrade.local/ocp-release@sha256:" + "0" * 64),
        (TO, [FROM], target),
    ):
        doc = {
            "kind": "cincinnati-metadata-v0",
            "version": version,
            "previous": previous,
            "next": [],
            "metadata": {},
            "payload": payload,
            "architecture": "amd64",
        }
        (releases / f"{version}.json").write_text(json.dumps(doc))
    data = tmp_path / "graph-data"
    (data / "channels").mkdir(parents=True)
    (data / "raw").mkdir()
    (data / "blocked-edges").mkdir()
    (data / "raw" / "metadata.json").write_text("{}\n")
    (data / "version").write_text("1.1.0\n")
    (data / "channels" / f"{CHANNEL}.yaml").write_text(
        f"name: {CHANNEL}\nversions:\n- {FROM}\n- {TO}\n"
    )
    return releases, data


def _profile(tmp_path: Path, upstream: str, keyring: Path, signatures: Path) -> Path:
    profile = tmp_path / f"{keyring.stem}.yaml"
    profile.write_text(
        f"spec:\n  version: {FROM}\n  channel: {CHANNEL}\n  upstream: {upstream}\n"
        "  pools:\n  - {name: master, nodes: 3}\n  - {name: worker, nodes: 3, maxUnavailable: 2}\n"
        f"  verification: {{keyring: {keyring}, store: {signatures}}}\n"
    )
    return profile


@needs_registry
@needs_gpg
def test_update_service_signed_release_registry_and_cluster(
    tmp_path: Path, registry: RegistryProcess, gnupg_home: tuple[str, dict[str, Path]]
) -> None:
    gnupg, keys = gnupg_home
    target, signatures = _publish(tmp_path, registry, gnupg)
    releases, data = _graph_data(tmp_path, target)
    with running_server(releases, data, tmp_path / "serve.log") as service:
        upstream = f"{service.base}{DEFAULT_PREFIX}/graph"
        good = _profile(tmp_path, upstream, keys["release"], signatures)
        bad = _profile(tmp_path, upstream, keys["other"], signatures)
        _json(tmp_path, "cluster", "create", "good", "--profile", str(good), "-o", "json")
        _json(tmp_path, "cluster", "create", "bad", "--profile", str(bad), "-o", "json")

        status = _json(tmp_path, "upgrade", "--cluster", "good", "-o", "json")["status"]
        assert [u["version"] for u in status["availableUpdates"]] == [TO]
        assert status["availableUpdates"][0]["image"] == target
        _json(tmp_path, "upgrade", "--cluster", "good", "--to", TO, "-o", "json")
        _json(tmp_path, "upgrade", "--cluster", "bad", "--to", TO, "-o", "json")
        report = _json(tmp_path, "controller", "run", "--cluster", "good", "-o", "json")
        assert report["outcome"] == "completed"
        # The controller kept asking the service while it ran (SPEC A3): at TO the graph
        # offers nothing newer.
        cv = _json(tmp_path, "get", "clusterversion", "--cluster", "good", "-o", "json")
        status = cv["items"][0]["status"]
        retrieved = next(c for c in status["conditions"] if c["type"] == "RetrievedUpdates")
        assert retrieved["status"] == "True" and not status.get("availableUpdates")
        cv = _json(tmp_path, "get", "clusterversion", "--cluster", "good", "-o", "json")["items"][0]
        newest = cv["status"]["history"][0]
        assert (newest["state"], newest["version"], newest["image"], newest["verified"]) == (
            "Completed",
            TO,
            target,
            True,
        )
        operators = _json(tmp_path, "get", "clusteroperators", "--cluster", "good", "-o", "json")
        assert {o["status"]["versions"][0]["version"] for o in operators["items"]} == {TO}
        nodes = _json(tmp_path, "get", "nodes", "--cluster", "good", "-o", "json")["items"]
        for node in nodes:
            pool = (
                "master"
                if "node-role.kubernetes.io/master" in node["metadata"]["labels"]
                else "worker"
            )
            notes = node["metadata"]["annotations"]
            assert notes["machineconfiguration.openshift.io/currentConfig"] == rendered_config(
                pool, TO
            )
            assert notes["machineconfiguration.openshift.io/state"] == "Done"

    # The same release, but the cluster trusts another key: refused with the reason, tried
    # again as the controller retries, and the run ends failing (exit 1) with that reason.
    done = kupgrade(
        "controller",
        "run",
        "--cluster",
        "bad",
        "--until",
        "idle",
        "-o",
        "json",
        env={"KUPGRADE_HOME": str(tmp_path)},
    )
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["outcome"] == "failing"
    assert "cluster bad is left failing: " in done.stderr
    assert "The update cannot be verified" in done.stderr
    cv = _json(tmp_path, "get", "clusterversion", "--cluster", "bad", "-o", "json")["items"][0]
    accepted = next(c for c in cv["status"]["conditions"] if c["type"] == "ReleaseAccepted")
    assert (accepted["status"], accepted["reason"]) == ("False", "RetrievePayload")
    assert "The update cannot be verified" in accepted["message"]
    assert target in accepted["message"]
    assert [h["version"] for h in cv["status"]["history"]] == [FROM]
    operators = _json(tmp_path, "get", "clusteroperators", "--cluster", "bad", "-o", "json")
    assert {o["status"]["versions"][0]["version"] for o in operators["items"]} == {FROM}
