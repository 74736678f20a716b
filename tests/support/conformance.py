"""Conformance data in ../shared, read at run time and never copied: paths, documents,
one pytest param per case, and the markers for what the machine lacks."""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.caseuse import case_params

REPO = Path(__file__).resolve().parents[2]

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
    param when the data is absent. Each case is tracked: a test that leaves one of its
    fields unread fails (tests/support/caseuse.py)."""
    try:
        return case_params(conformance_doc(*parts)[section], where=where)
    except pytest.skip.Exception:
        return [pytest.param(None, id=f"{section}-absent")]


def need_case(case: Any, *parts: str) -> dict[str, Any]:
    """The case, or a skip naming the missing data file when it was absent at collection."""
    if case is None:
        conformance_path(*parts)
    assert isinstance(case, dict)
    return case


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
