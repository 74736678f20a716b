"""Catalog files read as opm reads them, branch by branch (operator-registry 4f9d6f22
alpha/declcfg/load.go WalkMetasReader and declcfg.go extractUniqueMetaKeys, through
k8s.io/apimachinery pkg/util/yaml/decoder.go, sigs.k8s.io/yaml and go-yaml v2): what opm
loads loads here, and what it refuses is refused with its words (SPEC F1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.errors import InputError
from kupgrade.olm.catalog import Catalog
from kupgrade.olm.load import load_catalog
from kupgrade.olm.opmyaml import go_number, read_stream
from kupgrade.olm.validate import validate_catalog
from tests.support.cli import kupgrade

BUNDLE_YAML = """\
schema: olm.bundle
name: foo.v0.1.0
package: foo
image: example.com/foo-bundle:v0.1.0
properties:
- type: olm.package
  value:
    packageName: foo
    version: 0.1.0
"""
PACKAGE_YAML = "schema: olm.package\nname: foo\ndefaultChannel: alpha\n"
CHANNEL_YAML = "schema: olm.channel\npackage: foo\nname: alpha\nentries:\n- name: foo.v0.1.0\n"


def load_text(tmp_path: Path, text: str, name: str = "catalog.yaml") -> Catalog:
    directory = tmp_path / "catalog"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(text)
    return load_catalog(directory)


def load_error(tmp_path: Path, text: str) -> str:
    with pytest.raises(InputError) as raised:
        load_text(tmp_path, text)
    return raised.value.message


def stream(*docs: str) -> str:
    return "".join(f"---\n{doc}" for doc in docs)


def test_a_plain_yaml_catalog_validates(tmp_path: Path) -> None:
    got = validate_catalog(load_text(tmp_path, stream(PACKAGE_YAML, CHANNEL_YAML, BUNDLE_YAML)))
    assert got.valid, got.error
    assert got.heads == {"foo": {"alpha": "foo.v0.1.0"}}


def test_unknown_fields_are_ignored_at_every_level(tmp_path: Path) -> None:
    """declcfg types are decoded without DisallowUnknownFields."""
    channel = CHANNEL_YAML + "  weight: 3\nowner: me\n"
    bundle = BUNDLE_YAML.replace("image:", "extra: {a: [1, 2]}\nimage:") + "  annotation: x\n"
    got = validate_catalog(load_text(tmp_path, stream(PACKAGE_YAML, channel, bundle)))
    assert got.valid, got.error


def test_the_last_of_a_repeated_key_wins(tmp_path: Path) -> None:
    """go-yaml v2 without strictness (YAML) and Go's map decoding (JSON) keep the last."""
    package = (
        "schema: olm.package\nname: bar\ndefaultChannel: beta\nname: foo\ndefaultChannel: alpha\n"
    )
    channel = CHANNEL_YAML.replace("- name: foo.v0.1.0", "- name: nope\n  name: foo.v0.1.0")
    catalog = load_text(tmp_path, stream(package, channel, BUNDLE_YAML))
    assert (catalog.packages[0].name, catalog.packages[0].defaultChannel) == ("foo", "alpha")
    assert catalog.channels[0].entries[0].name == "foo.v0.1.0"
    assert validate_catalog(catalog).valid
    as_json = '{"schema": "olm.package", "name": "x", "name": "foo", "defaultChannel": "alpha"}'
    assert load_text(tmp_path, as_json, "catalog.json").packages[0].name == "foo"


def test_top_level_keys_differing_only_in_case_are_refused(tmp_path: Path) -> None:
    message = load_error(tmp_path, "schema: olm.package\nName: a\nname: b\n")
    assert message.endswith('duplicate keys for key "name": [Name name]')
    both = load_error(tmp_path, "schema: olm.package\nName: a\nname: b\nIcon: x\nicon: y\n")
    assert 'duplicate keys for key "name": [Name name]' in both
    assert 'duplicate keys for key "icon": [Icon icon]' in both
    assert both.split(": ", 1)[1].startswith("[")  # utilerrors' aggregate of two


def test_nested_keys_differing_in_case_take_the_last_in_sorted_order(tmp_path: Path) -> None:
    """Meta.UnmarshalJSON re-encodes the blob from a map, so Go's struct decoder meets
    nested keys sorted: `Name` < `name`, and `NAME` < `Name`."""
    channel = (
        "schema: olm.channel\npackage: foo\nname: alpha\nentries:\n"
        "- name: foo.v0.1.0\n  Name: ignored\n"
        "- NAME: ignored\n  Name: foo.v0.2.0\n  replaces: foo.v0.1.0\n"
    )
    catalog = load_text(tmp_path, stream(PACKAGE_YAML, channel))
    assert [e.name for e in catalog.channels[0].entries] == ["foo.v0.1.0", "foo.v0.2.0"]
    prop = BUNDLE_YAML.replace("packageName: foo", "PackageName: bar\n    packageName: foo")
    bundle = validate_catalog(load_text(tmp_path, stream(PACKAGE_YAML, CHANNEL_YAML, prop)))
    assert bundle.valid, bundle.error


