"""`kupgrade olm render`: catalogs and bundle directories written as `opm render` writes
them (operator-registry alpha/action/render.go, alpha/declcfg/write.go): the order, Go's
JSON encoding and indentation, go-yaml v2's YAML, the bundle properties opm builds."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.olm.declcfg_write import go_float, go_json, indent, json_to_yaml
from kupgrade.olm.gofmt import go_g
from tests.support.bundlekit import write_bundle
from tests.support.cli import kupgrade
from tests.support.conformance import SHARED
from tests.support.olmkit import write_blobs, write_files

LIST_INDEX = SHARED / "peer" / "operator-registry" / "list-index"


def _stream(text: str) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    out, at = [], 0
    while at < len(text):
        blob, at = decoder.raw_decode(text, at)
        out.append(blob)
        at += 1  # each blob ends with a newline
    return out


@pytest.mark.skipif(not LIST_INDEX.exists(), reason="opm's list-index is not in ../shared")
def test_a_catalog_renders_grouped_by_package_in_opm_order() -> None:
    done = kupgrade("olm", "render", str(LIST_INDEX))
    assert done.returncode == 0, done.stderr
    blobs = _stream(done.stdout)
    kinds = [(b.get("package") or b["name"], b["schema"], b["name"]) for b in blobs]
    assert kinds == [
        ("bar", "olm.package", "bar"),
        ("bar", "olm.channel", "beta"),
        ("bar", "olm.channel", "stable"),
        ("bar", "olm.bundle", "bar.v0.1.0"),
        ("bar", "olm.bundle", "bar.v0.2.0"),
        ("foo", "olm.package", "foo"),
        ("foo", "olm.channel", "beta"),
        ("foo", "olm.channel", "stable"),
        ("foo", "olm.bundle", "foo.v0.1.0"),
        ("foo", "olm.bundle", "foo.v0.2.0"),
    ]
    # Go's struct field order, four-space indentation, one blob after another
    assert done.stdout.startswith(
        '{\n    "schema": "olm.package",\n    "name": "bar",\n    "defaultChannel": "beta"\n}\n{\n'
    )
    bundle = blobs[3]
    assert list(bundle) == ["schema", "name", "package", "image", "properties", "relatedImages"]
    # bundle objects last; related images by image, a missing name written empty
    types = [p["type"] for p in bundle["properties"]]
    assert types[-2:] == ["olm.bundle.object", "olm.bundle.object"]
    assert bundle["relatedImages"] == [
        {"name": "", "image": "test.registry/bar-operator/bar-bundle:v0.1.0"},
        {"name": "operator", "image": "test.registry/bar-operator/bar:v0.1.0"},
    ]
    # YAML: the same blobs, each a document with go-yaml's sorted keys
    as_yaml = kupgrade("olm", "render", str(LIST_INDEX), "-o", "yaml").stdout
    assert as_yaml.startswith("---\ndefaultChannel: beta\nname: bar\nschema: olm.package\n---\n")
    assert list(yaml.safe_load_all(as_yaml)) == blobs


def test_blob_fields_are_projected_as_go_decodes_them(tmp_path: Path) -> None:
    catalog = write_blobs(
        tmp_path / "cat",
        [
            {
                "schema": "olm.package",
                "Name": "p",
                "defaultChannel": "s",
                "icon": {"base64data": "PHN2Zy8+", "mediatype": "image/svg+xml"},
                "unknown": 1,
            },
            {
                "schema": "olm.channel",
                "package": "p",
                "name": "s",
                "entries": [{"name": "p.v1", "skips": []}],
            },
            {
                "schema": "olm.bundle",
                "package": "p",
                "name": "p.v1",
                "image": "",
                "properties": [
                    {"type": "olm.package", "value": {"version": "1.0.0", "packageName": "p"}},
                    {
                        "type": "x.number",
                        "value": {"n": 100, "f": 1.0, "big": 1e21, "small": 0.000001},
                    },
                ],
            },
            {"schema": "x.other", "package": "p", "z": [1, 2.5], "a": "<b>"},
        ],
    )
    done = kupgrade("olm", "render", str(catalog))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert '"name": "p",\n    "defaultChannel": "s",\n    "icon": {' in text
    assert '"unknown"' not in text
    assert '"entries": [\n        {\n            "name": "p.v1"\n        }\n    ]' in text
    # property values after opm's Meta round trip: keys sorted, numbers as float64
    assert (
        '"value": {\n                "packageName": "p",\n                "version": "1.0.0"'
        in text
    )
    assert (
        '"big": 1e+21,\n                "f": 1,\n                "n": 100,\n                "small": 0.000001'
        in text
    )
    # an unknown schema: the whole blob, keys sorted, HTML characters as they are
    assert text.endswith(
        '{\n    "a": "<b>",\n    "package": "p",\n    "schema": "x.other",\n    "z": [\n        1,\n        2.5\n    ]\n}\n'
    )


def test_a_bundle_directory_renders_opms_properties(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "bundle")
    done = kupgrade("olm", "render", str(bundle))
    assert done.returncode == 0, done.stderr
    (blob,) = _stream(done.stdout)
    assert blob["name"] == "etcdoperator.v0.9.4"
    assert blob["package"] == "etcd"
    assert blob["image"] == ""
    props = [(p["type"], p["value"]) for p in blob["properties"]]
    assert props[:4] == [
        ("olm.gvk", {"group": "etcd.example.com", "kind": "Cluster", "version": "v1"}),
        ("olm.gvk.required", {"group": "storage.example.com", "kind": "Backup", "version": "v1"}),
        ("olm.package", {"packageName": "etcd", "version": "0.9.4"}),
        ("olm.package.required", {"packageName": "storage", "versionRange": ">=1.0.0"}),
    ]
    # values opm builds keep Go's HTML escapes
    assert '"versionRange": "\\u003e=1.0.0"' in done.stdout
    objects = [
        json.loads(base64.b64decode(v["data"])) for t, v in props if t == "olm.bundle.object"
    ]
    assert sorted(o["kind"] for o in objects) == [
        "ClusterServiceVersion",
        "CustomResourceDefinition",
    ]
    csv_text = base64.b64decode(props[-1][1]["data"]).decode()
    assert "\\u003c0.9.4" in csv_text  # json.Marshal escapes HTML characters
    assert blob["relatedImages"] == [
        {"name": "operand", "image": "quay.io/example/etcd-operand:v1"},
        {"name": "", "image": "quay.io/example/etcd:v0.9.4"},
    ]


def test_several_references_merge_into_one_stream(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "bundle", package="zeta", version="1.0.0")
    catalog = write_blobs(
        tmp_path / "cat",
        [
            {"schema": "olm.package", "name": "alpha", "defaultChannel": "s"},
            {"schema": "olm.channel", "package": "alpha", "name": "s", "entries": []},
        ],
    )
    done = kupgrade("olm", "render", str(bundle), str(catalog))
    assert [b["schema"] for b in _stream(done.stdout)] == [
        "olm.package",
        "olm.channel",
        "olm.bundle",
    ]


def test_bad_references_fail_in_one_line(tmp_path: Path) -> None:
    not_a_catalog = write_files(tmp_path / "junk", {"a.yaml": "just: text\n"})
    no_csv = write_files(
        tmp_path / "nocsv",
        {
            "manifests/a.yaml": "kind: ConfigMap\nmetadata: {name: x}\n",
            "metadata/annotations.yaml": "annotations: {}\n",
        },
    )
    for ref, words in (
        (tmp_path / "missing", "no such catalog, bundle directory or file"),
        (not_a_catalog, "missing root schema field"),
        (no_csv, "no csv in bundle"),
    ):
        done = kupgrade("olm", "render", str(ref))
        assert done.returncode == 1, ref
        assert done.stdout == ""
        assert len(done.stderr.splitlines()) == 1, done.stderr
        assert words in done.stderr
        assert f'render reference "{ref}"' in done.stderr


# --- Go's encoders ------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.text(alphabet='ab"\\\n\té/ ', max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet="abc", max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(json_values)
def test_go_json_indents_as_encoding_json(value: Any) -> None:
    # for values without floats or characters Go escapes differently, Go's indented JSON
    # is Python's with a four-space indent
    assert indent(go_json(value)) == json.dumps(value, indent=4, ensure_ascii=False)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_go_floats_read_back(value: float) -> None:
    assert float(go_float(value)) == value
    assert float(go_g(value)) == value
    assert "e-0" not in go_float(value)  # encoding/json trims e-07 to e-7


def test_go_float_formats() -> None:
    assert [go_float(v) for v in (1.0, 1e20, 1e21, 1e-6, 1.5e-7, 0.5)] == [
        "1",
        "100000000000000000000",
        "1e+21",
        "0.000001",
        "1.5e-7",
        "0.5",
    ]
    assert [go_g(v) for v in (1.0, 123456.5, 1234567.5, 0.0001, 0.00001)] == [
        "1",
        "123456.5",
        "1.2345675e+06",
        "0.0001",
        "1e-05",
    ]


@given(st.text(alphabet="abeyno019.-+: \n#é", max_size=8))
def test_yaml_strings_read_back_as_the_same_string(text: str) -> None:
    # go-yaml v2 quotes what would read back as another type, writes newlines as blocks
    assert yaml.safe_load(json_to_yaml(go_json({"k": text}))) == {"k": text}


def test_yaml_quotes_as_go_yaml_v2() -> None:
    doc = {
        "a": "true",
        "b": "",
        "c": "1.0",
        "d": "0.1.0",
        "e": "2020-01-02",
        "f": "1:20",
        "g": "a\nb",
    }
    assert json_to_yaml(go_json(doc)) == (
        'a: "true"\nb: ""\nc: "1.0"\nd: 0.1.0\ne: "2020-01-02"\nf: "1:20"\ng: |-\n  a\n  b\n'
    )
    # go-yaml v2 orders keys with non-letters first and digit runs by value
    assert (
        json_to_yaml(go_json({"a10": 1, "a9": 2, "B": 3, "_": 4})) == "_: 4\nB: 3\na9: 2\na10: 1\n"
    )
