"""Reading a catalog from disk: a file, a directory of files, or legacy package manifests.

Like opm, every file under a catalog directory is parsed whatever its extension (a stream
of concatenated JSON objects when it starts with `{`, else a multi-document YAML stream,
both read as opm's decoder reads them: kupgrade.olm.opmyaml), except what `.indexignore`
files exclude (gitignore syntax, via pathspec).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pathspec

from kupgrade import intake
from kupgrade.collector import paused
from kupgrade.errors import InputError
from kupgrade.olm.catalog import Catalog, Origin
from kupgrade.olm.manifests import is_package_manifests, load_package_manifests
from kupgrade.olm.opmyaml import read_stream


@paused()  # a real catalog is a million small objects: see kupgrade.collector
def load_catalog(path: str | Path) -> Catalog:
    """Load the catalog at `path`; raise InputError naming the file on any load failure."""
    root = Path(path)
    if not root.exists():
        raise InputError("no such catalog file or directory", file=str(root))
    if not root.is_dir():
        intake.require_regular(root, "catalog file")
    if root.is_dir() and is_package_manifests(root):
        return load_package_manifests(root)
    catalog = Catalog(source=str(root))
    for file in catalog_files(root):
        for index, blob in enumerate(read_blobs(file), start=1):
            catalog.add(blob, Origin(str(file), index))
    return catalog


def catalog_files(root: Path) -> list[Path]:
    """The files opm would read under `root`, in lexical path order."""
    if root.is_file():
        return [root]
    files: list[Path] = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames.sort()
        here = Path(directory)
        for name in sorted(filenames):
            if name != ".indexignore":
                files.append(here / name)
    ignore = _ignore_spec(root)
    return [f for f in files if not ignore(f.relative_to(root))]


def _ignore_spec(root: Path) -> Callable[[Path], bool]:
    """A predicate for the paths any `.indexignore` (at any depth) excludes."""
    specs: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
    for found in sorted(root.rglob(".indexignore")):
        base = found.parent.relative_to(root)
        lines = intake.read_file(found, "ignore file").decode("utf-8", "replace").splitlines()
        specs.append((base, pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(relative: Path) -> bool:
        for base, spec in specs:
            if base == Path(".") or base in relative.parents:
                inner = relative.relative_to(base) if base != Path(".") else relative
                if spec.match_file(inner.as_posix()):
                    return True
        return False

    return ignored


def read_blobs(file: Path) -> Iterator[Any]:
    """Decode one catalog file into its objects, as opm's decoder does (opmyaml)."""
    text = intake.decode_utf8(intake.read_file(file, "catalog file"), str(file))
    yield from read_stream(text, str(file))
