"""`upgrade --to-multi-arch` as `oc adm upgrade --to-multi-arch` asks (openshift/oc
pkg/cli/admin/upgrade/upgrade.go), and the architecture the update service is then asked
for (cluster-version-operator pkg/cvo/availableupdates.go, pkg/cincinnati/cincinnati.go)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kupgrade.cluster.clusterversion import architectures
from kupgrade.cluster.fake import MemoryBackend
from kupgrade.errors import InputError
from kupgrade.sim.openshift.multiarch import MultiArchAsk, request_multi_arch
from tests.support.cli import kupgrade


def _cv(**status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"channel": "stable-4.14", "clusterID": "01234567-0123-0123-0123-0123456789ab"},
        "status": {"desired": {"version": "4.14.1", "image": "q/r@sha256:" + "a" * 64}, **status},
    }


def test_request_keeps_accepted_risks_and_replaces_the_old_update() -> None:
    cv = _cv()
    cv["spec"]["desiredUpdate"] = {
        "version": "4.14.1",
        "image": "x",
        "acceptRisks": [{"name": "A"}],
    }
    api = MemoryBackend([cv])
    said = request_multi_arch(api, MultiArchAsk())
    written = api.get("ClusterVersion", "version")
    assert written is not None
    assert written["spec"]["desiredUpdate"] == {
        "architecture": "Multi",
        "version": "4.14.1",
        "acceptRisks": [{"name": "A"}],
    }
    assert said.lines == ["Requested update to multi cluster architecture"]
    assert architectures(written) == ("Multi", "amd64")


def test_an_update_in_progress_is_refused_unless_allowed() -> None:
    progressing = {"type": "Progressing", "status": "True", "reason": "R", "message": "m"}
    api = MemoryBackend([_cv(conditions=[progressing])])
    with pytest.raises(InputError, match="the cluster is already upgrading"):
        request_multi_arch(api, MultiArchAsk(force=True))  # --force does not bypass it
    said = request_multi_arch(api, MultiArchAsk(with_warnings=True))
    assert said.errors[0].startswith("warning: --allow-upgrade-with-warnings is bypassing:")


def test_a_cluster_without_clusterversion_is_refused() -> None:
    with pytest.raises(InputError, match="No cluster version information available"):
        request_multi_arch(MemoryBackend(), MultiArchAsk())


def test_architectures_of_a_multi_cluster() -> None:
    cv = _cv()
    cv["status"]["desired"]["architecture"] = "Multi"
    assert architectures(cv) == ("Multi", "Multi")
    assert architectures(_cv(), runtime="arm64") == ("arm64", "arm64")


def _run(home: Path, *args: str) -> Any:
    return kupgrade(*args, env={"KUPGRADE_HOME": str(home)})


def test_on_a_simulated_cluster(tmp_path: Path) -> None:
    assert _run(tmp_path, "cluster", "create", "demo").returncode == 0
    done = _run(
        tmp_path, "upgrade", "--cluster", "demo", "--to-multi-arch", "--force", "-o", "json"
    )
    assert done.returncode == 0, done.stderr
    update = json.loads(done.stdout)["desiredUpdate"]
    assert update["architecture"] == "Multi" and update["force"] is True
    assert "--force overrides cluster verification" in done.stderr
    again = _run(tmp_path, "upgrade", "--cluster", "demo", "--to-multi-arch")
    assert again.returncode == 1
    assert "Update to multi cluster architecture has already been requested" in again.stderr


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (
            ["--to", "4.14.2"],
            "--to-multi-arch may not be used with --to, --to-image, or --to-latest",
        ),
        (["--to-latest"], "may not be used with --to, --to-image, or --to-latest"),
        (["--clear"], "--clear may not be specified with any other flags"),
        (["--bmctl", "x"], "--to-multi-arch is an OpenShift request"),
    ],
)
def test_flags_it_refuses(tmp_path: Path, flags: list[str], words: str) -> None:
    assert _run(tmp_path, "cluster", "create", "demo").returncode == 0
    done = _run(tmp_path, "upgrade", "--cluster", "demo", "--to-multi-arch", *flags)
    assert done.returncode == 1
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_kubernetes_cluster_is_refused(tmp_path: Path) -> None:
    created = _run(
        tmp_path, "cluster", "create", "k8s", "--platform", "kubernetes", "--version", "v1.30.4"
    )
    assert created.returncode == 0, created.stderr
    done = _run(tmp_path, "upgrade", "--cluster", "k8s", "--to-multi-arch")
    assert done.returncode == 1 and "applies to OpenShift clusters" in done.stderr
