"""`opm render`: catalogs and bundle directories to one stream of file-based catalog
blobs (operator-registry alpha/action/render.go Render.Run at 4f9d6f22).

A catalog's blobs are projected onto opm's Go structs (declcfg.go): keys matched
case-insensitively, unknown keys dropped, property values and unknown-schema blobs as
opm holds them after its Meta round trip (every object's keys sorted, numbers as
float64). Each reference's bundles then get their bundle objects moved to the end of
their properties and their related images sorted by image, as Render.Run does.

opm renders only directories; kupgrade also takes a catalog file, as its other commands do.
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Any

import msgspec

from kupgrade.errors import InputError
from kupgrade.olm.bundle_dir import CSV_KIND, go_marshal, is_bundle_dir, render_bundle_dir
from kupgrade.olm.catalog import SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_DEPRECATIONS, SCHEMA_PACKAGE
from kupgrade.olm.declcfg_write import DeclConfig, Raw, RenderedBundle, go_interface, raw_interface
from kupgrade.olm.listing import csv_object
from kupgrade.olm.load import catalog_files, load_catalog, read_blobs
from kupgrade.olm.manifests import is_package_manifests
from kupgrade.versions import go_quote

_OBJECT_TYPES = ("olm.bundle.object", "olm.csv.metadata")


def _get(blob: dict[str, Any], name: str) -> Any:
    """Go's decoder on opm's key-sorted blob: every key folding to the field's name sets
    it in turn (the last wins); null leaves it as it was."""
    found = None
    folded = name.casefold()
    for key in sorted(blob, key=lambda k: str(k).encode()):
        if str(key).casefold() == folded and blob[key] is not None:
            found = blob[key]
    return found


def _str(blob: dict[str, Any], name: str) -> str:
    value = _get(blob, name)
    return value if isinstance(value, str) else ""


def _items(blob: dict[str, Any], name: str) -> list[dict[str, Any]] | None:
    value = _get(blob, name)
    if not isinstance(value, list):
        return None
    return [v if isinstance(v, dict) else {} for v in value]


def _properties(blob: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": _str(p, "type"),
            "value": raw_interface(_get(p, "value"))
            if _get(p, "value") is not None
            else Raw("null"),
        }
        for p in _items(blob, "properties") or []
    ]


def package_blob(blob: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "schema": _str(blob, "schema"),
        "name": _str(blob, "name"),
        "defaultChannel": _str(blob, "defaultChannel"),
    }
    icon = _get(blob, "icon")
    if isinstance(icon, dict):
        data = _str(icon, "base64data")
        try:
            data = base64.b64encode(base64.b64decode(data, validate=True)).decode()
        except (binascii.Error, ValueError):
            raise InputError(
                f"package {go_quote(out['name'])}: icon base64data is not base64"
            ) from None
        out["icon"] = {"base64data": data, "mediatype": _str(icon, "mediatype")}
    if _str(blob, "description"):
        out["description"] = _str(blob, "description")
    if _properties(blob):
        out["properties"] = _properties(blob)
    return out


def channel_blob(blob: dict[str, Any]) -> dict[str, Any]:
    entries = _items(blob, "entries")
    out: dict[str, Any] = {
        "schema": _str(blob, "schema"),
        "name": _str(blob, "name"),
        "package": _str(blob, "package"),
        "entries": None if entries is None else [_entry(e) for e in entries],
    }
    if _properties(blob):
        out["properties"] = _properties(blob)
    return out


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": _str(entry, "name")}
    if _str(entry, "replaces"):
        out["replaces"] = _str(entry, "replaces")
    skips = _get(entry, "skips")
    if isinstance(skips, list) and skips:
        out["skips"] = [s if isinstance(s, str) else "" for s in skips]
    if _str(entry, "skipRange"):
        out["skipRange"] = _str(entry, "skipRange")
    return out


def bundle_blob(blob: dict[str, Any]) -> RenderedBundle:
    out: dict[str, Any] = {"schema": _str(blob, "schema")}
    for name in ("name", "package"):
        if _str(blob, name):
            out[name] = _str(blob, name)
    out["image"] = _str(blob, "image")
    properties = _properties(blob)
    if properties:
        out["properties"] = properties
    related = [
        {"name": _str(r, "name"), "image": _str(r, "image")}
        for r in _items(blob, "relatedImages") or []
    ]
    if related:
        out["relatedImages"] = related
    objects = [
        json.loads(p["value"].text)
        for p in properties
        if p["type"] == "olm.bundle.object" and isinstance(p["value"], Raw)
    ]
    csv = csv_object(objects)
    return RenderedBundle(out, go_marshal(csv) if csv else "")


def deprecation_blob(blob: dict[str, Any]) -> dict[str, Any]:
    entries = _items(blob, "entries")
    out_entries = None
    if entries is not None:
        out_entries = []
        for entry in entries:
            reference = _get(entry, "reference")
            ref = reference if isinstance(reference, dict) else {}
            doc: dict[str, Any] = {"schema": _str(ref, "schema")}
            if _str(ref, "name"):
                doc["name"] = _str(ref, "name")
            out_entries.append({"reference": doc, "message": _str(entry, "message")})
    return {
        "schema": _str(blob, "schema"),
        "package": _str(blob, "package"),
        "entries": out_entries,
    }


def add_blob(cfg: DeclConfig, blob: dict[str, Any]) -> None:
    """declcfg load.go fbcBuilder.addMeta: file one blob under its schema."""
    schema = _str(blob, "schema")
    if schema == SCHEMA_PACKAGE:
        cfg.packages.append(package_blob(blob))
    elif schema == SCHEMA_CHANNEL:
        cfg.channels.append(channel_blob(blob))
    elif schema == SCHEMA_BUNDLE:
        cfg.bundles.append(bundle_blob(blob))
    elif schema == SCHEMA_DEPRECATIONS:
        cfg.deprecations.append(deprecation_blob(blob))
    else:
        cfg.others.append(go_interface(blob))


def catalog_config(path: Path) -> DeclConfig:
    """SPEC F1, F4: A catalog on disk as opm's DeclarativeConfig (load errors are kupgrade's loader's)."""
    catalog = load_catalog(path)
    cfg = DeclConfig()
    if path.is_dir() and is_package_manifests(path):
        for kind in (catalog.packages, catalog.channels, catalog.bundles, catalog.deprecations):
            for typed in kind:
                doc = msgspec.to_builtins(typed)
                doc.pop("origin", None)
                doc["schema"] = {
                    "PackageBlob": SCHEMA_PACKAGE,
                    "ChannelBlob": SCHEMA_CHANNEL,
                    "BundleBlob": SCHEMA_BUNDLE,
                    "DeprecationBlob": SCHEMA_DEPRECATIONS,
                }[type(typed).__name__]
                add_blob(cfg, doc)
        return cfg
    for file in catalog_files(path):
        for blob in read_blobs(file):
            add_blob(cfg, blob)
    return cfg


