"""Shared fixtures: the conformance data in ../shared (read at run time, never copied) and
a real `kupgrade serve` process on loopback."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kupgrade.service.process import ServiceProcess

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KUPGRADE_SHARED", REPO.parent / "shared"))
CONFORMANCE = SHARED / "conformance"
CINCINNATI = CONFORMANCE / "cincinnati"


def conformance_path(*parts: str) -> Path:
    """A path under ../shared/conformance; skips the test with a clear reason if absent."""
    path = CONFORMANCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(
            f"conformance data not found at {path} (set KUPGRADE_SHARED to the shared checkout)"
        )
    return path


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
    from kupgrade.graph.sample import write_sample

    return write_sample(tmp_path_factory.mktemp("sample") / "data")
