"""Legacy package manifests (SPEC F4): a `*.package.yaml` naming each channel's
`currentCSV` and the `defaultChannel`, next to ClusterServiceVersion files whose
`spec.replaces`, `spec.skips` and `olm.skipRange` annotation build the graph.

They are read into the same `Catalog` as a file-based catalog, the way `opm migrate`
would: each channel's members are the CSVs reached from its `currentCSV` along
`replaces` and `skips`; names reached that have no CSV are virtual nodes (SPEC F10).
"""

from __future__ import annotations

import base64
import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.olm.catalog import Catalog, Origin

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class Csv:
    name: str
    version: str
    replaces: str
    skips: tuple[str, ...]
    skip_range: str
    file: str
    document: dict[str, Any]


@dataclass
class PackageManifest:
    name: str
    default_channel: str
    channels: dict[str, str]  # channel -> currentCSV
    file: str
    csvs: dict[str, Csv] = field(default_factory=dict)

    def members(self, channel: str) -> tuple[list[str], list[str]]:
        """CSVs reached from the channel's currentCSV, and the names reached without a CSV."""
        members: list[str] = []
        virtual: list[str] = []
        seen: set[str] = set()
        queue = deque([self.channels[channel]])
        while queue:
            name = queue.popleft()
            if name in seen or not name:
                continue
            seen.add(name)
            csv = self.csvs.get(name)
            if csv is None:
                virtual.append(name)
                continue
            members.append(name)
            queue.append(csv.replaces)
            queue.extend(csv.skips)
        return members, virtual


def is_package_manifests(root: Path) -> bool:
    return any(root.glob("*.package.yaml")) or any(root.glob("*/*.package.yaml"))


def read_package_manifests(root: Path) -> list[PackageManifest]:
    """Every package under `root` (the root itself or its subdirectories)."""
    files = sorted(root.glob("*.package.yaml")) or sorted(root.glob("*/*.package.yaml"))
    return [_read_package(file) for file in files]


def load_package_manifests(root: Path) -> Catalog:
    """The package manifests under `root` as file-based-catalog blobs."""
    catalog = Catalog(source=str(root))
    for package in read_package_manifests(root):
        origin = Origin(package.file, 1)
        catalog.add(
            {
                "schema": "olm.package",
                "name": package.name,
                "defaultChannel": package.default_channel,
            },
            origin,
        )
        bundles: dict[str, Csv] = {}
        for channel in sorted(package.channels):
            members, _ = package.members(channel)
            entries = []
            for name in members:
                csv = package.csvs[name]
                bundles[name] = csv
                entry: dict[str, Any] = {"name": name}
                if csv.replaces:
                    entry["replaces"] = csv.replaces
                if csv.skips:
                    entry["skips"] = list(csv.skips)
                if csv.skip_range:
                    entry["skipRange"] = csv.skip_range
                entries.append(entry)
            catalog.add(
                {
                    "schema": "olm.channel",
                    "package": package.name,
                    "name": channel,
                    "entries": entries,
                },
                origin,
            )
        for csv in bundles.values():
            catalog.add(_bundle_blob(package.name, csv), Origin(csv.file, 1))
    return catalog


def _bundle_blob(package: str, csv: Csv) -> dict[str, Any]:
    data = base64.b64encode(json.dumps(csv.document, sort_keys=True).encode()).decode()
    return {
        "schema": "olm.bundle",
        "name": csv.name,
        "package": package,
        "image": "",
        "properties": [
            {"type": "olm.package", "value": {"packageName": package, "version": csv.version}},
            {"type": "olm.bundle.object", "value": {"data": data}},
        ],
    }


def _read_yaml(file: Path) -> Any:
    return intake.load_yaml(intake.read_file(file, "package manifest"), str(file), _LOADER)


def _text(doc: Any, key: str, file: Path) -> str:
    value = doc.get(key, "") if isinstance(doc, dict) else ""
    if not isinstance(value, str):
        raise InputError(f"must be a string, not {type(value).__name__}", file=str(file), field=key)
    return value


def _mapping(doc: dict[str, Any], key: str, file: Path, prefix: str = "") -> dict[str, Any]:
    """doc[key] as a mapping (absent or null: empty); an InputError for anything else."""
    value = doc.get(key) or {}
    if not isinstance(value, dict):
        raise InputError(
            f"must be a mapping, not {type(value).__name__}", file=str(file), field=prefix + key
        )
    return value


def _read_package(file: Path) -> PackageManifest:
    doc = _read_yaml(file)
    name = _text(doc, "packageName", file)
    if not name:
        raise InputError(
            "a package manifest needs packageName", file=str(file), field="packageName", rule="F4"
        )
    channels: dict[str, str] = {}
    listed = doc.get("channels") or []
    if not isinstance(listed, list):
        raise InputError("must be a list", file=str(file), field="channels", rule="F4")
    for i, channel in enumerate(listed):
        where = f"channels[{i}]"
        if (
            not isinstance(channel, dict)
            or not channel.get("name")
            or not channel.get("currentCSV")
        ):
            raise InputError(
                "each channel needs name and currentCSV", file=str(file), field=where, rule="F4"
            )
        channels[str(channel["name"])] = str(channel["currentCSV"])
    default = _text(doc, "defaultChannel", file) or (
        next(iter(channels)) if len(channels) == 1 else ""
    )
    package = PackageManifest(name, default, channels, str(file))
    for csv_file in sorted(file.parent.rglob("*.yaml")):
        if csv_file == file:
            continue
        csv = _read_csv(csv_file)
        if csv is not None:
            package.csvs[csv.name] = csv
    return package


def _read_csv(file: Path) -> Csv | None:
    doc = _read_yaml(file)
    if not isinstance(doc, dict) or doc.get("kind") != "ClusterServiceVersion":
        return None
    metadata = _mapping(doc, "metadata", file)
    spec = _mapping(doc, "spec", file)
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise InputError(
            "a ClusterServiceVersion needs metadata.name", file=str(file), field="metadata.name"
        )
    annotations = _mapping(metadata, "annotations", file, "metadata.")
    skips = spec.get("skips") or []
    if not isinstance(skips, list) or not all(isinstance(s, str) for s in skips):
        raise InputError(
            "must be a list of CSV names", file=str(file), field="spec.skips", rule="F7"
        )
    return Csv(
        name=name,
        version=str(spec.get("version", "")),
        replaces=str(spec.get("replaces") or ""),
        skips=tuple(skips),
        skip_range=str(annotations.get("olm.skipRange") or ""),
        file=str(file),
        document=doc,
    )
