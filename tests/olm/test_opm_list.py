"""`kupgrade olm list packages|channels|bundles` against opm's own list tests
(../shared/peer/operator-registry/cases.yaml `list_cases`, operator-registry
alpha/action/list_test.go on testdata/list-index), word for word; Go's tabwriter layout;
bad inputs as one line and a non-zero exit; `olm heads --package`."""

from __future__ import annotations

import functools
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.outputs.tabwriter import tabwrite
from tests.support.caseuse import case_params
from tests.support.cli import kupgrade
from tests.support.conformance import SHARED
from tests.support.olmkit import write_blobs, write_files

PEER = SHARED / "peer" / "operator-registry"
LIST_INDEX = PEER / "list-index"


@functools.cache
def _cases() -> list[dict[str, Any]]:
    path = PEER / "cases.yaml"
    if not path.exists():
        return []
    return list(yaml.safe_load(path.read_text())["list_cases"])


def _list_params() -> list[Any]:
    params = case_params(_cases())
    return params or [pytest.param(None, id="list_cases-absent")]


@pytest.mark.parametrize("case", _list_params())
def test_list_case(case: Any) -> None:
    if case is None:
        pytest.skip(f"opm's list cases not found under {PEER}")
    # SPEC F1: `list/<what>/...`: the id names the subcommand opm's test ran.
    what = case["id"].split("/")[1]
    given_input = case["input"]
    catalog = str(PEER / given_input["catalog"])
    package = [given_input["package"]] if "package" in given_input else []
    expect = case["expect"]
    table = kupgrade("olm", "list", what, catalog, *package)
    if "error" in expect:
        assert table.returncode == 1
        assert table.stdout == ""
        lines = table.stderr.splitlines()
        assert len(lines) == 1
        assert lines[0] == f"error: {expect['error']}"
        assert case.get("golden") is None
        return
    assert table.returncode == 0, table.stderr
    assert table.stdout == case["golden"]
    rows = json.loads(kupgrade("olm", "list", what, catalog, *package, "-o", "json").stdout)
    if "heads" in expect:
        heads: dict[str, dict[str, str]] = {}
        for row in rows:
            heads.setdefault(row["package"], {})[row["channel"]] = row["head"]
        assert heads == expect["heads"]
    if "channel_bundles" in expect:
        members: dict[str, dict[str, list[str]]] = {}
        for row in rows:
            members.setdefault(row["package"], {}).setdefault(row["channel"], []).append(
                row["bundle"]
            )
        assert members == expect["channel_bundles"]
    if "replaces" in expect:
        assert {r["bundle"]: r["replaces"] for r in rows if r["replaces"]} == expect["replaces"]
    if "skips" in expect:
        assert {r["bundle"]: r["skips"] for r in rows if r["skips"]} == expect["skips"]


@pytest.mark.skipif(not LIST_INDEX.exists(), reason="opm's list-index is not in ../shared")
def test_list_packages_shows_the_default_head_display_name() -> None:
    # list_test.go TestListPackages: the display name of the default channel head's CSV.
    done = kupgrade("olm", "list", "packages", str(LIST_INDEX))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "NAME  DISPLAY NAME  DEFAULT CHANNEL\nbar   Bar Operator  beta\nfoo   Foo Operator  beta\n"
    )
    data = json.loads(kupgrade("olm", "list", "packages", str(LIST_INDEX), "-o", "json").stdout)
    assert data[0] == {"name": "bar", "displayName": "Bar Operator", "defaultChannel": "beta"}


def _blobs(package: str, names: list[str]) -> list[dict[str, Any]]:
    blobs: list[dict[str, Any]] = [
        {"schema": "olm.package", "name": package, "defaultChannel": "s"}
    ]
    entries = [{"name": names[0]}] + [
        {"name": n, "replaces": p} for p, n in itertools.pairwise(names)
    ]
    blobs.append({"schema": "olm.channel", "package": package, "name": "s", "entries": entries})
    blobs += [
        {
            "schema": "olm.bundle",
            "package": package,
            "name": n,
            "image": "",
            "properties": [
                {"type": "olm.package", "value": {"packageName": package, "version": f"1.0.{i}"}},
                {"type": "olm.bundle.object", "value": {"data": "e30="}},
            ],
        }
        for i, n in enumerate(names)
    ]
    return blobs


