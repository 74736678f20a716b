"""Fixtures the CLI tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kupgrade.updateservice.app import DEFAULT_PREFIX
from tests.support.service import running_server


@pytest.fixture(scope="module")
def upstream(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `kupgrade serve` on the sample data, over loopback: its graph URL."""
    log = tmp_path_factory.mktemp("svc") / "serve.log"
    with running_server(sample_dir / "releases", sample_dir / "graph-data", log) as server:
        yield f"{server.base}{DEFAULT_PREFIX}/graph"
