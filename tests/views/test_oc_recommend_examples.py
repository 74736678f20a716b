"""`upgrade recommend` on oc's own examples (../shared/peer/oc/recommend-examples,
openshift/oc pkg/cli/admin/upgrade/recommend/examples): each NAME-cv.yaml read as `oc adm
upgrade recommend --mock-clusterversion examples/NAME-cv.yaml` reads it (the alerts from
examples/NAME-alerts.json when there is one) and printed as oc printed it, word for word:
plain (.output), with --show-outdated-releases and with --version V (.version-V-output).
As examples_test.go does, a run that ends in an error is compared as its standard output,
a blank line, "error: " and the error; standard error is not compared."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kupgrade.views.recommend_capture import mock_checks, read_clusterversion
from kupgrade.views.upgrade_recommend import Asked, recommend
from tests.support.conformance import SHARED

EXAMPLES = SHARED / "peer" / "oc" / "recommend-examples"
NAMES = sorted(p.name.removesuffix("-cv.yaml") for p in EXAMPLES.glob("*-cv.yaml"))
needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"{EXAMPLES} not found")


def _forms() -> list[tuple[str, str, Asked]]:
    """Every golden beside a capture, with the flags it was made with."""
    found = []
    for name in NAMES:
        for golden in sorted(EXAMPLES.glob(f"{name}.*output")):
            form = golden.name.removeprefix(f"{name}.")
            if form == "output":
                asked = Asked()
            elif form == "show-outdated-releases-output":
                asked = Asked(show_outdated=True)
            else:
                version = form.removeprefix("version-").removesuffix("-output")
                asked = Asked(version=version)
            found.append((name, form, asked))
    return found


@pytest.fixture
def in_examples(tmp_path: Path) -> Iterator[Path]:
    """A directory where examples/ is oc's examples folder: the alerts path oc prints is
    relative, as its test runs it."""
    (tmp_path / "examples").symlink_to(EXAMPLES, target_is_directory=True)
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(here)


@needs_examples
@pytest.mark.parametrize(("name", "form", "asked"), _forms(), ids=lambda v: str(v)[:40])
def test_recommend_prints_what_oc_printed(
    in_examples: Path, name: str, form: str, asked: Asked
) -> None:
    cv_path = f"examples/{name}-cv.yaml"
    shown = recommend(read_clusterversion(Path(cv_path)), mock_checks(cv_path), asked)
    printed = shown.out if shown.error is None else f"{shown.out}\nerror: {shown.error}\n"
    assert printed == (EXAMPLES / f"{name}.{form}").read_text()


@needs_examples
def test_every_example_has_its_three_forms() -> None:
    assert len(NAMES) >= 5
    assert len(_forms()) >= 3 * len(NAMES)
