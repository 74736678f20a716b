"""Fuzzing the kubeconfig reader (cluster/kubeconfig.py) with mutated kubeconfigs of the
shapes users have: a token, client certificates, an exec credential plugin of each API
version, several contexts. The property: a kubeconfig a client can take, or one line
naming the file (an InputError), never another exception or a hang.

Mutated exec commands are never run: the plugin's process is replaced by one that
answers with a fixed credential (a mutated command line must not be executed on this
machine), the one fault here not caused for real."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from kupgrade.cluster import kubeconfig
from kupgrade.errors import KupgradeError
from tests.support.fuzzkit import fuzz, mutated, swapped

CREDENTIAL = b'{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": "x"}}'
SEEDS: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "c",
                "cluster": {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True},
            }
        ],
        "contexts": [
            {"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "default"}}
        ],
        "current-context": "x",
        "users": [{"name": "u", "user": {"token": "t0ken"}}],
    },
    {
        "apiVersion": "v1",
        "clusters": [
            {
                "name": "gke",
                "cluster": {"server": "https://34.1.2.3", "certificate-authority-data": "Zm9v"},
            }
        ],
        "contexts": [
            {"name": "gke", "context": {"cluster": "gke", "user": "gke"}},
            {"name": "other", "context": {"cluster": "gke", "user": "cert"}},
        ],
        "current-context": "gke",
        "users": [
            {
                "name": "gke",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "gke-gcloud-auth-plugin",
                        "args": ["--flag"],
                        "env": [{"name": "A", "value": "b"}],
                        "installHint": "install it",
                        "provideClusterInfo": True,
                    }
                },
            },
            {
                "name": "cert",
                "user": {"client-certificate-data": "Zm9v", "client-key-data": "YmFy"},
            },
        ],
    },
]


def _fake_plugin(argv: list[str], **_: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.CompletedProcess(argv, 0, CREDENTIAL, b"")


def test_fuzz_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kubeconfig.subprocess, "run", _fake_plugin)
    target = tmp_path / "kubeconfig"
    seeds = [yaml.safe_dump(doc).encode() for doc in SEEDS]

    def read(data: bytes) -> None:
        target.write_bytes(data)
        loaded = kubeconfig.load_kubeconfig(target)
        assert isinstance(loaded.doc, dict)

    def read_doc(doc: Any) -> None:
        read(yaml.safe_dump(doc).encode())

    fuzz("kubeconfig", mutated(seeds), read, (KupgradeError,), 0.5)
    fuzz("kubeconfig-types", swapped(SEEDS), read_doc, (KupgradeError,), 0.5)
