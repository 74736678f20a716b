"""Where a simulated cluster's OLM reads its catalogs from: the CatalogSource's file or
directory (a file-based catalog), loaded once and again only when it changes (SPEC F)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kupgrade.cluster.olm import SOURCE_FILE
from kupgrade.errors import InputError
from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.load import load_catalog


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

    def __call__(self, source: dict[str, Any]) -> CatalogIndex:
        spec = source.get("spec") or {}
        where = (
            f"catalog source {source['metadata'].get('namespace', '')}/{source['metadata']['name']}"
        )
        if spec.get("sourceType") != SOURCE_FILE:
            raise InputError(f"{where}: only file and directory catalogs are read here",
                             hint="give the catalog as a file or directory")  # fmt: skip
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
