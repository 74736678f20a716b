"""A graph-data tree read into memory from a directory or a `.tar.gz`.

The builder, the lint and the service's `/graph-data` tarball all see the same snapshot:
the top-level files, `raw/`, `channels/` and `blocked-edges/` (one level, as Cincinnati
reads them). A tarball is untrusted: only regular files are read, paths that escape are
ignored, and sizes are bounded. A GitHub-style tarball with one top-level directory is
unwrapped.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from kupgrade.errors import InputError
from kupgrade.intake.files import kind_of, os_problem, read_file, require_regular

SUBDIRS = ("channels", "blocked-edges", "raw")
MAX_TREE_BYTES = 256 * 1024 * 1024
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_MEMBERS = 200_000


@dataclass(frozen=True, slots=True)
class Entry:
    """One directory entry: a readable file (data) or something that is not (problem)."""

    name: str
    data: bytes | None = None
    problem: str | None = None


@dataclass(slots=True)
class Tree:
    source: str
    top: dict[str, Entry] = field(default_factory=dict)
    dirs: dict[str, dict[str, Entry]] = field(default_factory=dict)

    def file(self, relpath: str) -> bytes | None:
        head, _, name = relpath.rpartition("/")
        entry = (self.dirs.get(head, {}) if head else self.top).get(name)
        return entry.data if entry is not None else None

    def listdir(self, subdir: str) -> list[Entry] | None:
        """Entries of a sub-directory sorted by name, or None if it does not exist."""
        entries = self.dirs.get(subdir)
        if entries is None:
            return None
        return [entries[name] for name in sorted(entries)]

    def digest(self) -> str:
        """sha256 over every readable file: equal digests mean equal inputs."""
        h = hashlib.sha256()
        items = [(name, e) for name, e in self.top.items()]
        items += [
            (f"{d}/{name}", e) for d, entries in self.dirs.items() for name, e in entries.items()
        ]
        for path, entry in sorted(items, key=lambda item: item[0]):
            h.update(path.encode() + b"\0")
            h.update(
                entry.data if entry.data is not None else b"\1" + (entry.problem or "").encode()
            )
            h.update(b"\0")
        return h.hexdigest()


def open_tree(path: Path) -> Tree:
    """Read a graph-data directory or gzip tarball; raises InputError if neither."""
    if path.is_dir():
        return _read_directory(path)
    if path.exists():
        require_regular(path, "graph-data tarball")
        return _read_tarball(path)
    raise InputError(
        "no such directory or file", file=str(path), hint="pass a graph-data directory or .tar.gz"
    )


def _read_directory(root: Path) -> Tree:
    tree = Tree(str(root))
    real_root = root.resolve()
    for entry in _scan(root):
        if entry.is_dir(follow_symlinks=True):
            if entry.name in SUBDIRS:
                real = not entry.is_symlink()
                tree.dirs[entry.name] = {
                    child.name: _read_scanned(child, real_root, real)
                    for child in _scan(Path(entry.path))
                }
            continue
        tree.top[entry.name] = _read_scanned(entry, real_root, True)
    return tree


def _read_scanned(entry: os.DirEntry[str], real_root: Path, real_parent: bool) -> Entry:
    """A listed entry: a regular file (no link) in a directory that is no link lies
    inside the tree, as scandir already says, so it is read without resolving its path
    (a third of the time of reading graph-data); anything else is checked in full."""
    if real_parent and not entry.is_symlink() and entry.is_file(follow_symlinks=False):
        return _guarded(entry.name, lambda: read_file(entry.path, max_bytes=MAX_FILE_BYTES))
    return _read_entry(Path(entry.path), real_root)


def _scan(path: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError as exc:
        raise InputError(f"cannot list directory: {exc.strerror}", file=str(path)) from None


def _read_entry(path: Path, real_root: Path) -> Entry:
    def read() -> bytes | Entry:
        try:
            resolved = path.resolve()
        except RuntimeError:  # Python before 3.13 says a loop so (3.13: OSError ELOOP)
            return Entry(path.name, problem="is a symbolic link that loops")
        if not resolved.is_relative_to(real_root):
            return Entry(path.name, problem="is a link that points outside the graph-data tree")
        kind = kind_of(resolved.stat().st_mode)
        if kind is not None:
            # A FIFO would block the read forever, a device never end: refuse unopened.
            return Entry(path.name, problem=f"is {kind}")
        return read_file(resolved, max_bytes=MAX_FILE_BYTES)

    return _guarded(path.name, read)


def _guarded(name: str, read: Callable[[], bytes | Entry]) -> Entry:
    """The entry read, or the problem that kept it from being read."""
    try:
        found = read()
    except OSError as exc:
        return Entry(name, problem=f"cannot be read: {os_problem(exc)}")
    except InputError as exc:
        return Entry(name, problem=exc.message)
    return found if isinstance(found, Entry) else Entry(name, data=found)


def _read_tarball(path: Path) -> Tree:
    tree = Tree(str(path))
    try:
        with tarfile.open(path, mode="r:*") as archive:
            members = _bounded_members(archive, path)
            prefix = _common_prefix([m.name for m in members])
            for member in members:
                _add_member(tree, archive, member, prefix)
    except (tarfile.TarError, EOFError, OSError, ValueError, zlib.error) as exc:
        # zlib.error: a gzip stream corrupt past its header (tarfile does not wrap it).
        raise InputError(f"not a readable tar archive: {exc}", file=str(path)) from None
    return tree


def _bounded_members(archive: tarfile.TarFile, path: Path) -> list[tarfile.TarInfo]:
    members, total = [], 0
    for member in archive:
        members.append(member)
        total += max(member.size, 0)
        if len(members) > MAX_MEMBERS or total > MAX_TREE_BYTES:
            raise InputError(
                f"archive exceeds the limits ({MAX_MEMBERS} members, {MAX_TREE_BYTES} bytes)",
                file=str(path),
            )
    return members


def _normal_parts(name: str) -> tuple[str, ...] | None:
    parts = tuple(p for p in PurePosixPath(name).parts if p not in ("", "."))
    if name.startswith("/") or ".." in parts:
        return None
    return parts


def _common_prefix(names: list[str]) -> tuple[str, ...]:
    """The single top-level directory of a GitHub-style tarball, if there is no `version` at the root."""
    tops = set()
    for name in names:
        parts = _normal_parts(name)
        if parts:
            if len(parts) == 1 and parts[0] == "version":
                return ()
            tops.add(parts[0])
    return (next(iter(tops)),) if len(tops) == 1 else ()


def _add_member(
    tree: Tree, archive: tarfile.TarFile, member: tarfile.TarInfo, prefix: tuple[str, ...]
) -> None:
    parts = _normal_parts(member.name)
    if parts is None or parts[: len(prefix)] != prefix:
        return
    parts = parts[len(prefix) :]
    if not parts or len(parts) > 2 or (len(parts) == 2 and parts[0] not in SUBDIRS):
        return
    if member.isdir():
        if len(parts) == 1 and parts[0] in SUBDIRS:
            tree.dirs.setdefault(parts[0], {})
        elif len(parts) == 2:
            tree.dirs.setdefault(parts[0], {})[parts[1]] = Entry(parts[1], problem="is a directory")
        return
    if not member.isfile():
        entry = Entry(
            parts[-1], problem="is not a regular file (links are not followed in archives)"
        )
    elif member.size > MAX_FILE_BYTES:
        entry = Entry(parts[-1], problem=f"is larger than {MAX_FILE_BYTES} bytes")
    else:
        handle = archive.extractfile(member)
        entry = Entry(parts[-1], data=handle.read() if handle else b"")
    if len(parts) == 1:
        tree.top[parts[0]] = entry
    else:
        tree.dirs.setdefault(parts[0], {})[parts[1]] = entry


def pack_tree(tree: Tree, include: list[str]) -> bytes:
    """A deterministic gzip tarball of the given relative paths (mtime 0, sorted, root-owned)."""
    buffer = io.BytesIO()
    # The gzip header carries a timestamp; pin it (and the members') for stable bytes.
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=6) as compressed,
        tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive,
    ):
        for relpath in sorted(include):
            data = tree.file(relpath)
            if data is None:
                continue
            info = tarfile.TarInfo(relpath)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