@pytest.mark.parametrize(
    ("description", "loaded"),
    [
        ("2020-01-01", "2020-01-01"),  # a timestamp stays text in an interface{}
        ("1:20", "1:20"),  # go-yaml knows no base-60 numbers
        ("=", "="),  # nor YAML 1.1's value key
        ("'yes'", "yes"),
    ],
)
def test_scalars_that_stay_strings(tmp_path: Path, description: str, loaded: str) -> None:
    text = stream(PACKAGE_YAML + f"description: {description}\n", CHANNEL_YAML, BUNDLE_YAML)
    catalog = load_text(tmp_path, text)
    assert catalog.packages[0].description == loaded
    assert validate_catalog(catalog).valid


@pytest.mark.parametrize("description", ["y", "yes", "on", "12", "1.5"])
def test_bools_and_numbers_in_a_string_field_fail_to_load(tmp_path: Path, description: str) -> None:
    message = load_error(tmp_path, PACKAGE_YAML + f"description: {description}\n")
    assert "olm.package blob" in message


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("5", "got %!t(float64=5): 5"),
        ("true", "got true: true"),
        ("n", "got false: false"),
        ("[1, a]", "got [%!t(float64=1) %!t(string=a)]: [1 a]"),
        ("{b: 1}", "got map[%!t(string=b):%!t(float64=1)]: map[b:1]"),
        ("~", "got %!t(<nil>): <nil>"),
    ],
)
def test_a_meta_key_of_another_type_is_named_as_go_prints_it(
    tmp_path: Path, value: str, text: str
) -> None:
    message = load_error(tmp_path, f"schema: olm.package\nname: {value}\n")
    assert message.endswith(f'expected value for key "name" to be a string, {text}')


def test_map_keys_become_strings_as_sigs_yaml_names_them(tmp_path: Path) -> None:
    bundle = BUNDLE_YAML + "- type: x.custom\n  value: {1: a, true: b, 1.5: c, 1e6: d, 0x10: e}\n"
    catalog = load_text(tmp_path, stream(PACKAGE_YAML, CHANNEL_YAML, bundle))
    value = catalog.bundles[0].properties[1].value
    assert value == {"1": "a", "true": "b", "1.5": "c", "1e+06": "d", "16": "e"}


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("~: 1\n", "unsupported map key of type: <nil>"),
        ("a: .nan\n", "json: unsupported value: NaN"),
        ("a: [-.inf]\n", "json: unsupported value: -Inf"),
        ("--- {schema: x}\n", "invalid Yaml document separator: {schema: x}"),
        ("----\nschema: x\n", "invalid Yaml document separator: -"),
        ("a: [b\n", "not a JSON or YAML stream"),
    ],
)
def test_what_opm_refuses_while_reading(tmp_path: Path, text: str, error: str) -> None:
    assert error in load_error(tmp_path, text)


@pytest.mark.parametrize(
    "text",
    [
        "\n",  # a file of one blank line is one null document
        "# a comment before the first separator\n---\n" + PACKAGE_YAML,
        PACKAGE_YAML + "---\n\n",  # a blank chunk after the last separator
        PACKAGE_YAML + "--- # comment\n~\n",
    ],
)
def test_a_null_document_is_an_object_without_schema(tmp_path: Path, text: str) -> None:
    """YAMLReader hands on blank and comment-only chunks; a null leaves opm's Meta empty."""
    assert "object '' is missing root schema field" in load_error(tmp_path, text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        PACKAGE_YAML + "---\n",
        "---\n" + PACKAGE_YAML + "--- # end\n",
        "---\n---\n" + PACKAGE_YAML,
    ],
)
def test_separators_without_documents_are_nothing(tmp_path: Path, text: str) -> None:
    assert len(load_text(tmp_path, text).packages) == text.count("olm.package")


