"""Manifest files to the exact bytes the controller hashes (SPEC C5), and loading errors."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.errors import InputError
from kupgrade.release.documents import go_float, split_documents
from kupgrade.release.manifest import parse_manifests
from kupgrade.release.payload import PayloadError, PayloadFiles, load_payload
from kupgrade.release.template import TemplateError, render

# YAML cannot carry every code point raw (controls, surrogates, line separators)
text = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc", "Co", "Cn", "Zl", "Zp"), blacklist_characters="\ufeff"
    ),
    max_size=12,
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    text,
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(text.filter(bool), inner, max_size=4)
    ),
    max_leaves=20,
)


def _go_reference(value: Any) -> bytes:
    """An independent model: Python's json, then Go's float text and HTML escaping."""
    text = json.dumps(
        _floats_as_go(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    text = re.sub(r'"\\u0000F(.*?)\\u0000"', lambda m: m.group(1), text)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text.encode("utf-8", "surrogatepass")


def _floats_as_go(value: Any) -> Any:
    if isinstance(value, float):
        return "\0F" + go_float(value) + "\0"
    if isinstance(value, dict):
        return {k: _floats_as_go(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats_as_go(v) for v in value]
    return value


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(text.filter(bool), values, min_size=1, max_size=5))
def test_a_yaml_document_hashes_as_compact_sorted_json(doc: dict[str, Any]) -> None:
    """Any mapping written as YAML comes back as Go's encoding/json bytes of it.

    The YAML is flow style with every string quoted (a comment line first, so it is read
    as YAML, not JSON): plain scalars such as Y would be booleans to go-yaml.
    """
    text = "# generated\n" + json.dumps(doc, ensure_ascii=False)
    (document,) = split_documents(text.encode(), "x.yaml")
    assert document.raw == _go_reference(doc)


@settings(max_examples=300)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_go_float_round_trips(value: float) -> None:
    text = go_float(value)
    assert float(text) == value
    assert "e" not in text or not (1e-6 <= abs(value) < 1e21)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (0.000001, "0.000001"),
        (-0.0, "-0"),
    ],
)
def test_go_float_examples(value: float, text: str) -> None:
    assert go_float(value) == text


def test_go_yaml_scalars() -> None:
    """go-yaml v2 reads y/n as booleans, 1e3 as a float and keeps timestamps as text."""
    raw = split_documents(b"a: y\nb: n\nc: 1e3\nd: 2001-12-14\ne: '<b>'\nf: 1.0\n", "x.yaml")[0].raw
    assert raw == b'{"a":true,"b":false,"c":1000,"d":"2001-12-14","e":"\\u003cb\\u003e","f":1}'


def test_json_keeps_its_own_text_and_streams() -> None:
    docs = split_documents(b'  {"b": 1,\n "a": 2}\n{"kind": "X"}  \n', "x.json")
    assert [d.raw for d in docs] == [b'{"b": 1,\n "a": 2}', b'{"kind": "X"}']


def test_documents_split_on_separator_lines_and_skip_empty_ones() -> None:
    data = b"---\n# only a comment\n---\nkind: A\nmetadata: {name: a}\n--- # trailing\nnull\n---\nkind: B\nmetadata: {name: b}\n"
    assert [d.value["kind"] for d in split_documents(data, "x.yaml")] == ["A", "B"]


def test_duplicates_and_missing_fields_are_refused() -> None:
    twice = b"kind: A\nmetadata: {name: a}\n---\nkind: A\nmetadata: {name: a}\n"
    with pytest.raises(
        InputError, match=r"duplicate resource: \(Group: \"\" Kind: \"A\" Name: \"a\"\)"
    ):
        parse_manifests(twice, "x.yaml")
    with pytest.raises(InputError, match="must contain kubernetes required fields kind and name"):
        parse_manifests(b"kind: A\nmetadata: {}\n", "x.yaml")
    assert (
        len(
            parse_manifests(
                b"kind: A\nmetadata: {name: a}\n---\nkind: A\nmetadata: {name: a, namespace: ns}\n",
                "x",
            )
        )
        == 2
    )


def _files(**extra: bytes) -> PayloadFiles:
    base = {
        "release-manifests/release-metadata": b'{"kind": "cincinnati-metadata-v0", "version": "1.2.3"}',
        "release-manifests/image-references": b"kind: ImageStream\napiVersion: image.openshift.io/v1\nmetadata: {name: 1.2.3}\n",
    }
    return PayloadFiles(
        {**base, **{k.replace("__", "/").replace("_DOT_", "."): v for k, v in extra.items()}},
        origin="p",
    )


def test_every_broken_file_is_reported_at_once() -> None:
    files = _files(
        **{
            "release-manifests__a_DOT_yaml": b"kind: [",
            "release-manifests__b_DOT_yaml": b"metadata: {name: x}\n",
        }
    )
    with pytest.raises(PayloadError) as caught:
        load_payload(files)
    assert caught.value.reason == "UpdatePayloadIntegrity"
    assert caught.value.message.startswith("Error loading manifests from p: [parse a.yaml: ")
    assert "parse b.yaml: " in caught.value.message


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        (b'{"kind": "other", "version": "1.2.3"}', 'unrecognized Cincinnati metadata kind "other"'),
        (b'{"kind": "cincinnati-metadata-v0"}', "missing required Cincinnati metadata version"),
        (
            b'{"kind": "cincinnati-metadata-v0", "version": "4.1"}',
            'invalid Cincinnati metadata version "4.1": No Major.Minor.Patch elements found',
        ),
        (
            b'{"kind": "cincinnati-metadata-v0", "version": "1.2.4"}',
            "version from image-references (1.2.3) differs from release-metadata (1.2.4)",
        ),
        (b"{", "unmarshal Cincinnati metadata"),
    ],
)
def test_release_metadata_errors(metadata: bytes, error: str) -> None:
    files = _files(**{"release-manifests__release-metadata": metadata})
    with pytest.raises(InputError) as caught:
        load_payload(files)
    assert error in caught.value.message


def test_missing_directories_are_named(tmp_path: Path) -> None:
    with pytest.raises(PayloadError, match="manifests/ is missing"):
        load_payload(PayloadFiles(_files().files, frozenset({"release-manifests"}), "p"))


def test_delete_annotation_must_be_true() -> None:
    bad = (
        b"kind: A\nmetadata:\n  name: a\n  annotations:\n"
        b"    include.release.openshift.io/self-managed-high-availability: 'true'\n"
        b"    release.openshift.io/delete: 'yes'\n"
    )
    with pytest.raises(
        PayloadError, match=r'invalid value "yes" for annotation release\.openshift\.io/delete'
    ):
        load_payload(_files(**{"release-manifests__0000_10_a_x_DOT_yaml": bad}))


def test_templates_render_what_the_controller_renders() -> None:
    data = {
        "ReleaseImage": "quay.io/r@sha256:1",
        "ClusterProfile": "p",
        "Images": {"cli": "quay.io/cli@sha256:2"},
    }
    assert render(
        'image: {{.ReleaseImage}}\ncli: {{ index .Images "cli" }}\n{{/* note */}}', data
    ) == ("image: quay.io/r@sha256:1\ncli: quay.io/cli@sha256:2\n")
    assert render("a:  {{- .ClusterProfile -}}  \n", data) == "a:p"
    assert render("{{.Images.none}}", data) == "<no value>"
    for bad in (
        "{{.Missing}}",
        "{{if .ReleaseImage}}x{{end}}",
        "{{.ReleaseImage",
        '{{index .Future "k"}}',
    ):
        with pytest.raises(TemplateError):
            render(bad, data)


def test_nan_cannot_be_hashed() -> None:
    with pytest.raises(InputError, match="cannot be written as JSON"):
        split_documents(b"a: .nan\n", "x.yaml")
    assert math.isnan(float("nan"))