def test_bundles_without_a_package_list_every_package(tmp_path: Path) -> None:
    catalog = write_blobs(
        tmp_path / "cat", _blobs("zeta", ["z.v1", "z.v2"]) + _blobs("alpha", ["a.v1"])
    )
    done = kupgrade("olm", "list", "bundles", str(catalog))
    assert done.stdout.splitlines() == [
        "PACKAGE  CHANNEL  BUNDLE  REPLACES  SKIPS  SKIP RANGE  IMAGE",
        "alpha    s        a.v1                                 ",
        "zeta     s        z.v1                                 ",
        "zeta     s        z.v2    z.v1                         ",
    ]
    packages = kupgrade("olm", "list", "packages", str(catalog))
    # no CSV among the bundle objects: no display name, as getDisplayName returns ""
    assert packages.stdout.splitlines()[1] == "alpha                s"


def test_bad_inputs_fail_in_one_line(tmp_path: Path) -> None:
    not_a_catalog = write_files(tmp_path / "junk", {"notes.yaml": "just: text\n"})
    bundle = write_files(
        tmp_path / "bundle",
        {"manifests/a.yaml": "kind: X\n", "metadata/annotations.yaml": "a: b\n"},
    )
    invalid = write_blobs(tmp_path / "invalid", [{"schema": "olm.package", "name": "p"}])
    for args, words in (
        (["packages", str(tmp_path / "missing")], "no such catalog"),
        (["channels", str(not_a_catalog)], "missing root schema field"),
        (["bundles", str(bundle)], f'cannot list non-index "{bundle}"'),
        (["packages", str(invalid)], "invalid index"),
    ):
        done = kupgrade("olm", "list", *args)
        assert done.returncode == 1, args
        assert done.stdout == ""
        assert len(done.stderr.splitlines()) == 1, done.stderr
        assert words in done.stderr


def test_heads_filters_and_refuses_an_unknown_package(tmp_path: Path) -> None:
    catalog = write_blobs(
        tmp_path / "cat", _blobs("zeta", ["z.v1", "z.v2"]) + _blobs("alpha", ["a.v1"])
    )
    done = kupgrade("olm", "heads", str(catalog), "--package", "zeta", "-o", "json")
    assert json.loads(done.stdout) == {"zeta": {"s": "z.v2"}}
    unknown = kupgrade("olm", "heads", str(catalog), "--package", "nope")
    assert unknown.returncode == 1
    assert unknown.stderr.splitlines() == [f'error: {catalog}: package "nope" not found']


# --- Go's text/tabwriter with opm's padding ------------------------------------------------

cells = st.text(alphabet="ab xé", max_size=6)


@given(st.lists(st.lists(cells, min_size=1, max_size=4), min_size=1, max_size=6))
def test_tabwriter_aligns_every_column_block(rows: list[list[str]]) -> None:
    text = "\n".join("\t".join(r) for r in rows) + "\n"
    out = tabwrite(text, padding=2).split("\n")
    assert out[-1] == ""
    for row, line in zip(rows, out, strict=False):
        # a line keeps its cells in order, and its last cell is never padded
        assert line.endswith(row[-1])
        assert line.replace(" ", "").startswith("".join(row).replace(" ", ""))
    # where consecutive rows all have column 0 as a tab-terminated cell, the next cell
    # starts at the same place: the widest cell plus two spaces
    block = [r for r in rows if len(r) > 1]
    if block and len(block) == len(rows):
        width = max(len(r[0]) for r in rows) + 2
        assert all(line[width - 2 : width] == "  " for line in out[:-1])