def finish(cfg: DeclConfig) -> DeclConfig:
    """Render.Run per reference: bundle objects last, related images by image."""
    for bundle in cfg.bundles:
        props = bundle.blob.get("properties")
        if props:
            bundle.blob["properties"] = [p for p in props if p["type"] not in _OBJECT_TYPES] + [
                p for p in props if p["type"] in _OBJECT_TYPES
            ]
        related = bundle.blob.get("relatedImages")
        if related:
            related.sort(key=lambda r: r["image"].encode())
    return cfg


def render_path(path: Path, image_template: str = "") -> DeclConfig:
    """One local reference: a bundle directory (its image from `image_template`, opm's
    --alpha-image-ref-template), or a catalog directory or file."""
    if not path.exists():
        raise InputError("no such catalog, bundle directory or file", file=str(path))
    if is_bundle_dir(path):
        return finish(DeclConfig(bundles=[render_bundle_dir(path, image_template)]))
    return finish(catalog_config(path))


def csv_document(bundle: RenderedBundle) -> dict[str, Any] | None:
    """The bundle's ClusterServiceVersion (CsvJSON), decoded."""
    if not bundle.csv_json:
        return None
    doc = json.loads(bundle.csv_json)
    return doc if isinstance(doc, dict) and doc.get("kind") == CSV_KIND else None
