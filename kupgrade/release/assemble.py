"""Putting a release together (`release new`) and describing one (`release info`).

A release must load in a real cluster, so `new` loads what it is about to build exactly
as the controller will (SPEC C5) and refuses to produce an image that would fail there.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.release.manifest import Manifest
from kupgrade.release.metadata import (
    IMAGE_REFERENCES,
    RELEASE_METADATA,
    ImageReferences,
    ReleaseMetadata,
    parse_image_references,
    parse_release_metadata,
)
from kupgrade.release.payload import (
    CVO_DIR,
    MANIFEST_SUFFIXES,
    RELEASE_DIR,
    Payload,
    PayloadFiles,
)
from kupgrade.release.taskgraph import Task
from kupgrade.versions import blang_error

PINNED = re.compile(r"^[^@\s]+@sha256:[0-9a-f]{64}$")
GENERATED = (RELEASE_METADATA, IMAGE_REFERENCES)


@dataclass(frozen=True)
class ReleaseSpec:
    """What `release new` is told about the release besides its manifests."""

    version: str
    previous: tuple[str, ...] = ()
    next: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    images: Mapping[str, str] = field(default_factory=dict)

    def validate(self) -> None:
        for flag, versions in (
            ("--version", (self.version,)),
            ("--previous", self.previous),
            ("--next", self.next),
        ):
            for version in versions:
                if problem := blang_error(version):
                    raise InputError(
                        f"{version!r} is not a semantic version: {problem}",
                        field=flag,
                        rule="SPEC B1",
                    )
        for name, spec in self.images.items():
            if not PINNED.match(spec):
                raise InputError(
                    f"image {name}={spec} is not pinned by digest (registry/repo@sha256:<64 hex>)",
                    field="--image",
                    rule="SPEC B1",
                )


def read_manifest_dir(root: Path) -> dict[str, bytes]:
    """Payload files from a directory: top-level manifests go to release-manifests/;
    `manifests/` and `release-manifests/` subdirectories keep their place."""
    if not root.is_dir():
        raise InputError("is not a directory", file=str(root), field="--manifests")
    files: dict[str, bytes] = {}

    def take(directory: Path, target: str) -> None:
        for entry in sorted(directory.iterdir()):
            if (
                entry.is_file()
                and entry.name.endswith(MANIFEST_SUFFIXES)
                and entry.name not in GENERATED
            ):
                key = f"{target}/{entry.name}"
                if key in files:
                    raise InputError(f"{entry.name} is given twice", file=str(entry))
                files[key] = intake.read_file(entry, "manifest")

    take(root, RELEASE_DIR)
    for sub in (CVO_DIR, RELEASE_DIR):
        if (root / sub).is_dir():
            take(root / sub, sub)
    if not files:
        raise InputError(
            "holds no .yaml, .yml or .json manifests", file=str(root), field="--manifests"
        )
    return files


def given_release_files(root: Path) -> dict[str, Path]:
    """The release-metadata and image-references a manifests directory brings along
    (top level or release-manifests/), by name."""
    found: dict[str, Path] = {}
    for name in GENERATED:
        for candidate in (root / name, root / RELEASE_DIR / name):
            if candidate.is_file():
                if name in found:
                    raise InputError(
                        f"{name} is given twice ({found[name]} and {candidate})",
                        file=str(candidate),
                    )
                found[name] = candidate
    return found


def merged_spec(spec: ReleaseSpec, given: Mapping[str, Path]) -> ReleaseSpec:
    """The flags merged over the directory's own release-metadata and image-references,
    so nothing they say is lost: previous/next are united, metadata keys and image tags
    given as flags win. A version that disagrees with --version is refused."""
    previous, following = list(spec.previous), list(spec.next)
    metadata: dict[str, Any] = {}
    images: dict[str, str] = {}
    if RELEASE_METADATA in given:
        path = given[RELEASE_METADATA]
        own = parse_release_metadata(intake.read_file(path, "release metadata"), str(path))
        if own.version and own.version != spec.version:
            raise InputError(
                f"says version {own.version} but --version is {spec.version}",
                file=str(path),
                hint="make them agree, or remove the file to take --version alone",
            )
        previous = list(dict.fromkeys([*own.previous, *previous]))
        following = list(dict.fromkeys([*own.next, *following]))
        metadata = dict(own.metadata)
    if IMAGE_REFERENCES in given:
        path = given[IMAGE_REFERENCES]
        data = intake.read_file(path, "image references")
        images = dict(parse_image_references(data, str(path)).tags)
    return ReleaseSpec(
        spec.version,
        tuple(previous),
        tuple(following),
        {**metadata, **spec.metadata},
        {**images, **spec.images},
    )


def payload_files(manifests: Mapping[str, bytes], spec: ReleaseSpec) -> dict[str, bytes]:
    """The manifests plus generated release-metadata and image-references (SPEC B1, B2)."""
    spec.validate()
    metadata = ReleaseMetadata(
        spec.version, spec.previous, spec.next, dict(sorted(spec.metadata.items()))
    ).to_json()
    references = ImageReferences(spec.version, dict(spec.images)).to_json()
    return {
        **manifests,
        f"{RELEASE_DIR}/{RELEASE_METADATA}": (json.dumps(metadata, indent=2) + "\n").encode(),
        f"{RELEASE_DIR}/{IMAGE_REFERENCES}": (json.dumps(references, indent=2) + "\n").encode(),
    }


def task_of(manifest: Manifest, index: int = 0, total: int = 0) -> Task:
    """A manifest as a task; a Job is batch/v1 Job exactly, as the controller splits on.
    `index` (1-based) and `total` place it in the payload, for the controller's messages."""
    job = manifest.id.group == "batch" and manifest.version == "v1" and manifest.id.kind == "Job"
    return Task(manifest.filename, job, manifest, index, total)


def counts(payload: Payload) -> dict[str, dict[str, int]]:
    """Included manifests by runlevel and by component (SPEC D)."""
    runlevels: Counter[str] = Counter()
    components: Counter[str] = Counter()
    for manifest in payload.included:
        parsed = task_of(manifest).runlevel_component
        runlevel, component = parsed if parsed else ("none", "none")
        runlevels[runlevel] += 1
        components[component] += 1
    return {
        "by_runlevel": dict(
            sorted(
                runlevels.items(),
                key=lambda kv: (kv[0] == "none", int(kv[0]) if kv[0].isdecimal() else 0),
            )
        ),
        "by_component": dict(sorted(components.items())),
    }


def describe(payload: Payload, files: PayloadFiles, extra: Mapping[str, Any]) -> dict[str, Any]:
    """`release info`: identity, metadata and what the payload holds."""
    meta = payload.metadata
    return {
        **extra,
        "version": meta.version,
        "previous": list(meta.previous),
        "next": list(meta.next),
        "metadata": meta.metadata,
        "channels": meta.channels,
        "architecture": meta.architecture,
        "images": len(payload.image_references.tags),
        "manifests": {
            "files": len([p for p in files.files if p.endswith(MANIFEST_SUFFIXES)]),
            "included": payload.total,
            "excluded": len(payload.excluded),
            **counts(payload),
        },
        "versionHash": payload.version_hash,
        "version_hash": payload.version_hash,
        "load_options": "profile self-managed-high-availability, Default feature set, no feature gates",
    }
