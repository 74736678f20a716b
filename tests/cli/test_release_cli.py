"""`kupgrade release …` as real processes, with a real registry and real GnuPG (issue 4)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import kupgrade
from tests.support.conformance import conformance_path, needs_gpg, needs_registry
from tests.support.processes import RegistryProcess
from tests.support.registrykit import tamper_layer

IMAGE = "quay.io/acme/cli@sha256:" + "1" * 64
API_VERSIONS = {
    "Job": "batch/v1",
    "CustomResourceDefinition": "apiextensions.k8s.io/v1",
    "ClusterOperator": "config.openshift.io/v1",
    "Deployment": "apps/v1",
}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryProcess]:
    with RegistryProcess(tmp_path_factory.mktemp("registry")) as process:
        yield process


def _spec_d_payload(root: Path) -> tuple[Path, dict[str, Any]]:
    """The 40-manifest payload of taskgraph.yaml spec-d/update as real files."""
    doc = yaml.safe_load(conformance_path("cvo", "taskgraph.yaml").read_text())
    case = next(c for c in doc["cases"] if c["id"] == "spec-d/update-40-manifests")
    root.mkdir()
    for task in case["input"]["tasks"]:
        kind = task["kind"]
        api = API_VERSIONS.get(kind, "v1")
        manifest = {
            "apiVersion": api,
            "kind": kind,
            "metadata": {
                "name": task["file"].removesuffix(".yaml").replace("_", "-").lower(),
                "annotations": {
                    "include.release.openshift.io/self-managed-high-availability": "true"
                },
            },
        }
        (root / task["file"]).write_text(yaml.safe_dump(manifest))
    return root, case


def _new(manifests: Path, version: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """`kupgrade release new` on a manifest directory."""
    return kupgrade(
        "release",
        "new",
        "--manifests",
        str(manifests),
        "--version",
        version,
        *extra,
        "--to-file" if out.suffix == ".tar" else "--to-dir",
        str(out),
    )


def _json(*args: str) -> Any:
    result = kupgrade(*args, "-o", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@needs_registry
@needs_gpg
def test_round_trip_on_real_parts(
    tmp_path: Path, registry: RegistryProcess, gnupg_home: tuple[str, dict[str, Path]]
) -> None:
    """Build, push, pull by digest, verify, extract, load and graph one release."""
    home, keys = gnupg_home
    manifests, case = _spec_d_payload(tmp_path / "manifests")
    tar = tmp_path / "release.tar"
    built = _new(
        manifests,
        "4.16.3",
        tar,
        "--previous",
        "4.16.2,4.15.20",
        "--metadata",
        "url=https://example.com/4.16.3",
        "--metadata",
        "io.openshift.upgrades.graph.release.channels=stable-4.16,fast-4.16",
        "--image",
        f"cli={IMAGE}",
    )
    assert built.returncode == 0, built.stderr
    digest = built.stdout.strip()
    assert digest.startswith("sha256:") and len(digest) == 71

    pushed = _json("release", "push", str(tar), f"{registry.host}/ocp/release:4.16.3")
    assert pushed["digest"] == digest
    pull_spec = pushed["pullSpec"]
    assert pull_spec == f"{registry.host}/ocp/release@{digest}"

    info = _json("release", "info", pull_spec)
    assert info["digest"] == digest and info["version"] == "4.16.3"
    assert info["previous"] == ["4.16.2", "4.15.20"]
    assert info["channels"] == ["fast-4.16", "stable-4.16"]
    assert info["manifests"]["included"] == 40
    assert info["manifests"]["by_runlevel"]["50"] == 7

    store = tmp_path / "signatures"
    signed = kupgrade(
        "release",
        "sign",
        pull_spec,
        "--key",
        "release@example.com",
        "--store",
        str(store),
        "--gnupghome",
        home,
    )
    assert signed.returncode == 0, signed.stderr
    verified = _json(
        "release", "verify", pull_spec, "--store", str(store), "--keyring", str(keys["release"])
    )
    assert verified == {"digest": digest, "verified": True, "signedBy": {"release": 1}}

    target = tmp_path / "extracted"
    assert kupgrade("release", "extract", pull_spec, "--to", str(target)).returncode == 0
    assert (target / "release-manifests" / "image-references").is_file()
    assert (target / "manifests").is_dir()

    loaded = _json("release", "manifests", str(target))
    assert loaded["total"] == 40 and loaded["versionHash"] == info["versionHash"]
    graph = _json("release", "graph", str(target), "--mode", "update")
    assert graph["nodes"] == case["expect"]["nodes"]
    assert _json("release", "graph", pull_spec, "--mode", "update")["nodes"] == graph["nodes"]


@needs_registry
def test_a_blob_changed_in_the_registry_is_refused(
    tmp_path: Path, registry: RegistryProcess
) -> None:
    manifests, _ = _spec_d_payload(tmp_path / "manifests")
    tar = tmp_path / "release.tar"
    assert _new(manifests, "2.0.0", tar).returncode == 0
    pull_spec = _json("release", "push", str(tar), f"{registry.host}/tamper/release")["pullSpec"]
    layer = _json("release", "info", pull_spec)  # readable before the change
    assert layer["version"] == "2.0.0"
    tamper_layer(registry, pull_spec)
    result = kupgrade("release", "extract", pull_spec, "--to", str(tmp_path / "out"))
    assert result.returncode == 1
    assert "was changed" in result.stderr
    assert not (tmp_path / "out").exists()


def test_manifests_command_matches_the_controller(tmp_path: Path) -> None:
    doc = yaml.safe_load(conformance_path("cvo", "payloads", "expected.yaml").read_text())
    root = conformance_path("cvo", "payloads")
    for fixture in doc["fixtures"]:
        for load in fixture["loads"]:
            o = load["options"]
            if o["capabilities"] is not None or o["enabled_feature_gates"]:
                continue
            args = [
                "release",
                "manifests",
                str(root / fixture["path"]),
                "--exclude",
                o["exclude"],
                "--profile",
                o["profile"],
                "--release-image",
                o["release_image"],
                "--feature-set",
                o["required_feature_set"] or "Default",
            ]
            got = _json(*args)
            assert got["versionHash"] == load["version_hash"], load["id"]
            assert got["total"] == load["total"]
            assert [e["reason"] for e in got["excluded"]] == [e["reason"] for e in load["excluded"]]
            assert got["release"] == load["release"]


def test_feature_gates_and_capabilities_through_the_cli(tmp_path: Path) -> None:
    fixture = conformance_path("cvo", "payloads", "featuregatetest")
    got = _json(
        "release", "manifests", str(fixture), "--feature-gates", "ExperimentalFeature,LegacyFeature"
    )
    assert got["versionHash"] == "ge54Uoy7v5o="
    payload = tmp_path / "p"
    shutil.copytree(conformance_path("cvo", "payloads", "paralleltest"), payload)
    target = payload / "release-manifests" / "0000_20_b_file.yaml"
    doc = yaml.safe_load(target.read_text())
    doc["metadata"]["annotations"]["capability.openshift.io/name"] = "Console"
    target.write_text(yaml.safe_dump(doc))
    assert _json("release", "manifests", str(payload))["total"] == 3
    limited = _json("release", "manifests", str(payload), "--capabilities", "Insights")
    assert limited["total"] == 2
    assert limited["excluded"][0]["reason"] == "disabled capabilities: Console"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--image", "cli=quay.io/acme/cli:latest"], "not pinned by digest"),
        (["--previous", "4.1"], "No Major.Minor.Patch elements found"),
    ],
)
def test_new_refuses_bad_input(tmp_path: Path, extra: list[str], message: str) -> None:
    manifests, _ = _spec_d_payload(tmp_path / "m")
    result = _new(manifests, "1.0.0", tmp_path / "r.tar", *extra)
    assert result.returncode == 1
    assert message in result.stderr
    assert not (tmp_path / "r.tar").exists()


def test_new_refuses_a_manifest_the_cluster_could_not_load(tmp_path: Path) -> None:
    manifests, _ = _spec_d_payload(tmp_path / "m")
    (manifests / "0000_50_broken_01.yaml").write_text("kind: ConfigMap\nmetadata: {}\n")
    result = _new(manifests, "1.0.0", tmp_path / "r.tar")
    assert result.returncode == 1
    assert "0000_50_broken_01.yaml" in result.stderr and "kind and name" in result.stderr
    assert not (tmp_path / "r.tar").exists()


def test_graph_modes_through_the_cli(tmp_path: Path) -> None:
    manifests, _ = _spec_d_payload(tmp_path / "m")
    layout = tmp_path / "layout"
    assert _new(manifests, "1.0.0", layout).returncode == 0
    install = _json("release", "graph", str(layout), "--mode", "install")
    assert install["workers"] == len(install["nodes"]) and install["total"] == 40
    reconcile = [
        _json("release", "graph", str(layout), "--mode", "reconcile", "--attempt", str(n))["nodes"]
        for n in (0, 1, 8)
    ]
    assert reconcile[0] == reconcile[2] and reconcile[0] != reconcile[1]
    assert kupgrade("release", "graph", str(layout), "--mode", "sideways").returncode == 1


def test_raw_bytes_on_request() -> None:
    doc = yaml.safe_load(conformance_path("cvo", "payloads", "expected.yaml").read_text())
    load = next(f for f in doc["fixtures"] if f["fixture"] == "payloadtest-3")["loads"][0]
    got = _json(
        "release", "manifests", str(conformance_path("cvo", "payloads", "payloadtest-3")), "--raw"
    )
    assert [m["raw"] for m in got["included"]] == [m["raw"] for m in load["included"]]
    assert got["version_hash"] == got["versionHash"] == load["version_hash"]


@needs_gpg
def test_verify_refuses_another_key_with_the_reason(
    tmp_path: Path, gnupg_home: tuple[str, dict[str, Path]]
) -> None:
    home, keys = gnupg_home
    manifests, _ = _spec_d_payload(tmp_path / "m")
    layout = tmp_path / "layout"
    digest = _new(manifests, "1.0.0", layout).stdout.strip()
    store = tmp_path / "sigs"
    assert (
        kupgrade(
            "release",
            "sign",
            str(layout),
            "--key",
            "other@example.com",
            "--store",
            str(store),
            "--gnupghome",
            home,
        ).returncode
        == 0
    )
    result = kupgrade(
        "release",
        "verify",
        str(layout),
        "--store",
        str(store),
        "--keyring",
        str(keys["release"]),
        "-o",
        "json",
    )
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["verified"] is False
    assert doc["error"] == f"unable to verify {digest} against keyrings: release"
    assert any("not in the keyring" in line for line in doc["details"])


def test_verify_a_pinned_pull_spec_without_the_network() -> None:
    """The digest is all a signature is about: nothing listens on 127.0.0.1:9, and the
    release still verifies from the local store."""
    root = conformance_path("cvo", "signatures")
    digest = "sha256:e3f12513a4b22a2d7c0e7c9207f52128113758d9d68c7d06b11a0ac7672966f7"
    done = kupgrade(
        "release",
        "verify",
        f"127.0.0.1:9/ocp/release@{digest}",
        "--store",
        str(root / "signatures"),
        "--keyring",
        str(root / "keyrings" / "redhat.txt"),
        "-o",
        "json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["digest"] == digest


def test_new_keeps_the_directorys_own_release_metadata(tmp_path: Path) -> None:
    """Nothing the directory says is dropped: the flags add to its release-metadata and
    image-references and win where both speak."""
    manifests, _ = _spec_d_payload(tmp_path / "manifests")
    (manifests / "release-metadata").write_text(
        json.dumps(
            {
                "kind": "cincinnati-metadata-v0",
                "version": "4.16.3",
                "previous": ["4.16.1"],
                "metadata": {"url": "https://old.example.com", "keep": "me"},
            }
        )
    )
    built = _new(
        manifests,
        "4.16.3",
        tmp_path / "r.tar",
        "--previous",
        "4.16.2",
        "--metadata",
        "url=https://new.example.com",
        "--image",
        f"cli={IMAGE}",
    )
    assert built.returncode == 0, built.stderr
    info = _json("release", "info", str(tmp_path / "r.tar"))
    assert info["previous"] == ["4.16.1", "4.16.2"]
    assert info["metadata"] == {"url": "https://new.example.com", "keep": "me"}

    disagree = _new(manifests, "4.17.0", tmp_path / "s.tar")
    assert disagree.returncode == 1
    assert "says version 4.16.3 but --version is 4.17.0" in disagree.stderr
    assert not (tmp_path / "s.tar").exists()
