"""`upgrade status` on oc's own captured clusters (../shared/peer/oc/status-examples,
openshift/oc pkg/cli/admin/upgrade/status/examples): each capture read as `oc adm
upgrade status --mock-clusterversion` reads it (views/upgrade_status.py read_capture, an
in-memory cluster) and printed as oc printed it, word for word and space for space, plain
and with `--details=all`.

Every capture must match exactly: its alerts (NAME-alerts.json) read as oc reads them,
its pools in the capture's order, tables realigned after a multi-line cell, and oc's
shortDuration of a sub-second duration ("368.975µs" shown as 6m8s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kupgrade.errors import InputError
from kupgrade.views.upgrade_status import assess, read_capture, read_objects
from kupgrade.views.upgrade_status_text import render
from tests.support.conformance import SHARED

EXAMPLES = SHARED / "peer" / "oc" / "status-examples"
CAPTURES = sorted(p.name.removesuffix("-cv.yaml") for p in EXAMPLES.glob("*-cv.yaml"))
# What kupgrade does not print as oc does yet (plain, detailed):
needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"{EXAMPLES} not found")


def _shown(name: str, details: set[str]) -> str:
    api = read_capture(EXAMPLES / f"{name}-cv.yaml")
    return render(assess(read_objects(api), api.now()), details)


@needs_examples
@pytest.mark.parametrize("name", CAPTURES)
@pytest.mark.parametrize(
    ("form", "details", "suffix"),
    [
        ("plain", set(), ".output"),
        ("detailed", {"nodes", "operators", "health"}, ".detailed-output"),
    ],
)
def test_upgrade_status_prints_what_oc_printed(
    name: str, form: str, details: set[str], suffix: str
) -> None:
    expected = EXAMPLES / f"{name}{suffix}"
    if not expected.exists():
        pytest.skip(f"oc has no {suffix} for {name}")
    shown = _shown(name, details)
    assert shown == expected.read_text()


@needs_examples
def test_every_capture_is_tested() -> None:
    assert len(CAPTURES) >= 13


def test_a_capture_names_its_files_and_needs_them(tmp_path: Path) -> None:
    bare = tmp_path / "cluster.yaml"
    bare.write_text("kind: ClusterVersion\nmetadata: {name: version}\n")
    with pytest.raises(InputError, match=r"NAME-cv\.yaml"):
        read_capture(bare)
    cv = tmp_path / "c-cv.yaml"
    cv.write_text("kind: ClusterVersion\nmetadata: {name: version}\n")
    with pytest.raises(InputError) as missing:
        read_capture(cv)
    assert "c-co.yaml" in str(missing.value)
    for suffix in ("co", "mcp", "mc", "node"):
        (tmp_path / f"c-{suffix}.yaml").write_text("kind: List\nitems: []\n")
    (tmp_path / "c-node.yaml").write_text("kind: List\nitems: [3]\n")
    with pytest.raises(InputError, match="not a Kubernetes object"):
        read_capture(cv)
    (tmp_path / "c-node.yaml").write_text("- a list\n")
    with pytest.raises(InputError, match="is not a Kubernetes object or List"):
        read_capture(cv)
    (tmp_path / "c-node.yaml").write_text("kind: NodeList\nitems: []\n")
    assert read_capture(cv).get("ClusterVersion", "version") is not None
