"""Loading an extracted payload as the version controller does (SPEC B, C5).

`manifests/` (the controller's own, rendered as templates) then `release-manifests/`, each
directory's files in byte order of their names, only `.yaml`, `.yml` and `.json`. Parse
errors do not stop the scan: they are collected and reported together, so a payload
author sees every broken file at once. The result lists what is applied, what is left out
and why, and the versionHash the controller would compute.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import fnv_c

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.release.inclusion import CLUSTER_DEFAULTS, Options, apply_action, exclusion_reason
from kupgrade.release.manifest import Manifest, parse_manifests
from kupgrade.release.metadata import (
    IMAGE_REFERENCES,
    RELEASE_METADATA,
    ImageReferences,
    ReleaseMetadata,
    parse_image_references,
    parse_release_metadata,
)
from kupgrade.release.template import TemplateError, render

CVO_DIR = "manifests"
RELEASE_DIR = "release-manifests"
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


class PayloadError(InputError):
    """The payload cannot be used; `reason` is the controller's UpdateError reason."""

    def __init__(self, message: str, *, reason: str = "UpdatePayloadIntegrity", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.reason = reason


@dataclass(frozen=True)
class PayloadFiles:
    """The top-level files of `manifests/` and `release-manifests/`, by relative path."""

    files: Mapping[str, bytes]
    directories: frozenset[str] = frozenset({CVO_DIR, RELEASE_DIR})
    origin: str = "payload"

    def listing(self, directory: str) -> list[str]:
        prefix = directory + "/"
        names = [p for p in self.files if p.startswith(prefix) and "/" not in p[len(prefix) :]]
        return sorted(names, key=lambda p: p.encode())


def read_directory(root: Path) -> PayloadFiles:
    """Read an extracted payload: top-level regular files of its two directories."""
    files: dict[str, bytes] = {}
    present = set()
    for directory in (CVO_DIR, RELEASE_DIR):
        path = root / directory
        if not path.is_dir():
            continue
        present.add(directory)
        for entry in sorted(path.iterdir()):
            if entry.is_file():
                files[f"{directory}/{entry.name}"] = intake.read_file(entry, "manifest")
    return PayloadFiles(files, frozenset(present), str(root))


@dataclass(frozen=True)
class Excluded:
    manifest: Manifest
    reason: str


@dataclass(frozen=True)
class Skipped:
    file: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class LoadOptions:
    """The cluster's side of loading: pull spec for templates, and the inclusion filters."""

    release_image: str = ""
    inclusion: Options = CLUSTER_DEFAULTS


@dataclass(frozen=True)
class Payload:
    metadata: ReleaseMetadata
    image_references: ImageReferences
    release_image: str
    included: list[Manifest]
    excluded: list[Excluded]
    skipped: list[Skipped]
    ignored: list[str]
    version_hash: str

    @property
    def total(self) -> int:
        """M in "N of M done": every included manifest."""
        return len(self.included)

    @property
    def version(self) -> str:
        return self.metadata.version

    def release_json(self) -> dict[str, Any]:
        """The ClusterVersion `Release` object the controller builds from this payload."""
        return {
            "version": self.metadata.version,
            "image": self.release_image,
            "url": self.metadata.url,
            "channels": self.metadata.channels,
            "architecture": self.metadata.architecture,
        }


def version_hash(raws: list[bytes]) -> str:
    """FNV-1 (not 1a) 64-bit over the concatenated raw bytes, base64url with padding.

    fnv-c hashes in C: a release's ~30 MB of manifests would take seconds in Python.
    """
    value = fnv_c.fnv1_64(b"".join(raws))
    return base64.urlsafe_b64encode(value.to_bytes(8, "big")).decode()


def _validate_layout(files: PayloadFiles) -> None:
    for directory in (CVO_DIR, RELEASE_DIR):
        if directory not in files.directories:
            raise PayloadError(
                f"{directory}/ is missing: an extracted payload holds manifests/ and release-manifests/",
                file=files.origin,
                rule="SPEC B2",
            )
    for name in (RELEASE_METADATA, IMAGE_REFERENCES):
        if f"{RELEASE_DIR}/{name}" not in files.files:
            raise PayloadError(
                f"{RELEASE_DIR}/{name} is missing", file=files.origin, rule="SPEC B2"
            )


def load_metadata(files: PayloadFiles) -> tuple[ReleaseMetadata, ImageReferences]:
    """release-metadata and image-references, checked against each other (SPEC C5)."""
    _validate_layout(files)
    meta_path, refs_path = f"{RELEASE_DIR}/{RELEASE_METADATA}", f"{RELEASE_DIR}/{IMAGE_REFERENCES}"
    metadata = parse_release_metadata(files.files[meta_path], meta_path)
    refs = parse_image_references(files.files[refs_path], refs_path)
    if refs.name != metadata.version:
        raise PayloadError(
            f"version from {IMAGE_REFERENCES} ({refs.name}) differs from {RELEASE_METADATA} ({metadata.version})",
            file=refs_path,
            field="metadata.name",
            rule="SPEC C5",
        )
    return metadata, refs


def _aggregate(errors: list[str]) -> str:
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def load_payload(files: PayloadFiles, options: LoadOptions | None = None) -> Payload:
    """Load as the controller's LoadUpdate; raise PayloadError listing every broken file."""
    options = options or LoadOptions()
    metadata, refs = load_metadata(files)
    inclusion = options.inclusion
    if inclusion.major_version is None:
        inclusion = replace(inclusion, major_version=metadata.major)
    context = {
        "ReleaseImage": options.release_image,
        "ClusterProfile": inclusion.profile or "",
        "Images": refs.tags,
    }
    included: list[Manifest] = []
    excluded: list[Excluded] = []
    skipped: list[Skipped] = []
    ignored: list[str] = []
    errors: list[str] = []
    for directory in (CVO_DIR, RELEASE_DIR):
        for path in files.listing(directory):
            name = path.rsplit("/", 1)[-1]
            if directory == RELEASE_DIR and name in (RELEASE_METADATA, IMAGE_REFERENCES):
                continue
            if not name.endswith(MANIFEST_SUFFIXES):
                ignored.append(path)
                continue
            data = files.files[path]
            if directory == CVO_DIR:
                try:
                    data = render(data.decode("utf-8"), context).encode("utf-8")
                except (TemplateError, UnicodeDecodeError) as exc:
                    skipped.append(Skipped(path, "template rendering failed", str(exc)))
                    continue
            try:
                manifests = parse_manifests(data, path)
            except InputError as exc:
                errors.append(f"parse {name}: {exc.message}")
                continue
            for manifest in manifests:
                reason = exclusion_reason(manifest.id, manifest.annotations, inclusion)
                if reason is not None:
                    excluded.append(Excluded(manifest, reason))
                    continue
                try:
                    apply_action(manifest.annotations, path)
                except InputError as exc:
                    errors.append(f"parse {name}: {exc.message}")
                    continue
                included.append(manifest)
    if errors:
        raise PayloadError(
            f"Error loading manifests from {files.origin}: {_aggregate(errors)}", rule="SPEC C5"
        )
    return Payload(
        metadata,
        refs,
        options.release_image,
        included,
        excluded,
        skipped,
        ignored,
        version_hash([m.raw for m in included]),
    )
