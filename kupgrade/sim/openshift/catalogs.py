"""Where a simulated cluster's OLM reads its catalogs from: the CatalogSource's file or
directory (a file-based catalog), loaded once and again only when it changes, or its
catalog image, pulled from its registry (every blob checked) and pulled again when the
controller says its poll is due (SPEC F1)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from kupgrade.cluster.olm import SOURCE_FILE
from kupgrade.errors import InputError
from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.load import load_catalog
from kupgrade.release.catalog_image import pull_catalog, unpack


def _stamp(path: Path) -> tuple[float, int]:
    """A catalog's last change: the newest file's mtime and the number of files."""
    if path.is_dir():
        files = [p for p in path.rglob("*") if p.is_file()]
        return max((p.stat().st_mtime for p in files), default=0.0), len(files)
    return path.stat().st_mtime, 1


# Loaded catalogs by path, shared by every cluster of the process (a real catalog of
# tens of megabytes is read once); an entry is replaced when its files change.
_LOADED: dict[str, tuple[tuple[float, int], CatalogIndex]] = {}


class CatalogCache:
    """A CatalogSource object -> its catalog's index (the controller's CatalogLoader)."""

    def __init__(self) -> None:
        self._loaded = _LOADED
        self._images: dict[str, tuple[str, CatalogIndex]] = {}  # reference -> digest, index
        self._unpacked = tempfile.TemporaryDirectory(prefix="kupgrade-catalogs-")

    def __call__(self, source: dict[str, Any], fresh: bool = False) -> CatalogIndex:
        """The source's catalog; an image is pulled again when `fresh` (its poll)."""
        spec = source.get("spec") or {}
        meta = source["metadata"]
        where = f"catalog source {meta.get('namespace', '')}/{meta['name']}"
        if spec.get("sourceType") != SOURCE_FILE:
            return self._image(str(spec.get("image") or ""), where, fresh)
        path = Path(str(spec.get("path") or ""))
        try:
            stamp = _stamp(path)
        except OSError as exc:
            raise InputError(
                f"{where}: cannot read {path}: {exc.strerror}", file=str(path)
            ) from None
        cached = self._loaded.get(str(path))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        index = CatalogIndex.build(load_catalog(path))
        self._loaded[str(path)] = (stamp, index)
        return index

    def _image(self, reference: str, where: str, fresh: bool) -> CatalogIndex:
        cached = self._images.get(reference)
        if cached is not None and not fresh:
            return cached[1]
        try:
            pulled = pull_catalog(reference)
        except InputError as exc:
            raise InputError(f"{where}: {exc.message}", hint=exc.hint) from None
        if cached is not None and cached[0] == pulled.digest:
            return cached[1]
        index = CatalogIndex.build(load_catalog(unpack(pulled, Path(self._unpacked.name))))
        self._images[reference] = (pulled.digest, index)
        return index
