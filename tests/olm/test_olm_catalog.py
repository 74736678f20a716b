"""Operator catalogs: skipRange (SPEC F8), opm validate (F3-F5), heads and virtual nodes
(F2, F10), render-graph, and bad input. Cases from ../shared/conformance/olm."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.errors import InputError, VersionError
from kupgrade.olm.catalog import Entry
from kupgrade.olm.graph import HeadError, channel_head, replaces_chain_error
from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.load import load_catalog
from kupgrade.olm.manifests import read_package_manifests
from kupgrade.olm.next_steps import one_step_findings
from kupgrade.olm.render import RenderError, RenderOptions, render_mermaid
from kupgrade.olm.resolver import resolve
from kupgrade.olm.resolver.model import Installed, Source, Subscription
from kupgrade.olm.validate import validate_catalog
from kupgrade.versions import RangeError, SemVer, parse_blang, parse_range
from tests.support.caseuse import unused
from tests.support.cli import kupgrade
from tests.support.conformance import (
    conformance_cases,
    conformance_doc,
    conformance_path,
    need_case,
)
from tests.support.olmkit import write_blobs, write_files

SKIPRANGE = ("olm", "skiprange.yaml")
VALIDATION = ("olm", "validation.yaml")
MERMAID = ("olm", "mermaid.yaml")


# --- skipRange: blang/semver's grammar (SPEC F8) --------------------------------------------


@pytest.mark.parametrize("case", conformance_cases("cases", *SKIPRANGE))
def test_skiprange_case(case: Any) -> None:
    case = need_case(case, *SKIPRANGE)
    if case["expect"] == "parse-error":
        unused(case, "version")  # the range fails to parse before any version is compared
        with pytest.raises(RangeError) as raised:
            parse_range(case["range"])
        assert raised.value.message == case["error"]
    else:
        assert (parse_blang(case["version"]) in parse_range(case["range"])) is case["expect"]


def test_skiprange_cli_prints_true_false_and_exits_2_on_parse_errors() -> None:
    assert kupgrade("olm", "skiprange", ">=4.1.0 <4.1.2", "4.1.1").stdout == "true\n"
    assert kupgrade("olm", "skiprange", ">=4.1.0 <4.1.2", "4.1.2").stdout == "false\n"
    bad = kupgrade("olm", "skiprange", "<v2.8.1", "2.0.0")
    assert bad.returncode == 2
    assert (
        'Could not parse Range "<v2.8.1": Could not parse comparator "<v" in "<v2.8.1"'
        in bad.stderr
    )


versions = st.builds(
    SemVer,
    st.integers(0, 5),
    st.integers(0, 5),
    st.integers(0, 5),
    st.sampled_from([(), ("0",), ("alpha",), ("rc", "1")]),
)


@given(versions, versions, versions)
def test_bounded_range_is_the_interval(low: SemVer, high: SemVer, probe: SemVer) -> None:
    """SPEC F8: `>=a <b` holds exactly the versions a <= v < b (plain SemVer precedence)."""
    assert (probe in parse_range(f">={low} <{high}")) == (low <= probe < high)


@given(versions, versions, versions)
def test_or_is_union_and_space_is_intersection(a: SemVer, b: SemVer, probe: SemVer) -> None:
    union = parse_range(f"<{a} || >={b}")
    both = parse_range(f">={a} !{b}")
    assert (probe in union) == (probe < a or probe >= b)
    assert (probe in both) == (probe >= a and probe != b)


@given(st.text(alphabet="<>=!|.x0123456789v- ", max_size=24))
def test_range_parser_only_fails_with_its_own_error(text: str) -> None:
    try:
        parse_range(text)
    except RangeError as exc:
        assert exc.message


# --- validation (opm validate) --------------------------------------------------------------


def _catalog_input(case: dict[str, Any], tmp_path: Path) -> Path:
    given_input = case["input"]
    if "blobs" in given_input:
        return write_blobs(tmp_path / "catalog", given_input["blobs"])
    if "files" in given_input:
        return write_files(tmp_path / "catalog", given_input["files"])
    return conformance_path("olm", given_input["path"])


def _is_catalog_case(case: dict[str, Any]) -> bool:
    return any(key in case["input"] for key in ("blobs", "files", "path"))


@pytest.mark.parametrize("case", conformance_cases("cases", *VALIDATION, where=_is_catalog_case))
def test_validation_case(case: Any, tmp_path: Path) -> None:
    case = need_case(case, *VALIDATION)
    expect = case["expect"]
    try:
        result = validate_catalog(load_catalog(_catalog_input(case, tmp_path)))
    except InputError as exc:
        assert expect == {"valid": False, "stage": "load"} | {
            k: v for k, v in expect.items() if k == "error_contains"
        }
        if "error_contains" in expect:  # README: load errors give only error_contains
            assert expect["error_contains"] in exc.message
        return
    assert result.valid is expect["valid"], result.error
    if not expect["valid"]:
        assert result.stage == expect["stage"]
        if "error" in expect:
            assert result.error == expect["error"]
        if "error_contains" in expect:  # README: any stage may give it instead of error
            assert expect["error_contains"] in (result.error or "")
        if "leaves" in expect:
            assert sorted(map(tuple, result.leaves)) == sorted(map(tuple, expect["leaves"]))
    elif "heads" in expect:
        assert result.heads == expect["heads"]


@pytest.mark.parametrize(
    "case", conformance_cases("cases", *VALIDATION, where=lambda c: "entries" in c["input"])
)
def test_channel_head_and_chain_case(case: Any) -> None:
    case = need_case(case, *VALIDATION)
    entries = [
        Entry(e["name"], e.get("replaces", ""), tuple(e.get("skips", [])))
        for e in case["input"]["entries"]
    ]
    expect = case["expect"]
    if "head" in expect:
        assert channel_head(entries) == expect["head"]
    else:
        with pytest.raises(HeadError) as raised:
            channel_head(entries)
        assert raised.value.message == expect["head_error"]
    assert replaces_chain_error(entries) == expect["chain_error"]


@pytest.mark.parametrize(
    "case",
    conformance_cases("cases", *VALIDATION, where=lambda c: "package_manifests" in c["input"]),
)
def test_package_manifest_case(case: Any) -> None:
    case = need_case(case, *VALIDATION)
    root = conformance_path("olm", case["input"]["package_manifests"])
    expect = case["expect"]
    (package,) = read_package_manifests(root)
    assert package.channels == expect["declared_heads"]
    assert package.default_channel == expect["default_channel"]
    # README: members and virtual are given for each channel of the package manifest
    assert set(expect["members"]) == set(expect["virtual"]) == set(package.channels)
    for channel in package.channels:
        members, virtual = package.members(channel)
        assert members == expect["members"][channel]
        assert virtual == expect["virtual"][channel]
    catalog = load_catalog(root)
    result = validate_catalog(catalog)
    assert result.valid is expect["valid_as_fbc"]
    assert result.heads[package.name] == expect["computed_heads"]
    index = CatalogIndex.build(catalog)
    for channel, graph in index.packages[package.name].channels.items():
        assert graph.virtual == expect["virtual"][channel]


def test_validate_cli_exit_codes_and_messages(tmp_path: Path) -> None:
    good = kupgrade(
        "olm",
        "validate",
        str(conformance_path("olm", "catalogs", "operator-registry", "index-declcfgs", "latest")),
        "-o",
        "json",
    )
    assert good.returncode == 0
    assert json.loads(good.stdout)["heads"]["baz"] == {"stable": "baz.v1.1.0"}
    bad = kupgrade(
        "olm",
        "validate",
        str(conformance_path("olm", "catalogs", "operator-registry", "e2e-prometheus")),
    )
    assert bad.returncode == 1
    assert (
        'package "prometheus", bundle "prometheusoperator.0.14.0" not found in any channel entries'
        in bad.stderr
    )
    assert "prometheus.json (blob 2)" in bad.stderr


def test_real_catalogs_validate_and_f5_agrees_with_the_resolver() -> None:
    """The real catalogs pass opm's rules, yet some installed bundles have no way forward
    (SPEC F5); for each such bundle the seed resolver indeed stays put."""

    for name in ("v4.21.json", "v4.22.json"):
        catalog = load_catalog(
            conformance_path("olm", "catalogs", "community-operators-prod", name)
        )
        assert validate_catalog(catalog).valid
        index = CatalogIndex.build(catalog)
        findings = one_step_findings(index)
        assert findings, "the real catalogs have stranded bundles (clusterpulse fast-v0)"
        source = Source("community", "olm", 0, index)
        for finding in findings:
            version = index.packages[finding.package].versions[finding.bundle]
            assert version is not None
            sub = Subscription(finding.package, finding.channel, "community", "olm", "olm")
            answer = resolve([source], sub, Installed(finding.bundle, version))
            if not finding.next_steps:
                assert answer.next is None
            else:
                assert answer.next in finding.next_steps


def test_one_step_check_reports_stuck_and_ambiguous_bundles(tmp_path: Path) -> None:
    """SPEC F5: opm accepts both catalogs; kupgrade says which installed bundle is stuck."""
    blobs = _package(
        "foo",
        [
            {"name": "foo.v1"},
            {"name": "foo.v2", "replaces": "foo.v1"},
            {"name": "foo.v3", "replaces": "foo.v1", "skips": ["foo.v2"]},
        ],
    )
    index = CatalogIndex.build(load_catalog(write_blobs(tmp_path / "a", blobs)))
    assert [(f.bundle, f.next_steps) for f in one_step_findings(index)] == []
    blobs = _package(
        "cm",
        [
            {"name": "cm.v1"},
            {"name": "cm.v2", "skips": ["cm.v1"]},
            {"name": "cm.v3", "skips": ["cm.v2"]},
        ],
    )
    index = CatalogIndex.build(load_catalog(write_blobs(tmp_path / "b", blobs)))
    # skips are not transitive: v2 is skipped, so never a target, and v1 is stranded
    assert [(f.bundle, f.next_steps) for f in one_step_findings(index)] == [("cm.v1", ())]
    blobs = _package(
        "x",
        [
            {"name": "x.v1"},
            {"name": "x.v2", "replaces": "x.v1"},
            {"name": "x.v3", "replaces": "x.v2", "skips": ["x.v1"]},
        ],
    )
    index = CatalogIndex.build(load_catalog(write_blobs(tmp_path / "c", blobs)))
    assert [(f.bundle, f.next_steps) for f in one_step_findings(index)] == [
        ("x.v1", ("x.v2", "x.v3"))
    ]


def _package(
    name: str, entries: list[dict[str, Any]], channel: str = "stable"
) -> list[dict[str, Any]]:
    blobs: list[dict[str, Any]] = [
        {"schema": "olm.package", "name": name, "defaultChannel": channel},
        {"schema": "olm.channel", "package": name, "name": channel, "entries": entries},
    ]
    for i, entry in enumerate(entries):
        blobs.append(
            {
                "schema": "olm.bundle",
                "name": entry["name"],
                "package": name,
                "image": f"example.com/{name}:v{i}",
                "properties": [
                    {"type": "olm.package", "value": {"packageName": name, "version": f"{i}.0.0"}}
                ],
            }
        )
    return blobs


# --- render-graph -----------------------------------------------------------------------------


def _options(case: dict[str, Any]) -> RenderOptions:
    options = case["options"]
    return RenderOptions(
        options.get("package", ""),
        options.get("minimum_edge", ""),
        options.get("draw_v0_semantics", False),
    )


@pytest.mark.parametrize("case", conformance_cases("cases", *MERMAID))
def test_mermaid_case(case: Any, tmp_path: Path) -> None:
    case = need_case(case, *MERMAID)
    catalog = load_catalog(_catalog_input(case, tmp_path))
    warnings: list[str] = []
    if "error" in case["expect"]:
        with pytest.raises(RenderError) as raised:
            render_mermaid(catalog, _options(case), warnings.append)
        assert raised.value.message == case["expect"]["error"]
    else:
        assert render_mermaid(catalog, _options(case), warnings.append) == case["expect"]["mermaid"]


def test_render_graph_cli_is_byte_compatible_and_draws_dot() -> None:
    case = next(
        c
        for c in conformance_doc(*MERMAID)["cases"]
        if c["id"] == "mermaid/registry-testdata-latest"
    )
    path = str(conformance_path("olm", case["input"]["path"]))
    result = kupgrade("olm", "render-graph", path, "--draw-v0-semantics")
    assert result.stdout == case["expect"]["mermaid"]
    dot = kupgrade("olm", "render-graph", path, "--format", "dot", "--package", "foo").stdout
    assert dot.startswith("digraph catalog {")
    assert '"foo-beta-foo.v0.2.0" -> "foo-beta-foo.v0.3.1" [label="replace"];' in dot
    assert "bar" not in dot


# --- bad input ---------------------------------------------------------------------------------


def test_malformed_blob_names_the_file(tmp_path: Path) -> None:
    write_files(
        tmp_path / "cat",
        {
            "pkg/catalog.json": '{"schema": "olm.package", "name": "foo"}\n{"schema": "olm.channel", "name": '
        },
    )
    result = kupgrade("olm", "validate", str(tmp_path / "cat"))
    assert result.returncode == 1
    assert "pkg/catalog.json" in result.stderr and "not a JSON stream" in result.stderr


def test_wrong_field_type_is_a_load_error_naming_blob(tmp_path: Path) -> None:
    write_blobs(
        tmp_path / "cat",
        [{"schema": "olm.channel", "package": "foo", "name": "a", "entries": "foo.v1"}],
    )
    with pytest.raises(InputError) as raised:
        load_catalog(tmp_path / "cat")
    assert "catalog.json (blob 1)" in str(raised.value) and "entries" in str(raised.value)


def test_unknown_schema_is_kept_but_named(tmp_path: Path) -> None:
    blobs = [
        *_package("foo", [{"name": "foo.v1"}]),
        {"schema": "olm.bundel", "name": "typo"},
        {"schema": "acme.note"},
    ]
    result = kupgrade("olm", "validate", str(write_blobs(tmp_path / "cat", blobs)))
    assert result.returncode == 0
    assert "catalog.json (blob 4): unknown schema 'olm.bundel'" in result.stderr
    assert "acme.note" not in result.stderr


def test_cycle_and_two_heads_name_package_channel_and_bundles(tmp_path: Path) -> None:
    cycle = _package(
        "foo",
        [
            {"name": "foo.v1", "replaces": "foo.v2"},
            {"name": "foo.v2", "replaces": "foo.v1"},
            {"name": "foo.v3", "replaces": "foo.v2"},
        ],
    )
    result = kupgrade("olm", "validate", str(write_blobs(tmp_path / "a", cycle)))
    assert result.returncode == 1
    assert 'invalid package "foo"' in result.stderr and 'invalid channel "stable"' in result.stderr
    assert (
        "detected cycle in replaces chain of upgrade graph: foo.v2 -> foo.v1 -> foo.v2"
        in result.stderr
    )
    heads = _package(
        "bar",
        [
            {"name": "bar.v1"},
            {"name": "bar.v2", "replaces": "bar.v1"},
            {"name": "bar.v3", "replaces": "bar.v1"},
        ],
    )
    result = kupgrade("olm", "heads", str(write_blobs(tmp_path / "b", heads)), "-o", "json")
    assert result.returncode == 1
    assert json.loads(result.stdout) == {"bar": {"stable": None}}
    assert (
        "package 'bar', channel 'stable': multiple channel heads found in graph: bar.v2, bar.v3"
        in result.stderr
    )


def test_invalid_skiprange_names_the_bundle(tmp_path: Path) -> None:
    blobs = _package(
        "foo",
        [{"name": "foo.v1"}, {"name": "foo.v2", "replaces": "foo.v1", "skipRange": "<=v0.10.1"}],
    )
    result = validate_catalog(load_catalog(write_blobs(tmp_path / "cat", blobs)))
    assert not result.valid
    assert result.leaves == [
        [
            "invalid index",
            'invalid package "foo"',
            'invalid channel "stable"',
            'invalid bundle "foo.v2"',
            'invalid skipRange "<=v0.10.1": Could not parse Range "<=v0.10.1": Could not parse comparator "<=v" in "<=v0.10.1"',
        ],
    ]


def test_missing_catalog_is_a_clear_error(tmp_path: Path) -> None:
    result = kupgrade("olm", "heads", str(tmp_path / "nope"))
    assert result.returncode == 1 and "no such catalog" in result.stderr


def test_invalid_version_in_skiprange_cli(tmp_path: Path) -> None:
    result = kupgrade("olm", "skiprange", ">=1.0.0", "1.0")
    assert result.returncode == 2 and "No Major.Minor.Patch elements found" in result.stderr
    with pytest.raises(VersionError):
        parse_blang("1.0")


def test_render_graph_as_data_has_what_the_drawing_has() -> None:
    case = next(
        c
        for c in conformance_doc(*MERMAID)["cases"]
        if c["id"] == "mermaid/registry-testdata-latest"
    )
    path = str(conformance_path("olm", case["input"]["path"]))
    mermaid = kupgrade("olm", "render-graph", path, "--package", "foo").stdout
    data = json.loads(
        kupgrade("olm", "render-graph", path, "--package", "foo", "-o", "json").stdout
    )
    channels = data["channels"]
    assert {c["package"] for c in channels} == {"foo"}
    for channel in channels:
        sub = f"foo-{channel['channel']}"
        assert f'subgraph {sub}["{channel["channel"]}"]' in mermaid
        for edge in channel["edges"]:
            assert edge["kind"] in ("replace", "skip", "skipRange")
            label = edge["label"] if edge["kind"] != "skipRange" else f'"{edge["label"]}"'
            drawn = f'{sub}-{edge["from"]}["{edge["from"]}"]-- {label} --> {sub}-{edge["to"]}'
            assert drawn in mermaid
    beta = next(c for c in channels if c["channel"] == "beta")
    assert {
        "from": "foo.v0.2.0",
        "to": "foo.v0.3.1",
        "kind": "replace",
        "label": "replace",
        "intoSkipped": False,
    } in beta["edges"]
    as_yaml = yaml.safe_load(
        kupgrade("olm", "render-graph", path, "--package", "foo", "-o", "yaml").stdout
    )
    assert as_yaml == data
