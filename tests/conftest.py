"""Fixtures only (helpers live in tests/support/): the sample dataset, a `kupgrade serve`
on the conformance e2e data, and a GnuPG home with signing keys."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kupgrade.sim.sample import write_sample
from tests.support.conformance import conformance_path
from tests.support.service import Server, running_server


@pytest.fixture(scope="session")
def e2e_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The server http-cases.yaml describes: synthetic-raw.json + graph-data-134475077."""
    releases = conformance_path("cincinnati", "e2e", "synthetic-raw.json")
    graph_data = conformance_path("cincinnati", "e2e", "graph-data-134475077")
    with running_server(
        releases, graph_data, tmp_path_factory.mktemp("serve") / "serve.log"
    ) as server:
        yield server


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:

    return write_sample(tmp_path_factory.mktemp("sample") / "data")


@pytest.fixture(scope="session")
def gnupg_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Path]]]:
    """A GnuPG home with two unprotected signing keys; their public keyrings exported."""
    home = tmp_path_factory.mktemp("gnupg")
    home.chmod(0o700)
    exported: dict[str, Path] = {}
    for who in ("release", "other"):
        subprocess.run(
            [
                "gpg",
                "--homedir",
                str(home),
                "--batch",
                "--pinentry-mode",
                "loopback",
                "--passphrase",
                "",
                "--quick-gen-key",
                f"{who} <{who}@example.com>",
                "ed25519",
                "sign",
                "1y",
            ],
            check=True,
            capture_output=True,
        )
        exported[who] = home / f"{who}.asc"
        exported[who].write_bytes(
            subprocess.run(
                ["gpg", "--homedir", str(home), "--armor", "--export", f"{who}@example.com"],
                check=True,
                capture_output=True,
            ).stdout
        )
    yield str(home), exported
    subprocess.run(
        ["gpgconf", "--homedir", str(home), "--kill", "all"], check=False, capture_output=True
    )
