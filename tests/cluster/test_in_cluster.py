"""In a pod, with no kubeconfig: the pod's service account, as client-go's
rest.InClusterConfig reads it (KUBERNETES_SERVICE_HOST/PORT, the token file read again as
the kubelet rotates it, ca.crt, the namespace), against a served simulated cluster."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from kupgrade.cluster import kubeconfig
from kupgrade.cluster.kube import USER_AGENT
from kupgrade.cluster.kubeconfig import TokenFile, in_cluster
from kupgrade.cluster.remote import InformedBackend
from kupgrade.errors import InputError
from kupgrade.sim.create import create_cluster
from kupgrade.sim.profile import Profile
from tests.cli.test_controller_deploy import _spec
from tests.support.processes import served_api


def _account(tmp_path: Path, token: str, ca: bytes | None, namespace: str = "kube-system") -> Path:
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text(token + "\n")
    (account / "namespace").write_text(namespace)
    if ca is not None:
        (account / "ca.crt").write_bytes(ca)
    return account


def test_the_pods_service_account_reaches_the_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_cluster(tmp_path, "c", Profile(spec=_spec("kubernetes")))
    audit = tmp_path / "audit.jsonl"
    with served_api(tmp_path, "c", "--no-controllers", "--audit-log", str(audit)) as (_, info):
        doc = yaml.safe_load(Path(info["kubeconfig"]).read_text())
        token = doc["users"][0]["user"]["token"]
        ca = base64.b64decode(doc["clusters"][0]["cluster"]["certificate-authority-data"])
        account = _account(tmp_path, token, ca)
        monkeypatch.setattr(kubeconfig, "SERVICE_ACCOUNT", account)
        monkeypatch.delenv("KUBECONFIG", raising=False)
        monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.kube/config
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
        monkeypatch.setenv("KUBERNETES_SERVICE_PORT", info["server"].rsplit(":", 1)[1])
        api = InformedBackend()
        try:
            assert api.where == f"the pod's service account ({info['server']})"
            assert api.now() > 0 and api.get("Node", "nonexistent") is None
        finally:
            api.close()
    said = audit.read_text()
    assert f'"userAgent":"{USER_AGENT}"' in said  # client-go's form: kupgrade/vX (os/arch)


def test_out_of_a_pod_there_is_no_in_cluster_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    assert in_cluster() is None  # ErrNotInCluster: a kubeconfig is asked for instead


@pytest.mark.parametrize("host", ["10.96.0.1", "fd00::1"])
def test_the_server_is_the_service_host_and_port(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    found = in_cluster(_account(tmp_path, "t0k", None, "tenant"))
    assert found is not None
    assert found.server == ("https://[fd00::1]:443" if ":" in host else "https://10.96.0.1:443")
    (cluster,) = found.doc["clusters"]
    assert "certificate-authority" not in cluster["cluster"]  # none mounted: went on without
    assert found.doc["contexts"][0]["context"]["namespace"] == "tenant"
    assert found.doc["users"][0]["user"]["token"] == "t0k"


def test_an_unreadable_or_empty_token_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    with pytest.raises(InputError, match=r"service account's .*token cannot be read"):
        in_cluster(tmp_path / "none")
    with pytest.raises(InputError, match=r"token .* is empty") as raised:
        in_cluster(_account(tmp_path, "", None))
    assert raised.value.field == "--kubeconfig"


def test_the_token_file_is_read_again_each_minute(tmp_path: Path) -> None:
    now = [0.0]
    path = tmp_path / "token"
    path.write_text("first")
    auth = TokenFile(path, "first", lambda: now[0])
    path.write_text("second\n")  # the kubelet rotates it
    now[0] = 59
    assert auth.current() == "first"
    now[0] = 60
    assert auth.current() == "second"
    path.unlink()
    now[0] = 200
    assert auth.current() == "second"  # a failed read keeps the last token
