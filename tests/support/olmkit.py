"""Writing conformance inputs as the files the `kupgrade olm` commands read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OLM = ("olm",)


def write_blobs(directory: Path, blobs: list[dict[str, Any]]) -> Path:
    """FBC blobs as one JSON stream file in an empty directory (validation.yaml's rule)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "catalog.json").write_text("\n".join(json.dumps(b) for b in blobs) + "\n")
    return directory


def write_files(directory: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return directory


def compact_blobs(source: dict[str, Any]) -> list[dict[str, Any]]:
    """resolver.yaml's compact single-package source as FBC blobs (its README's rule)."""
    channels = source.get("channels") or {source["channel"]: source["entries"]}
    package = source["package"]
    blobs: list[dict[str, Any]] = [
        {
            "schema": "olm.package",
            "name": package,
            "defaultChannel": source.get("defaultChannel") or next(iter(channels)),
        }
    ]
    bundles: dict[str, dict[str, Any]] = {}
    for name, entries in channels.items():
        blobs.append(
            {
                "schema": "olm.channel",
                "package": package,
                "name": name,
                "entries": [
                    {k: v for k, v in e.items() if k in ("name", "replaces", "skips", "skipRange")}
                    for e in entries
                ],
            }
        )
        for entry in entries:
            bundles.setdefault(entry["name"], entry)
    for name, entry in bundles.items():
        props: list[dict[str, Any]] = [
            {
                "type": "olm.package",
                "value": {"packageName": package, "version": entry.get("version", "0.0.0")},
            }
        ]
        if entry.get("deprecated"):
            props.append({"type": "olm.deprecated", "value": {}})
        blobs.append(
            {
                "schema": "olm.bundle",
                "name": name,
                "package": package,
                "image": "",
                "properties": props,
            }
        )
    return blobs
