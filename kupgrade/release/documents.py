"""Manifest files to documents, byte-for-byte as the version controller sees them.

The payload's versionHash is FNV-1 over each manifest's *raw* bytes, and those bytes are
not the file: the controller (library-go ParseManifests over apimachinery's
YAMLOrJSONDecoder) keeps a JSON document's own text, but turns every YAML document into
compact JSON through sigs.k8s.io/yaml and Go's encoding/json. Reproducing that needs
three Go behaviours no Python library has (so they are written here): YAML 1.1 scalar
resolution as go-yaml v2 does it (y/n are booleans, timestamps stay strings, 1e3 is a
float), Go's float formatting, and Go's HTML-safe string escaping.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import yaml

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.intake import YamlError
from kupgrade.intake.jsondoc import TOO_MANY_DIGITS
from kupgrade.intake.limits import DEPTH

# apimachinery's YAMLReader: a line starting with "---" and holding nothing else but
# whitespace or a comment ends a document.
_SEPARATOR = re.compile(rb"^---[ \t]*(#[^\n]*)?\r?$", re.MULTILINE)
# go-yaml v2's float syntax (resolve.go): no dot needed, unlike YAML 1.1's.
_GO_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_GO_BOOL = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$"
)
_TRUE = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}


class _GoYamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """SafeLoader resolving plain scalars the way go-yaml v2 does into interface{}."""


_GoYamlLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag not in ("tag:yaml.org,2002:timestamp",)]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_GoYamlLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _GO_BOOL, list("yYnNtTfFoO"))
_GoYamlLoader.add_implicit_resolver("tag:yaml.org,2002:float", _GO_FLOAT, list("-+.0123456789"))


def _construct_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool:
    return str(loader.construct_scalar(node)) in _TRUE


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float | int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    lowered = text.lower()
    if lowered in (".inf", "+.inf"):
        return math.inf
    if lowered == "-.inf":
        return -math.inf
    if lowered == ".nan":
        return math.nan
    if re.fullmatch(r"[-+]?[0-9]+", text):
        return int(text)
    return float(text)


_GoYamlLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
_GoYamlLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)


def go_float(value: float) -> str:
    """encoding/json's float64 text: positional in [1e-6, 1e21), else d.ddde±x (e-7, e+21)."""
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"json: unsupported value: {value}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    shortest = repr(value)  # the same shortest round-trip digits strconv picks
    if 1e-6 <= abs(value) < 1e21:
        text = format(Decimal(shortest), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa, _, exponent = shortest.partition("e")
    exp = int(exponent)
    return f"{mantissa}e-{-exp}" if exp < 0 else f"{mantissa}e+{exp:02d}"


def _key(key: Any) -> str:
    """sigs.k8s.io/yaml turns non-string map keys into their text."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return go_float(key)
    if key is None:
        return "null"
    return str(key)


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return False


def _write(value: Any, out: list[str]) -> None:
    """encoding/json of a decoded YAML value; only used when floats need Go's text."""
    if isinstance(value, dict):
        out.append("{")
        for i, key in enumerate(sorted(value, key=_key)):
            if i:
                out.append(",")
            out.append(json.dumps(_key(key), ensure_ascii=False))
            out.append(":")
            _write(value[key], out)
        out.append("}")
    elif isinstance(value, list):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif isinstance(value, float):
        out.append(go_float(value))
    else:
        out.append(json.dumps(value, ensure_ascii=False))


def _string_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_key(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v) for v in value]
    return value


_HTML_SAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def go_json(value: Any) -> bytes:
    """Compact JSON with sorted keys and Go's escaping of <, >, &, U+2028 and U+2029."""
    if _has_float(value):
        out: list[str] = []
        _write(value, out)
        text = "".join(out)
    else:
        text = json.dumps(
            _string_keys(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
    return text.translate(_HTML_SAFE).encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class Document:
    """One object of a manifest file: its decoded value and the bytes that get hashed."""

    index: int
    value: Any
    raw: bytes


def split_documents(data: bytes, file: str) -> list[Document]:
    """Every non-empty document of a YAML or JSON file, in file order.

    A file whose first non-space byte is "{" is a JSON stream (each value keeps its own
    text); anything else is YAML split on "---" lines. Empty and null documents are dropped.
    """
    stripped = data.lstrip()
    if stripped.startswith(b"{"):
        return _json_stream(data, file)
    documents: list[Document] = []
    for number, chunk in enumerate(_yaml_chunks(data), start=1):
        try:
            value = intake.load_yaml(chunk, file, _GoYamlLoader)
        except YamlError as exc:
            raise InputError(
                f"document {number} is not valid YAML: {exc.reason}", file=file
            ) from None
        except InputError as exc:
            raise InputError(
                f"document {number}: {exc.message}", file=file, hint=exc.hint
            ) from None
        if value is None:
            continue
        try:
            raw = go_json(value)
        except ValueError as exc:
            raise InputError(
                f"document {number} cannot be written as JSON: {exc}", file=file
            ) from None
        documents.append(Document(number, value, raw))
    return documents


def _yaml_chunks(data: bytes) -> list[bytes]:
    chunks: list[bytes] = []
    start = 0
    for match in _SEPARATOR.finditer(data):
        chunks.append(data[start : match.start()])
        start = match.end() + 1
    chunks.append(data[start:])
    return chunks


def _json_stream(data: bytes, file: str) -> list[Document]:
    text = intake.decode_utf8(data, file)
    decoder = json.JSONDecoder()
    documents: list[Document] = []
    position = 0
    number = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return documents
        number += 1
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise InputError(f"document {number} is not valid JSON: {exc}", file=file) from None
        except RecursionError:
            raise DEPTH.exceeded(f"document {number}'s nesting", file) from None
        except ValueError:  # integers of more than 4,300 digits
            raise InputError(f"document {number}: {TOO_MANY_DIGITS}", file=file) from None
        intake.check_depth(value, file)
        raw = text[position:end].strip().encode("utf-8")
        position = end
        if value is not None:
            documents.append(Document(number, value, raw))
