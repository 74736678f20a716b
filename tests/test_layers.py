"""The rooms of ARCHITECTURE.md hold (issue 18): the import-linter contract in
pyproject.toml passes on the package, and fails on a copy of it with one upward import."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")

needs_linter = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={"PYTHONPATH": str(root), "PATH": str(Path(sys.executable).parent)},
    )


@needs_linter
def test_the_package_keeps_its_layers() -> None:
    done = _lint(REPO)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "KEPT" in done.stdout


@needs_linter
def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    shutil.copytree(REPO / "kupgrade", tmp_path / "kupgrade")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    backend = tmp_path / "kupgrade" / "cluster" / "backend.py"
    backend.write_text(backend.read_text() + "\nimport kupgrade.sim.loop  # upward\n")
    done = _lint(tmp_path)
    assert done.returncode != 0
    assert "kupgrade.cluster is not allowed to import kupgrade.sim" in done.stdout
