"""Shared fixtures: the conformance data in ../shared (read at run time, never copied) and
a real `kupgrade serve` process on loopback."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kupgrade.service.process import ServiceProcess
from kupgrade.sim.sample import write_sample

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KUPGRADE_SHARED", REPO.parent / "shared"))
CONFORMANCE = SHARED / "conformance"
CINCINNATI = CONFORMANCE / "cincinnati"


def conformance_doc(*parts: str) -> dict[str, Any]:
    """A conformance YAML file, read once per test session."""
    return _read_doc(parts)


@functools.cache
def _read_doc(parts: tuple[str, ...]) -> dict[str, Any]:
    return dict(yaml.safe_load(conformance_path(*parts).read_text()))


def conformance_cases(
    section: str, *parts: str, where: Callable[[dict[str, Any]], bool] | None = None
) -> list[Any]:
    """One pytest param per case of `section` (those `where` keeps), by id; one skipping
    param when the data is absent."""
    try:
        return [
            pytest.param(case, id=case["id"])
            for case in conformance_doc(*parts)[section]
            if where is None or where(case)
        ]
    except pytest.skip.Exception:
        return [pytest.param(None, id=f"{section}-absent")]


def need_case(case: Any, *parts: str) -> dict[str, Any]:
    """The case, or a skip naming the missing data file when it was absent at collection."""
    if case is None:
        conformance_path(*parts)
    return dict(case)


def conformance_path(*parts: str) -> Path:
    """A path under ../shared/conformance; skips the test with a clear reason if absent."""
    path = CONFORMANCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(
            f"conformance data not found at {path} (set KUPGRADE_SHARED to the shared checkout)"
        )
    return path


needs_registry = pytest.mark.skipif(
    shutil.which("docker-registry") is None,
    reason="Debian's docker-registry is not installed; .ci/run installs it",
)
needs_gpg = pytest.mark.skipif(shutil.which("gpg") is None, reason="GnuPG is not installed")


class Server(ServiceProcess):
    """A `kupgrade serve` child process for tests."""


@contextlib.contextmanager
def running_server(
    releases: Path, graph_data: Path, log: Path, *extra: str, expect_ready: bool = True
) -> Iterator[Server]:
    """Started and answering: /readyz, or only /livez when the graph is expected to fail."""
    with Server(releases, graph_data, log, *extra) as server:
        server.wait_for("/readyz" if expect_ready else "/livez")
        yield server


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
            ["gpg", "--homedir", str(home), "--batch", "--pinentry-mode", "loopback", "--passphrase", "",
             "--quick-gen-key", f"{who} <{who}@example.com>", "ed25519", "sign", "1y"],
            check=True, capture_output=True,
        )  # fmt: skip
        exported[who] = home / f"{who}.asc"
        exported[who].write_bytes(
            subprocess.run(
                ["gpg", "--homedir", str(home), "--armor", "--export", f"{who}@example.com"],
                check=True, capture_output=True,
            ).stdout
        )  # fmt: skip
    yield str(home), exported
    subprocess.run(
        ["gpgconf", "--homedir", str(home), "--kill", "all"], check=False, capture_output=True
    )
