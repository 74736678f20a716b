"""Operator catalog images: a file-based catalog under the directory the image's
`operators.operatorframework.io.index.configs.v1` label names (opm's default /configs),
built, pushed and pulled with the registry client releases use, every blob checked
against its digest (SPEC F1)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path

from kupgrade.errors import InputError
from kupgrade.release.oci import BuiltImage, build_image, open_image, read_tree
from kupgrade.release.registry import Reference, RegistryClient, RegistrySource

CONFIGS_LABEL = "operators.operatorframework.io.index.configs.v1"
CONFIGS_DIR = "configs"
MAX_FILES = 20_000


@dataclass(frozen=True)
class PulledCatalog:
    reference: str
    digest: str
    files: dict[str, bytes]  # relative to the configs directory


def build_catalog_image(catalog: Path) -> BuiltImage:
    """A catalog image of a file-based catalog (a file or a directory)."""
    if catalog.is_file():
        files = {f"{CONFIGS_DIR}/{catalog.name}": catalog.read_bytes()}
    elif catalog.is_dir():
        found = sorted(p for p in catalog.rglob("*") if p.is_file())
        if len(found) > MAX_FILES:
            raise InputError(
                f"catalog {catalog} has more than {MAX_FILES} files", file=str(catalog)
            )
        files = {
            f"{CONFIGS_DIR}/{p.relative_to(catalog).as_posix()}": p.read_bytes() for p in found
        }
    else:
        raise InputError(f"catalog {catalog} does not exist", file=str(catalog))
    return build_image(files, "catalog", labels={CONFIGS_LABEL: f"/{CONFIGS_DIR}"})


def _reference(text: str) -> Reference:
    ref = Reference.parse(text)
    if ref is None:
        raise InputError(
            f"{text!r} is not an image reference",
            field="--source",
            hint="HOST[:PORT]/REPOSITORY[:TAG|@sha256:DIGEST]",
        )
    return ref


def push_catalog(image: BuiltImage, target: str) -> str:
    """Push a built catalog image to `target` (a tag); its pull spec by digest."""
    ref = _reference(target)
    registry = RegistryClient(ref.registry)
    for blob in image.blobs.values():
        registry.push_blob(ref.repository, blob)
    digest = registry.push_manifest(ref.repository, ref.tag or "latest", image.manifest)
    return ref.pinned(digest)


def pull_catalog(text: str) -> PulledCatalog:
    """The catalog files of an image, every blob checked against its digest."""
    ref = _reference(text)
    image = open_image(RegistrySource(ref))
    labels = (image.config.get("config") or {}).get("Labels") or {}
    root = str(labels.get(CONFIGS_LABEL) or f"/{CONFIGS_DIR}").strip("/")
    if not root or ".." in root.split("/"):
        raise InputError(f"{text}: label {CONFIGS_LABEL}={root!r} names no directory")
    prefix = root + "/"
    tree = read_tree(image, keep=lambda path: path.startswith(prefix))
    files = {posixpath.relpath(p, root): data for p, data in tree.files.items()}
    if not files:
        raise InputError(
            f"{text} holds no catalog under /{root}",
            hint="a catalog image keeps its file-based catalog there (opm)",
        )
    return PulledCatalog(text, image.digest, files)


def unpack(pulled: PulledCatalog, directory: Path) -> Path:
    """Write a pulled catalog's files under `directory/<digest>`; that directory."""
    target = directory / pulled.digest.replace(":", "-")
    for name, data in pulled.files.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return target
