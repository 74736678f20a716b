"""The blobs of a file-based catalog, typed the way opm's declcfg types them.

A catalog is a stream of JSON/YAML objects, each with a `schema`. The four schemas opm
knows are parsed into structs (a field of the wrong type is a load error, as in Go's
decoder); every other schema is kept as it is (`others`), as opm keeps it. Each blob
remembers the file and position it came from so errors can point at it.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any, get_args, get_origin

import msgspec

from kupgrade.errors import InputError
from kupgrade.olm.gofmt import go_t, go_v
from kupgrade.olm.properties import MISSING
from kupgrade.versions import go_quote

SCHEMA_PACKAGE = "olm.package"
SCHEMA_CHANNEL = "olm.channel"
SCHEMA_BUNDLE = "olm.bundle"
SCHEMA_DEPRECATIONS = "olm.deprecations"
# Schemas opm defines but kupgrade only carries along (they take part in no rule here).
KNOWN_OTHER_SCHEMAS = frozenset({"olm.package.v2", "olm.bundle.v2", "olm.package.icon"})


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a blob was read: the file and its position in that file's stream (from 1)."""

    file: str
    index: int

    def __str__(self) -> str:
        return f"{self.file} (blob {self.index})"


class Entry(msgspec.Struct, frozen=True):
    name: str = ""
    replaces: str = ""
    skips: tuple[str, ...] = ()
    skipRange: str = ""  # noqa: N815 - the FBC field name


class Property(msgspec.Struct, frozen=True):
    type: str = ""
    value: Any = MISSING  # absent, unlike `null` (opm refuses an empty json.RawMessage)


class RelatedImage(msgspec.Struct, frozen=True):
    name: str = ""
    image: str = ""


class PackageBlob(msgspec.Struct):
    name: str = ""
    defaultChannel: str = ""  # noqa: N815
    description: str = ""
    properties: list[Property] = []
    origin: Origin | None = None


class ChannelBlob(msgspec.Struct):
    package: str = ""
    name: str = ""
    entries: list[Entry] = []
    properties: list[Property] = []
    origin: Origin | None = None


class BundleBlob(msgspec.Struct):
    name: str = ""
    package: str = ""
    image: str = ""
    properties: list[Property] = []
    relatedImages: list[RelatedImage] = []  # noqa: N815
    origin: Origin | None = None

    @property
    def has_objects(self) -> bool:
        """opm lets a bundle without image pass when it carries its manifests inline."""
        return any(p.type == "olm.bundle.object" for p in self.properties)


class Reference(msgspec.Struct, frozen=True):
    schema: str = ""
    name: str = ""


class DeprecationEntry(msgspec.Struct, frozen=True):
    reference: Reference = Reference()
    message: str = ""


class DeprecationBlob(msgspec.Struct):
    package: str = ""
    entries: list[DeprecationEntry] = []
    origin: Origin | None = None


# schema -> (its struct, the Catalog list that holds it)
_SCHEMAS: dict[str, tuple[type[msgspec.Struct], str]] = {
    SCHEMA_PACKAGE: (PackageBlob, "packages"),
    SCHEMA_CHANNEL: (ChannelBlob, "channels"),
    SCHEMA_BUNDLE: (BundleBlob, "bundles"),
    SCHEMA_DEPRECATIONS: (DeprecationBlob, "deprecations"),
}


@dataclass
class Catalog:
    """Every blob of one catalog, in file order (files in path order), by schema."""

    source: str
    packages: list[PackageBlob] = field(default_factory=list)
    channels: list[ChannelBlob] = field(default_factory=list)
    bundles: list[BundleBlob] = field(default_factory=list)
    deprecations: list[DeprecationBlob] = field(default_factory=list)
    others: list[tuple[Origin, dict[str, Any]]] = field(default_factory=list)

    def add(self, blob: Any, origin: Origin) -> None:
        """Type one decoded blob and file it under its schema."""
        if blob is None:  # a null document leaves opm's Meta empty: no schema
            raise InputError(
                f"{origin}: object '' is missing root schema field (every catalog object needs one)",
                rule="opm load",
            )
        if not isinstance(blob, dict):
            raise InputError(
                f"{origin}: a catalog blob must be an object, not {type(blob).__name__}",
                rule="opm load",
            )
        # declcfg.go Meta.UnmarshalJSON: keys that fold to the same name are refused in
        # every blob, and schema/package/name are found whatever their case.
        _reject_case_twins(blob, origin)
        schema = _meta_value(blob, "schema", origin)
        for meta in ("package", "name"):  # read as strings too, even where no schema has them
            _meta_value(blob, meta, origin)
        if not schema:
            raise InputError(
                f"{origin}: object '{_compact(blob)}' is missing root schema field "
                "(every catalog object needs one)",
                rule="opm load",
            )
        known = _SCHEMAS.get(schema)
        if known is None:
            self.others.append((origin, blob))
            return
        kind, holder = known
        try:
            typed = msgspec.convert(go_fields(blob, kind), kind, strict=True)
        except msgspec.ValidationError as exc:
            raise InputError(f"{origin}: {schema} blob: {exc}", rule="opm load") from None
        typed.origin = origin  # type: ignore[attr-defined]
        getattr(self, holder).append(typed)

    def unknown_olm_schemas(self) -> list[tuple[Origin, str]]:
        """Blobs whose schema looks like opm's but is not one (likely a typo)."""
        found = [(origin, _meta_value(blob, "schema", origin)) for origin, blob in self.others]
        return [
            (origin, schema)
            for origin, schema in found
            if schema.startswith("olm.") and schema not in KNOWN_OTHER_SCHEMAS
        ]


