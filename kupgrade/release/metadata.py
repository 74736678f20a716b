"""`release-metadata` and `image-references`: what a payload says about itself (SPEC B1).

Validation follows the version controller, with its messages, because a payload our
tools accept must also be accepted by a real cluster and vice versa.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.versions import blang_error

METADATA_KIND = "cincinnati-metadata-v0"
CHANNELS_KEY = "io.openshift.upgrades.graph.release.channels"
ARCH_KEY = "release.openshift.io/architecture"
RELEASE_METADATA = "release-metadata"
IMAGE_REFERENCES = "image-references"


@dataclass(frozen=True)
class ReleaseMetadata:
    version: str
    previous: tuple[str, ...] = ()
    next: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def url(self) -> str | None:
        value = self.metadata.get("url")
        return value if isinstance(value, str) and value else None

    @property
    def channels(self) -> list[str]:
        """The channels metadata split on ",", empty entries dropped, sorted."""
        value = self.metadata.get(CHANNELS_KEY)
        if not isinstance(value, str):
            return []
        return sorted(part for part in value.split(",") if part)

    @property
    def architecture(self) -> str:
        """ "Multi" for a multi-architecture payload, else "" (the controller's own arch)."""
        return "Multi" if self.metadata.get(ARCH_KEY) == "multi" else ""

    @property
    def major(self) -> int:
        return int(self.version.split(".", 1)[0])

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": METADATA_KIND,
            "version": self.version,
            "previous": list(self.previous),
            "next": list(self.next),
            "metadata": self.metadata,
        }


def _string_list(doc: dict[str, Any], key: str, file: str) -> tuple[str, ...]:
    value = doc.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(
            "unmarshal Cincinnati metadata: must be a list of version strings", file=file, field=key
        )
    return tuple(value)


def parse_release_metadata(data: bytes, file: str = RELEASE_METADATA) -> ReleaseMetadata:
    """Read and check release-metadata (SPEC C5); errors carry the controller's wording."""
    try:
        doc = intake.decode_json(data, file)
    except InputError as exc:
        raise InputError(
            f"unmarshal Cincinnati metadata: {exc.message}", file=file, hint=exc.hint
        ) from None
    if not isinstance(doc, dict):
        raise InputError("unmarshal Cincinnati metadata: must be a JSON object", file=file)
    kind = doc.get("kind")
    if kind != METADATA_KIND:
        shown = kind if isinstance(kind, str) else ""
        raise InputError(
            f'unrecognized Cincinnati metadata kind "{shown}"',
            file=file,
            field="kind",
            rule="SPEC C5",
        )
    version = doc.get("version")
    if not version:
        raise InputError(
            "missing required Cincinnati metadata version",
            file=file,
            field="version",
            rule="SPEC C5",
        )
    if not isinstance(version, str):
        raise InputError(
            "unmarshal Cincinnati metadata: version must be a string", file=file, field="version"
        )
    if problem := blang_error(version):
        raise InputError(
            f'invalid Cincinnati metadata version "{version}": {problem}',
            file=file,
            field="version",
            rule="SPEC C5",
        )
    metadata = doc.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InputError(
            "unmarshal Cincinnati metadata: must be an object", file=file, field="metadata"
        )
    warnings = []
    arch = metadata.get(ARCH_KEY)
    if arch is not None and arch != "multi":
        warnings.append(f'unrecognized {ARCH_KEY} value "{arch}" (only "multi" is known); ignored')
    return ReleaseMetadata(
        version,
        _string_list(doc, "previous", file),
        _string_list(doc, "next", file),
        metadata,
        tuple(warnings),
    )


@dataclass(frozen=True)
class ImageReferences:
    """The ImageStream listing every component image, pinned by digest (SPEC B1)."""

    name: str
    tags: dict[str, str]  # tag name -> pull spec

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "ImageStream",
            "apiVersion": "image.openshift.io/v1",
            "metadata": {"name": self.name, "creationTimestamp": None},
            "spec": {
                "lookupPolicy": {"local": False},
                "tags": [
                    {"name": name, "from": {"kind": "DockerImage", "name": spec}}
                    for name, spec in sorted(self.tags.items())
                ],
            },
        }


def parse_image_references(data: bytes, file: str = IMAGE_REFERENCES) -> ImageReferences:
    try:
        doc = intake.load_yaml(data, file)
    except InputError as exc:
        raise InputError(
            f"unmarshal image-references: {exc.message}", file=file, hint=exc.hint
        ) from None
    if not isinstance(doc, dict) or doc.get("kind") != "ImageStream":
        raise InputError(f"{IMAGE_REFERENCES} is not a v1 ImageStream", file=file, field="kind")
    if doc.get("apiVersion") not in ("image.openshift.io/v1", "v1"):
        raise InputError(
            f"{IMAGE_REFERENCES} is not a v1 ImageStream", file=file, field="apiVersion"
        )
    metadata = doc.get("metadata") or {}
    name = metadata.get("name") if isinstance(metadata, dict) else None
    tags: dict[str, str] = {}
    spec = doc.get("spec") or {}
    for i, tag in enumerate((spec.get("tags") if isinstance(spec, dict) else None) or []):
        source = tag.get("from") if isinstance(tag, dict) else None
        if (
            not isinstance(tag, dict)
            or not isinstance(tag.get("name"), str)
            or not isinstance(source, dict)
        ):
            raise InputError("must have a name and a from", file=file, field=f"spec.tags[{i}]")
        tags[tag["name"]] = str(source.get("name", ""))
    return ImageReferences(name if isinstance(name, str) else "", tags)
