"""The blobs of a file-based catalog, typed the way opm's declcfg types them.

A catalog is a stream of JSON/YAML objects, each with a `schema`. The four schemas opm
knows are parsed into structs (a field of the wrong type is a load error, as in Go's
decoder); every other schema is kept as it is (`others`), as opm keeps it. Each blob
remembers the file and position it came from so errors can point at it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from kupgrade.errors import InputError

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
    value: Any = None


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
        if not isinstance(blob, dict):
            raise InputError(
                f"{origin}: a catalog blob must be an object, not {type(blob).__name__}",
                rule="opm load",
            )
        schema = blob.get("schema")
        if not isinstance(schema, str) or not schema:
            raise InputError(
                f"{origin}: blob has no 'schema' field (every catalog object needs one)",
                rule="opm load",
            )
        known = _SCHEMAS.get(schema)
        if known is None:
            self.others.append((origin, blob))
            return
        kind, holder = known
        _reject_case_twins(blob, origin)
        try:
            typed = msgspec.convert(blob, kind, strict=True)
        except msgspec.ValidationError as exc:
            raise InputError(f"{origin}: {schema} blob: {exc}", rule="opm load") from None
        typed.origin = origin  # type: ignore[attr-defined]
        getattr(self, holder).append(typed)

    def unknown_olm_schemas(self) -> list[tuple[Origin, str]]:
        """Blobs whose schema looks like opm's but is not one (likely a typo)."""
        return [
            (origin, blob["schema"])
            for origin, blob in self.others
            if blob["schema"].startswith("olm.") and blob["schema"] not in KNOWN_OTHER_SCHEMAS
        ]


def _reject_case_twins(blob: dict[str, Any], origin: Origin) -> None:
    """Go's decoder matches field names case-insensitively, so `name` and `Name` collide."""
    if len({key.lower() for key in blob}) != len(blob):
        seen: dict[str, str] = {}
        for key in blob:
            if key.lower() in seen:
                raise InputError(
                    f"{origin}: keys {seen[key.lower()]!r} and {key!r} differ only in case",
                    rule="opm load",
                )
            seen[key.lower()] = key