def _reject_case_twins(blob: dict[str, Any], origin: Origin) -> None:
    """declcfg.go extractUniqueMetaKeys: keys whose case folding is equal collide
    (`duplicate keys for key "name": [Name name]`)."""
    folded: dict[str, list[str]] = {}
    for key in blob:
        folded.setdefault(str(key).casefold(), []).append(str(key))
    twins = [
        f"duplicate keys for key {go_quote(fold)}: [{' '.join(sorted(keys))}]"
        for fold, keys in folded.items()
        if len(keys) > 1
    ]
    if twins:
        text = twins[0] if len(twins) == 1 else "[" + ", ".join(twins) + "]"
        raise InputError(f"{origin}: {text}", rule="opm load")


def _meta_value(blob: dict[str, Any], name: str, origin: Origin) -> str:
    """A meta key (schema, package, name) looked up case-insensitively, as opm does."""
    for key, value in blob.items():
        if str(key).casefold() == name:
            if not isinstance(value, str):
                raise InputError(
                    f"{origin}: expected value for key {go_quote(str(key))} to be a string, "
                    f"got {go_t(value)}: {go_v(value)}",
                    rule="opm load",
                )
            return value
    return ""


def _compact(blob: dict[str, Any]) -> str:
    text = json.dumps(blob, separators=(",", ":"), ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:200] + "..."


def _struct(kind: Any) -> type[msgspec.Struct] | None:
    return kind if isinstance(kind, type) and issubclass(kind, msgspec.Struct) else None


@functools.cache
def _go_field_map(
    kind: type[msgspec.Struct],
) -> tuple[dict[str, tuple[Any, bool, bool]], dict[str, str]]:
    """Per JSON field of `kind`: (the struct to descend into or None, whether it is a
    list of them, whether null is a value), and the case-folded names. Computed once per
    type: catalogs hold tens of thousands of entries."""
    fields: dict[str, tuple[Any, bool, bool]] = {}
    for info in msgspec.structs.fields(kind):
        if info.name == "origin":
            continue
        args = [a for a in get_args(info.type) if a is not Ellipsis]
        listed = get_origin(info.type) in (list, tuple) and len(args) == 1
        child = _struct(args[0]) if listed else _struct(info.type)
        fields[info.encode_name] = (child, listed and child is not None, info.type is Any)
    folded: dict[str, str] = {}
    for name in fields:
        folded.setdefault(name.casefold(), name)
    return fields, folded


def go_fields(value: Any, kind: Any) -> Any:
    """`value` with its object keys renamed to `kind`'s fields as Go's encoding/json
    matches them: the exact name first, else case-insensitively; of keys naming the same
    field the last in sorted order wins; unknown keys and nulls are dropped (Go ignores the
    one and leaves the zero value for the other).

    Hand-written because msgspec (like every Python decoder) matches names exactly, and
    opm's catalogs in the wild use `Name`, `DefaultChannel` and the like.
    """
    struct = _struct(kind)
    if struct is None or not isinstance(value, dict):
        return value
    fields, folded = _go_field_map(struct)
    out: dict[str, Any] = {}
    # opm re-encodes each blob from a map (Meta.UnmarshalJSON), so Go's decoder meets the
    # keys sorted: of two keys naming one field, the later in that order wins.
    for key in sorted(value):
        item = value[key]
        found = key if key in fields else folded.get(str(key).casefold())
        if found is None:
            continue
        child, listed, nullable = fields[found]
        if item is None and not nullable:
            continue
        if child is not None and listed and isinstance(item, list):
            out[found] = [go_fields(element, child) for element in item]
        elif child is not None and not listed:
            out[found] = go_fields(item, child)
        else:
            out[found] = item
    return out
