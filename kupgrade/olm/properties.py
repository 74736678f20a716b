"""Bundle properties decoded the way opm decodes them (SPEC F1; operator-registry
alpha/property/property.go Parse, at 4f9d6f22).

Every property of a bundle is decoded, not only `olm.package`: a known type into its Go
struct (field names matched case-insensitively, unknown fields ignored, `null` leaving the
zero value), any other type as raw JSON. The first property that does not decode fails
the bundle with opm's text, `parse property[i] of type "t": <Go decoder error>`.

Hand-written because the errors must read as Go's encoding/json words them (no Python
decoder produces those texts), and only the handful of shapes below are involved.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kupgrade.intake.jsondoc import go_json_type
from kupgrade.versions import go_quote

# type -> (Go struct name, {json field: Go type}); Go names a field by its JSON key
_STRING = "string"
_STRUCTS: dict[str, tuple[str, dict[str, str]]] = {
    "olm.package": (
        "Package",
        {
            "packageName": _STRING,
            "version": _STRING,
            "release": _STRING,
        },
    ),
    "olm.package.required": (
        "PackageRequired",
        {"packageName": _STRING, "versionRange": _STRING},
    ),
    "olm.gvk": (
        "GVK",
        {"group": _STRING, "kind": _STRING, "version": _STRING},
    ),
    "olm.gvk.required": (
        "GVKRequired",
        {"group": _STRING, "kind": _STRING, "version": _STRING},
    ),
    "olm.bundle.object": ("BundleObject", {"data": "[]uint8"}),
    "olm.channel": ("Channel", {"channelName": _STRING}),
    "olm.csv.metadata": ("CSVMetadata", {}),  # a large struct: its shape is checked as an object
}

MISSING = object()  # a property without "value" (Go's empty json.RawMessage)


# Go's encoding/json matches a key to a field case-insensitively when no field has the
# exact name: each struct's fields by their folded names, made once.
_FOLDED = {kind: {n.casefold(): n for n in fields} for kind, (_, fields) in _STRUCTS.items()}


class PropertyError(Exception):
    """`parse property[i] of type "t": ...` (property.ParseError)."""

    def __init__(self, index: int, kind: str, reason: str) -> None:
        super().__init__(f"parse property[{index}] of type {go_quote(kind)}: {reason}")


@dataclass(frozen=True)
class Parsed:
    kind: str
    fields: Mapping[str, Any]  # the Go struct's fields by json name (zero values filled in)


def _decode(kind: str, value: Any) -> dict[str, Any]:
    struct, fields = _STRUCTS[kind]
    if value is None:
        return {name: "" for name in fields}
    if not isinstance(value, dict):
        raise ValueError(
            f"json: cannot unmarshal {go_json_type(value)} into Go value of type property.{struct}"
        )
    folded = _FOLDED[kind]
    out: dict[str, Any] = {name: "" for name in fields}
    # a property value reaches Go's decoder re-encoded from a map: its keys sorted, so of
    # two keys naming one field the later in that order wins
    for key in sorted(value):
        item = value[key]
        name = key if key in fields else folded.get(str(key).casefold())
        if name is None or item is None:
            continue
        go_type = fields[name]
        if not isinstance(item, str):
            raise ValueError(
                f"json: cannot unmarshal {go_json_type(item)} into Go struct field "
                f"{struct}.{name} of type {go_type}"
            )
        if go_type == "[]uint8":
            try:
                out[name] = base64.b64decode(item, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError(f"illegal base64 data at input byte {_bad_base64(item)}") from None
        else:
            out[name] = item
    return out


def _bad_base64(text: str) -> int:
    """Where Go's base64 decoder stops (the first byte outside the alphabet, roughly)."""
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
    return next((i for i, c in enumerate(text) if c not in alphabet), len(text))


def parse(properties: list[Any]) -> list[Parsed]:
    """Every property decoded in order; the first failure raises PropertyError."""
    out = []
    for index, prop in enumerate(properties):
        kind, value = prop.type, prop.value
        if value is MISSING:
            raise PropertyError(index, kind, "unexpected end of JSON input")
        if kind in _STRUCTS:
            try:
                out.append(Parsed(kind, _decode(kind, value)))
            except ValueError as exc:
                raise PropertyError(index, kind, str(exc)) from None
        else:
            out.append(Parsed(kind, {"value": value}))
    return out
