"""opm's own conversion tests (operator-registry alpha/declcfg/declcfg_to_model_test.go
TestConvertToModel, transcribed in ../shared/peer/operator-registry/cases.yaml) run through
`kupgrade olm validate DIR -o json`, and the model rules of alpha/model/model.go for the
channel entries that survive conversion without a bundle blob (SPEC F3-F5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kupgrade.cli.main import app
from kupgrade.errors import VersionError
from kupgrade.versions import parse_range
from tests.support.conformance import conformance_cases, conformance_doc, need_case
from tests.support.olmkit import write_blobs

# ../shared/peer, reached from the conformance root so a missing checkout skips alike
CASES = ("..", "peer", "operator-registry", "cases.yaml")


def validate(directory: Path) -> tuple[int, dict[str, Any]]:
    """`kupgrade olm validate DIR -o json`, in process: its exit code and document."""
    result = CliRunner().invoke(app, ["olm", "validate", str(directory), "-o", "json"])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("case", conformance_cases("validate_cases", *CASES))
def test_convert_case(case: Any, tmp_path: Path) -> None:
    case = need_case(case, *CASES)
    code, doc = validate(write_blobs(tmp_path / "catalog", case["input"]["blobs"]))
    expect = case["expect"]
    assert doc["valid"] is expect["valid"], doc.get("error")
    assert code == (0 if expect["valid"] else 1)
    if "error" in expect:
        assert doc["error"] == expect["error"]
    if "error_contains" in expect:
        assert expect["error_contains"] in doc["error"]


def test_the_peer_file_holds_what_its_header_says() -> None:
    """Every validate case is one of the header's three expectations."""
    cases = conformance_doc(*CASES)["validate_cases"]
    shapes = {tuple(sorted(c["expect"])) for c in cases}
    assert shapes <= {("valid",), ("error", "valid"), ("error_contains", "valid")}


# --- what survives ConvertToModel without a bundle blob ------------------------------------
# declcfg_to_model.go checks only the *last* olm.channel blob of a package for entries
# that no olm.bundle names; an entry of an earlier channel survives as a model bundle
# with no properties, no image and the zero version, and model.go's Validate reports it.


def _range_error(text: str) -> str:
    with pytest.raises(VersionError) as raised:
        parse_range(text)
    return raised.value.message


PACKAGE = {"schema": "olm.package", "name": "foo", "defaultChannel": "alpha"}


def _bundle(name: str, version: str, **extra: Any) -> dict[str, Any]:
    return {
        "schema": "olm.bundle",
        "package": "foo",
        "name": name,
        "image": f"foo-bundle:{version}",
        "properties": [
            {"type": "olm.package", "value": {"packageName": "foo", "version": version}}
        ],
        **extra,
    }


def _channel(name: str, *entries: dict[str, Any]) -> dict[str, Any]:
    return {"schema": "olm.channel", "package": "foo", "name": name, "entries": list(entries)}


def test_an_entry_of_an_earlier_channel_without_a_blob_fails_the_model_rules(
    tmp_path: Path,
) -> None:
    blobs = [
        PACKAGE,
        _channel("alpha", {"name": "foo.v0.1.0"}, {"name": "foo.v0.2.0", "replaces": "foo.v0.1.0"}),
        _channel("beta", {"name": "foo.v0.1.0"}),
        _bundle("foo.v0.1.0", "0.1.0"),
    ]
    code, doc = validate(write_blobs(tmp_path / "c", blobs))
    assert code == 1 and doc["stage"] == "model"
    assert doc["error"] == (
        "invalid index:\n"
        '└── invalid package "foo":\n'
        '    └── invalid channel "alpha":\n'
        '        └── invalid bundle "foo.v0.2.0":\n'
        '            ├── must be exactly one property with type "olm.package"\n'
        "            └── bundle image must be set"
    )


def test_two_blobless_entries_share_the_zero_version(tmp_path: Path) -> None:
    """Both carry version 0.0.0 (semver.Version's zero value), as does a real 0.0.0."""
    blobs = [
        PACKAGE,
        _channel(
            "alpha",
            {"name": "foo.v0.0.0"},
            {"name": "foo.v0.1.0", "replaces": "foo.v0.0.0", "skips": ["foo.x"]},
            {"name": "foo.v0.2.0", "replaces": "foo.v0.1.0", "skipRange": "<0.2.0"},
        ),
        _channel("beta", {"name": "foo.v0.0.0"}),
        _bundle("foo.v0.0.0", "0.0.0"),
    ]
    code, doc = validate(write_blobs(tmp_path / "c", blobs))
    assert code == 1
    dup = "duplicate versions found in bundles: [{0.0.0: [foo.v0.0.0, foo.v0.1.0, foo.v0.2.0]}]"
    assert ["invalid index", 'invalid package "foo"', dup] in doc["leaves"]
    bundle = ["invalid index", 'invalid package "foo"', 'invalid channel "alpha"']
    assert [*bundle, 'invalid bundle "foo.v0.2.0"', "bundle image must be set"] in doc["leaves"]
    assert [*bundle, 'invalid bundle "foo.v0.0.0"'] not in [leaf[:4] for leaf in doc["leaves"]]


def test_a_blobless_entry_keeps_its_own_entry_checks_in_opm_order(tmp_path: Path) -> None:
    """Bundle.Validate's order: skips, skipRange, the olm.package count, the image."""
    blobs = [
        PACKAGE,
        _channel(
            "alpha",
            {"name": "foo.v0.1.0"},
            {"name": "foo.v0.2.0", "replaces": "foo.v0.1.0", "skips": [""], "skipRange": "<x"},
        ),
        _channel("beta", {"name": "foo.v0.1.0"}),
        _bundle("foo.v0.1.0", "0.1.0"),
    ]
    code, doc = validate(write_blobs(tmp_path / "c", blobs))
    assert code == 1
    tail = doc["error"].split('invalid bundle "foo.v0.2.0":\n')[1].splitlines()
    assert [line.split("── ", 1)[1] for line in tail] == [
        "skip[0] is empty",
        f'invalid skipRange "<x": {_range_error("<x")}',
        'must be exactly one property with type "olm.package"',
        "bundle image must be set",
    ]


def test_build_metadata_with_a_release_is_reported_last(tmp_path: Path) -> None:
    """model.go checks build metadata after the image and the deprecation."""
    name = "foo.v0.1.0+b"
    blobs = [
        PACKAGE,
        _channel("alpha", {"name": name}),
        {
            **_bundle(name, "0.1.0+b"),
            "image": "",
            "properties": [
                {
                    "type": "olm.package",
                    "value": {"packageName": "foo", "version": "0.1.0+b", "release": "1"},
                }
            ],
        },
        {
            "schema": "olm.deprecations",
            "package": "foo",
            "entries": [{"reference": {"schema": "olm.bundle", "name": name}, "message": ""}],
        },
    ]
    code, doc = validate(write_blobs(tmp_path / "c", blobs))
    assert code == 1
    tail = doc["error"].split(f'invalid bundle "{name}":\n')[1].splitlines()
    assert [line.split("── ", 1)[1] for line in tail] == [
        f'name "{name}" does not match normalized name "foo-v0.1.0+b-1"',
        "bundle image must be set",
        "invalid deprecation: message must be set",
        "cannot use build metadata in version with a release version",
    ]