def test_yaml_that_looks_like_json(tmp_path: Path) -> None:
    """decoder.go: a stream starting with `{` is JSON until a value fails; after at most
    one value the rest is read as YAML, and the JSON error wins if that fails too."""
    flow = "{schema: olm.package, name: foo, defaultChannel: alpha}\n"
    assert load_text(tmp_path, flow).packages[0].name == "foo"
    mixed = json.dumps({"schema": "olm.package", "name": "foo", "defaultChannel": "alpha"})
    catalog = load_text(tmp_path, mixed + "\n---\n" + CHANNEL_YAML + "---\n" + BUNDLE_YAML)
    assert validate_catalog(catalog).valid
    trailing_comma = '{"schema": "olm.package", "name": "foo",}'
    assert load_text(tmp_path, trailing_comma).packages[0].name == "foo"
    two_then_junk = '{"schema": "a"}\n{"schema": "b"}\n{junk: [}\n'
    assert "not a JSON stream" in load_error(tmp_path, two_then_junk)
    one_then_junk = '{"schema": "a"}\n{junk: [}\n'
    assert "not a JSON stream" in load_error(tmp_path, one_then_junk)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0x1F", 31),
        ("0o17", 15),
        ("017", 15),
        ("-0b11", -3),
        ("1_000", 1000),
        ("+1", 1),
        ("08", 8.0),  # not octal: a decimal float
        ("1e3", 1000.0),
        (".5", 0.5),
        ("1e999", "1e999"),  # out of range: ParseFloat fails, the text stays
        ("1:20", "1:20"),
        ("2020-01-01", "2020-01-01"),
        ("1.2.3", "1.2.3"),
        ("0x", "0x"),
    ],
)
def test_go_yaml_numbers(text: str, value: Any) -> None:
    got = go_number(text)
    assert (got, type(got)) == (value, type(value))


def test_a_bad_separator_is_one_line_from_the_cli(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "catalog.yaml").write_text("--- {schema: x}\n")
    result = kupgrade("olm", "validate", str(tmp_path / "c"))
    assert result.returncode == 1
    assert "invalid Yaml document separator" in result.stderr


# --- property: noise opm ignores changes nothing ---------------------------------------------

names = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)
noise_keys = st.from_regex(r"x[a-z]{0,5}", fullmatch=True)


@st.composite
def channels(draw: st.DrawFn) -> dict[str, Any]:
    entries = []
    for name in draw(st.lists(names, min_size=1, max_size=4, unique=True)):
        entry: dict[str, Any] = {"name": name}
        if draw(st.booleans()):
            entry["replaces"] = draw(names)
        if draw(st.booleans()):
            entry["skips"] = draw(st.lists(names, max_size=2))
        entries.append(entry)
    return {"schema": "olm.channel", "package": "foo", "name": draw(names), "entries": entries}


def _noisy(draw: Any, value: Any, top: bool) -> Any:
    """`value`'s pairs with unknown keys mixed in, each real key first given a decoy
    (the last occurrence wins), and nested keys in a random case (a field matches
    whatever the case of its key)."""
    if not isinstance(value, dict):
        return value
    pairs: list[tuple[str, Any]] = []
    for key, item in value.items():
        spelled = key if top else draw(st.sampled_from([key, key.upper(), key.capitalize()]))
        if draw(st.booleans()):
            pairs.append((spelled, "decoy"))
        inner = [_noisy(draw, i, False) for i in item] if isinstance(item, list) else item
        pairs.append((spelled, inner))
        if draw(st.booleans()):
            pairs.append((draw(noise_keys), draw(st.integers() | st.text("ab c", max_size=5))))
    return pairs


def _emit(value: Any) -> str:
    """A flow-style YAML text of pairs (repeated keys kept) and plain values."""
    if isinstance(value, list) and value and isinstance(value[0], tuple):
        return "{" + ", ".join(f"{json.dumps(k)}: {_emit(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_emit(v) for v in value) + "]"
    return json.dumps(value)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.lists(channels(), min_size=1, max_size=3))
def test_unknown_fields_repeated_keys_and_case_change_nothing(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, blobs: list[dict[str, Any]]
) -> None:
    """A catalog with unknown fields, decoys overwritten by a repeated key and nested
    field names in any case loads to what its plain JSON form loads to."""
    clean = "\n".join(json.dumps(b) for b in blobs)
    noisy = "".join(f"---\n{_emit(_noisy(data.draw, b, True))}\n" for b in blobs)
    base = tmp_path_factory.mktemp("prop")
    expected = load_text(base / "clean", clean, "catalog.json")
    got = load_text(base / "noisy", noisy)
    assert [(c.package, c.name, c.entries) for c in got.channels] == [
        (c.package, c.name, c.entries) for c in expected.channels
    ]


@given(st.text(alphabet="{}[]:-#, \n\"'ab1.~?&*!|>", max_size=40))
@settings(max_examples=300, deadline=None)
def test_any_text_loads_or_fails_with_one_line(text: str) -> None:
    try:
        list(read_stream(text, "fuzz"))
    except InputError as exc:
        assert "\n" not in exc.message
