"""Every rule id a user can meet in kupgrade's output can be looked up with `explain`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from kupgrade.cli.main import app
from kupgrade.skew.explain import RULES, lookup
from tests.support.conformance import REPO, conformance_path

ID = re.compile(r'"(G[2-4]\.[a-z-]+|H[1-7](?:\.[a-z-]+)?|P\d{1,2})"')


def test_every_id_the_code_emits_is_explained() -> None:
    emitted = {
        m
        for path in (REPO / "kupgrade").rglob("*.py")
        if path.name != "explain.py"  # its docstrings name prefixes as examples
        for m in ID.findall(path.read_text())
    }
    assert len(emitted) >= 35
    assert emitted <= set(RULES), sorted(emitted - set(RULES))


def test_every_canonical_id_of_the_conformance_readme_is_explained() -> None:
    readme = Path(conformance_path("skew", "README.md")).read_text()
    table = re.findall(r"^\| `([GH]\d(?:\.[a-z-]+)?)` \|", readme, re.M)
    assert len(table) >= 25
    assert set(table) <= set(RULES), sorted(set(table) - set(RULES))


def test_explain_by_id_by_prefix_and_all() -> None:
    assert [r.id for r in lookup("H3")] == ["H3.newer", "H3.older"]
    assert [r.id for r in lookup("P10")] == ["P10"]
    assert lookup("H3.old") == []
    shown = CliRunner().invoke(app, ["explain", "G3.users-first"])
    assert shown.exit_code == 0 and shown.stdout.startswith("G3.users-first (refusal): ")
    every = json.loads(CliRunner().invoke(app, ["explain", "-o", "json"]).stdout)
    assert [r["id"] for r in every] == list(RULES)
    missing = CliRunner().invoke(app, ["explain", "Z1"])
    assert missing.exit_code == 1 and "lists every rule id" in missing.stderr


def test_a_refusal_points_to_explain(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("clusters:\n  a: {version: '1.28.500-gke.120', role: admin}\n")
    result = CliRunner().invoke(
        app, ["skew", "check-step", str(fleet), "--step", "cluster/a -> 1.16.9"]
    )
    assert result.exit_code == 1
    assert "G3.downgrade" in result.stdout
    assert "kupgrade explain G3.downgrade" in result.stderr
