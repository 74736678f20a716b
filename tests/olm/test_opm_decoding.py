"""How opm reads a catalog's JSON, branch by branch where no public case pins it
(operator-registry 4f9d6f22: alpha/declcfg/declcfg.go Meta.UnmarshalJSON and
extractUniqueMetaKeys, load.go addMeta, alpha/property/property.go Parse)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kupgrade.errors import InputError
from kupgrade.olm.load import load_catalog
from kupgrade.olm.validate import validate_catalog

IMAGE = "quay.io/x/foo@sha256:" + "0" * 64


def catalog(tmp_path: Path, *blobs: dict[str, Any]) -> Path:
    (tmp_path / "catalog.json").write_text("\n".join(json.dumps(b) for b in blobs))
    return tmp_path


def bundle(*properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "schema": "olm.bundle",
        "package": "foo",
        "name": "foo.v1.0.0",
        "image": IMAGE,
        "properties": [
            {"type": "olm.package", "value": {"packageName": "foo", "version": "1.0.0"}},
            *properties,
        ],
        **extra,
    }


PACKAGE = {"schema": "olm.package", "name": "foo", "defaultChannel": "stable"}
CHANNEL = {
    "schema": "olm.channel",
    "package": "foo",
    "name": "stable",
    "entries": [{"name": "foo.v1.0.0"}],
}


def test_field_names_match_whatever_their_case(tmp_path: Path) -> None:
    """The FBC template docs use upper camel case; opm reads it."""
    got = validate_catalog(
        load_catalog(
            catalog(
                tmp_path,
                {"Schema": "olm.package", "Name": "foo", "DefaultChannel": "stable"},
                {
                    "schema": "olm.channel",
                    "Package": "foo",
                    "NAME": "stable",
                    "Entries": [{"Name": "foo.v1.0.0"}],
                },
                {
                    **{k: v for k, v in bundle().items() if k != "properties"},
                    "Properties": bundle()["properties"],
                    "unknownField": 1,
                },
            )
        )
    )
    assert got.valid, got.error
    assert got.heads == {"foo": {"stable": "foo.v1.0.0"}}


def test_keys_that_fold_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_catalog(catalog(tmp_path, {"schema": "olm.package", "name": "a", "Name": "b"}))
    assert 'duplicate keys for key "name": [Name name]' in caught.value.message


def test_null_fields_leave_the_zero_value(tmp_path: Path) -> None:
    got = validate_catalog(
        load_catalog(
            catalog(tmp_path, {**PACKAGE, "description": None}, CHANNEL, bundle(relatedImages=None))
        )
    )
    assert got.valid, got.error


@pytest.mark.parametrize(
    ("prop", "error"),
    [
        (
            {"type": "olm.gvk", "value": {"group": 1, "kind": "K", "version": "v1"}},
            'parse property[1] of type "olm.gvk": json: cannot unmarshal number into Go struct '
            "field GVK.group of type string",
        ),
        (
            {"type": "olm.package.required", "value": "foo"},
            'parse property[1] of type "olm.package.required": json: cannot unmarshal string '
            "into Go value of type property.PackageRequired",
        ),
        ({"type": "olm.gvk"}, 'parse property[1] of type "olm.gvk": unexpected end of JSON input'),
        (
            {"type": "x.custom"},
            'parse property[1] of type "x.custom": unexpected end of JSON input',
        ),
        (
            {"type": "olm.bundle.object", "value": {"data": "not base64!"}},
            'parse property[1] of type "olm.bundle.object": illegal base64 data at input byte 3',
        ),
    ],
)
def test_every_known_property_type_is_decoded(
    tmp_path: Path, prop: dict[str, Any], error: str
) -> None:
    got = validate_catalog(load_catalog(catalog(tmp_path, PACKAGE, CHANNEL, bundle(prop))))
    assert (got.valid, got.stage) == (False, "convert")
    assert got.error == f'parse properties for bundle "foo.v1.0.0": {error}'


def test_null_property_value_and_case_of_property_fields(tmp_path: Path) -> None:
    got = validate_catalog(
        load_catalog(
            catalog(
                tmp_path,
                PACKAGE,
                CHANNEL,
                bundle(
                    {"type": "olm.gvk", "value": None},
                    {"type": "olm.gvk.required", "value": {"Group": "g", "KIND": "K"}},
                    {"type": "x.custom", "value": None},
                ),
            )
        )
    )
    assert got.valid, got.error


def test_a_channel_entry_without_a_bundle_blob(tmp_path: Path) -> None:
    channel = {**CHANNEL, "entries": [{"name": "foo.v1.0.0"}, {"name": "foo.v0.9.0"}]}
    got = validate_catalog(load_catalog(catalog(tmp_path, PACKAGE, channel, bundle())))
    assert got.error == (
        'no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v0.9.0]'
    )
