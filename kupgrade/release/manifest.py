"""A payload manifest: one Kubernetes object, the file it came from and its hashed bytes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kupgrade.errors import InputError
from kupgrade.release.documents import split_documents


@dataclass(frozen=True)
class ResourceId:
    """(group, kind, namespace, name): what makes two manifests the same object."""

    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        if self.namespace:
            return f'Group: "{self.group}" Kind: "{self.kind}" Namespace: "{self.namespace}" Name: "{self.name}"'
        return f'Group: "{self.group}" Kind: "{self.kind}" Name: "{self.name}"'


@dataclass(frozen=True)
class Manifest:
    """One object of the payload, as loaded (SPEC B1, C5)."""

    file: str  # path relative to the payload root, e.g. release-manifests/0000_50_x_01.yaml
    obj: dict[str, Any]
    raw: bytes
    id: ResourceId

    @property
    def filename(self) -> str:
        """The base name: what runlevel and component are read from (SPEC D)."""
        return self.file.rsplit("/", 1)[-1]

    @property
    def api_version(self) -> str:
        value = self.obj.get("apiVersion")
        return value if isinstance(value, str) else ""

    @property
    def version(self) -> str:
        return self.api_version.rsplit("/", 1)[-1]

    @property
    def annotations(self) -> dict[str, str] | None:
        """metadata.annotations, or None when absent or not all strings (as unstructured reads it)."""
        metadata = self.obj.get("metadata")
        value = metadata.get("annotations") if isinstance(metadata, dict) else None
        if not isinstance(value, dict):
            return None
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            return None
        return dict(value)

    def describe(self) -> str:
        return f'Filename: "{self.filename}" {self.id}'


def _resource_id(obj: Any, file: str, index: int) -> ResourceId:
    if not isinstance(obj, dict):
        raise InputError(
            f"document {index} is a {type(obj).__name__}, not a Kubernetes object", file=file
        )
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise InputError(
            f"document {index}: metadata must be an object", file=file, field="metadata"
        )
    metadata = metadata or {}
    name, namespace = metadata.get("name"), metadata.get("namespace")
    for field, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"document {index}: {field} must be a string", file=file, field=field)
    for field, value in (("metadata.name", name), ("metadata.namespace", namespace)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"document {index}: {field} must be a string", file=file, field=field)
    group = api_version.rsplit("/", 1)[0] if api_version and "/" in api_version else ""
    rid = ResourceId(group, kind or "", namespace or "", name or "")
    if not rid.kind or not rid.name:
        raise InputError(
            f"document {index}: Resource with fields {rid} must contain kubernetes required fields kind and name",
            file=file,
            rule="SPEC C5",
        )
    return rid


def parse_manifests(data: bytes, file: str) -> list[Manifest]:
    """Every object of one file; an object twice in the same file is refused (SPEC C5)."""
    seen: set[ResourceId] = set()
    manifests: list[Manifest] = []
    for document in split_documents(data, file):
        rid = _resource_id(document.value, file, document.index)
        if rid in seen:
            raise InputError(f"duplicate resource: ({rid})", file=file, rule="SPEC C5")
        seen.add(rid)
        manifests.append(Manifest(file, document.value, document.raw, rid))
    return manifests
