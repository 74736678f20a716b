"""Where a release image is read from: an OCI layout directory, its tar, or a registry.

REF on the command line is any of the three; each answers the same two questions (the
image manifest, and a blob by descriptor) and every answer is checked against its digest.
"""

from __future__ import annotations

import tarfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kupgrade.errors import InputError
from kupgrade.intake import decode_json
from kupgrade.intake.files import open_regular, os_problem, require_regular
from kupgrade.release.oci import (
    Descriptor,
    Image,
    ImageSource,
    IntegrityError,
    Limits,
    check_blob,
    check_declared_size,
    open_image,
    read_tree,
    select_manifest,
)
from kupgrade.release.payload import RELEASE_DIR, PayloadFiles, read_directory
from kupgrade.release.registry import Reference, RegistryClient, RegistrySource
from kupgrade.release.staged import TreeWriter


def _json(data: bytes, where: str) -> Any:
    try:
        return decode_json(data, where)
    except InputError as exc:
        raise IntegrityError(exc.message, file=where, hint=exc.hint) from None


# index.json and oci-layout have no descriptor; containers/image bounds such documents
# (iolimits.MaxManifestBodySize) at 4 MiB.
MAX_INDEX_BYTES = 4 * 1024 * 1024


def _blob_path(descriptor: Descriptor) -> str:
    algorithm, _, value = descriptor.digest.partition(":")
    return f"blobs/{algorithm}/{value}"


class _Layout:
    """What both layout forms share: index.json picks the manifest, blobs are checked.

    A subclass says how to read a file of the layout (`_read`, at most `limit` + 1 bytes,
    so an oversized blob is refused as a size mismatch without being read whole).
    """

    name: str
    ref: str | None
    kind: str

    def _has(self, relative: str) -> bool:
        raise NotImplementedError

    def _read(self, relative: str, limit: int | None = None) -> bytes:
        raise NotImplementedError

    def manifest(self) -> tuple[Descriptor, bytes]:
        if not self._has("oci-layout"):
            raise InputError(
                f"is not an OCI image layout {self.kind} (no oci-layout)", file=self.name
            )
        descriptor = select_manifest(
            _json(self._read("index.json"), self.name), self.name, self.ref
        )
        size = check_declared_size(descriptor, self.name)
        return descriptor, self._read(_blob_path(descriptor), size)

    def blob(self, descriptor: Descriptor) -> bytes:
        size = check_declared_size(descriptor, self.name)
        return check_blob(self._read(_blob_path(descriptor), size), descriptor, self.name)


def _bounded(limit: int | None) -> int:
    """How much to read: one byte past a declared size (a mismatch shows), else the limit."""
    return limit + 1 if limit is not None else MAX_INDEX_BYTES + 1


class LayoutDir(_Layout):
    """An OCI image layout directory (oci-layout, index.json, blobs/sha256/…)."""

    kind = "directory"

    def __init__(self, root: Path, ref: str | None = None) -> None:
        self.root = root
        self.name = str(root)
        self.ref = ref

    def _has(self, relative: str) -> bool:
        return (self.root / relative).is_file()

    def _read(self, relative: str, limit: int | None = None) -> bytes:
        try:
            with open_regular(self.root / relative, relative) as handle:
                return handle.read(_bounded(limit))
        except OSError as exc:
            raise IntegrityError(
                f"cannot read {relative}: {os_problem(exc)}", file=self.name
            ) from None
        except InputError as exc:
            raise IntegrityError(exc.message, file=self.name) from None


class LayoutTar(_Layout):
    """An OCI image layout packed in a tar; members are read by name, never unpacked."""

    kind = "tar"

    def __init__(self, path: Path, ref: str | None = None) -> None:
        self.path = path
        self.name = str(path)
        self.ref = ref
        require_regular(path, "image layout tar")
        try:
            with tarfile.open(path, mode="r:*") as tar:
                self.members = {m.name.removeprefix("./"): m for m in tar.getmembers() if m.isreg()}
        except (OSError, EOFError, tarfile.TarError, zlib.error) as exc:
            raise InputError(f"is not a readable tar: {exc}", file=self.name) from None

    def _has(self, relative: str) -> bool:
        return relative in self.members

    def _read(self, relative: str, limit: int | None = None) -> bytes:
        member = self.members.get(relative)
        if member is None:
            raise IntegrityError(f"{relative} is missing from the layout", file=self.name)
        try:
            with tarfile.open(self.path, mode="r:*") as tar:
                handle = tar.extractfile(member)
                return handle.read(_bounded(limit)) if handle else b""
        except (OSError, EOFError, tarfile.TarError, zlib.error) as exc:
            raise IntegrityError(f"cannot read {relative}: {exc}", file=self.name) from None


def open_source(ref: str, *, plain_http: bool = False) -> ImageSource:
    """A layout directory, a layout tar, or registry/repo@sha256:… (or :tag)."""
    path = Path(ref)
    if path.is_dir():
        return LayoutDir(path)
    if path.is_file():
        return LayoutTar(path)
    reference = Reference.parse(ref)
    if reference is None:
        raise InputError(
            f"{ref!r} is neither an OCI layout (directory or tar) nor registry/repository@sha256:<hex>",
            field="REF",
        )
    return RegistrySource(reference, RegistryClient(reference.registry, plain_http=plain_http))


def write_tree(target: Path, files: Mapping[str, bytes], directories: Iterable[str] = ()) -> None:
    """Write files under a new directory, all or nothing: a sibling temp dir, then rename."""
    with TreeWriter(target, directories) as out:
        for relative, data in files.items():
            out.put(relative, data)


@dataclass(frozen=True)
class Opened:
    """A payload ready to load, and the image it came from when there is one."""

    files: PayloadFiles
    image: Image | None = None
    pull_spec: str | None = None

    @property
    def digest(self) -> str | None:
        return self.image.digest if self.image else None

    def identity(self) -> dict[str, str]:
        out = {"source": self.files.origin}
        if self.image is not None:
            out["digest"] = self.image.digest
        if self.pull_spec:
            out["pullSpec"] = self.pull_spec
        return out


def open_payload(ref: str, *, plain_http: bool = False, limits: Limits | None = None) -> Opened:
    """An extracted payload directory, or any image REF read (and checked) in memory."""
    path = Path(ref)
    if path.is_dir() and not (path / "oci-layout").exists():
        if not (path / RELEASE_DIR).is_dir():
            raise InputError(
                "is neither an extracted payload (release-manifests/) nor an OCI image layout",
                file=ref,
            )
        return Opened(read_directory(path))
    source = open_source(ref, plain_http=plain_http)
    image = open_image(source)
    tree = read_tree(image, limits)
    return Opened(tree.payload_files(source.name), image, pull_spec(source, image.digest))


def pull_spec(source: ImageSource, digest: str) -> str | None:
    """registry/repository@digest for a registry source; None for a layout."""
    return source.reference.pinned(digest) if isinstance(source, RegistrySource) else None
