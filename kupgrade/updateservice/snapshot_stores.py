"""Where snapshots are published and read: a directory, or a repository of an OCI registry.

Both keep immutable snapshots by digest and one movable pointer to the newest, and both
publish so that a reader never sees a snapshot half-written:

- a directory: `snapshots/<hex>/` holds a snapshot's manifest and blobs, written under a
  temporary name, fsynced and renamed into place; then `latest` (one line, the digest) is
  replaced by a rename of a fsynced temporary file. A reader follows `latest` only.
- a registry: the blobs are pushed, then the manifest (under a history tag `s-<ms>`),
  then the tag (`latest` unless the reference names another): the registry only serves
  a manifest whose blobs it has.

A pointer that already names the digest is left alone: the builder publishes only when
the content changed. Pruning keeps the newest few snapshots and never the one the
pointer names; a replica that is reading one being pruned fails that read and keeps
serving what it has (it retries on its next poll).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import time
from pathlib import Path
from typing import Protocol

import httpx

from kupgrade.errors import InputError, KupgradeError
from kupgrade.release.oci import Descriptor, IntegrityError, check_blob, check_declared_size
from kupgrade.release.registry import MAX_MANIFEST_BYTES, Reference, RegistryClient
from kupgrade.updateservice.rebuild import Rebuilt
from kupgrade.updateservice.snapshots import (
    FILES,
    START_BUILDER,
    Snapshot,
    SnapshotError,
    check_digest,
    unpack,
)

POINTER = "latest"
MAX_POINTER_BYTES = 256
REGISTRY_TIMEOUT_S = 30.0
STALE_TEMP_S = 3600.0  # a temporary directory this old is a crashed builder's leftover
_HISTORY_TAG = re.compile(r"^s-(\d+)$")


class SnapshotStore(Protocol):
    name: str

    def latest(self) -> str | None:
        """The digest the pointer names; None when nothing was published yet."""
        ...

    def read(self, digest: str) -> Rebuilt:
        """The snapshot `digest`, every blob checked; SnapshotError when not whole."""
        ...

    def publish(self, snapshot: Snapshot) -> bool:
        """Store the snapshot and point at it; False when the pointer named it already."""
        ...

    def prune(self, keep: int) -> list[str]:
        """Remove all but the newest `keep` snapshots (never the latest); the removed."""
        ...


def open_store(text: str, *, plain_http: bool = False) -> SnapshotStore:
    """A registry repository (HOST[:PORT]/REPO[:TAG], the host with a dot or a port, or
    localhost) unless a local path of that name exists; otherwise a directory."""
    reference = Reference.parse(text)
    if reference is not None and not Path(text).exists():
        if reference.digest:
            raise KupgradeError(
                "a snapshot source is a repository, not one image",
                field="--snapshots",
                hint=f"drop @{reference.digest}",
            )
        return RegistryStore(reference, plain_http=plain_http)
    if not text.strip():
        raise KupgradeError("must name a directory or a registry repository", field="--snapshots")
    return DirectoryStore(Path(text))


# --- a directory ----------------------------------------------------------------------------


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_durably(path: Path, data: bytes) -> None:
    with path.open("xb") as sink:
        sink.write(data)
        sink.flush()
        os.fsync(sink.fileno())


class DirectoryStore:
    """Snapshots in `root/snapshots/<hex>/`, the newest named by `root/latest`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.name = str(root)
        self.snapshots = root / "snapshots"

    def _fail(self, message: str, reason: str = "integrity") -> SnapshotError:
        return SnapshotError(message, source=self.name, reason=reason, hint=START_BUILDER)

    def latest(self) -> str | None:
        if not self.root.is_dir():
            raise self._fail("no such directory", "source")
        pointer = self.root / POINTER
        try:
            with pointer.open("rb") as source:
                raw = source.read(MAX_POINTER_BYTES + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._fail(f"cannot read {POINTER}: {exc.strerror or exc}", "source") from None
        if len(raw) > MAX_POINTER_BYTES:
            raise self._fail(f"{POINTER} is longer than a digest")
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise self._fail(f"{POINTER} is not UTF-8 text") from None
        return check_digest(text, f"{self.name}/{POINTER}")

    def _read(self, path: Path, size: int | None, limit: int) -> bytes:
        """At most `limit` bytes of `path`; exactly `size` when given, or SnapshotError."""
        try:
            with path.open("rb") as source:
                if size is not None and os.fstat(source.fileno()).st_size != size:
                    raise self._fail(
                        f"{path.name} of {path.parent.name} has "
                        f"{os.fstat(source.fileno()).st_size} bytes, its manifest says {size}"
                    )
                data = source.read(limit + 1)
        except FileNotFoundError:
            raise self._fail(
                f"{path.relative_to(self.root)} is missing (half-written or pruned)"
            ) from None
        except OSError as exc:
            raise self._fail(f"cannot read {path.name}: {exc.strerror or exc}") from None
        if len(data) > limit:
            raise self._fail(f"{path.name} is longer than the {limit:,} bytes expected")
        return data

    def read(self, digest: str) -> Rebuilt:
        folder = self.snapshots / digest.removeprefix("sha256:")
        manifest = self._read(folder / "manifest.json", None, MAX_MANIFEST_BYTES)

        def fetch(descriptor: Descriptor) -> bytes:
            name = FILES[descriptor.media_type]  # parse_manifest let only these through
            size = check_declared_size(descriptor, self.name)
            data = self._read(folder / name, descriptor.size, size)
            return check_blob(data, descriptor, f"{self.name}: {digest}")

        return unpack(manifest, digest, fetch, self.name)

    def publish(self, snapshot: Snapshot) -> bool:
        digest = snapshot.digest
        try:
            current = self.latest() if self.root.is_dir() else None
        except SnapshotError:
            current = None  # a broken pointer is replaced
        if current == digest:
            return False
        try:
            self.snapshots.mkdir(parents=True, exist_ok=True)
            final = self.snapshots / digest.removeprefix("sha256:")
            if final.is_dir():
                os.utime(final)  # back to the newest: pruning goes by age
            else:
                self._write_snapshot(snapshot, final)
            temporary = self.root / f".{POINTER}-{secrets.token_hex(8)}"
            _write_durably(temporary, f"{digest}\n".encode())
            temporary.replace(self.root / POINTER)
            _fsync_dir(self.root)
        except OSError as exc:
            raise SnapshotError(
                f"cannot publish a snapshot: {exc.strerror or exc}",
                source=self.name,
                reason="source",
                hint="give a writable directory to --snapshots",
            ) from None
        return True

    def _write_snapshot(self, snapshot: Snapshot, final: Path) -> None:
        temporary = self.snapshots / f".tmp-{secrets.token_hex(8)}"
        temporary.mkdir()
        try:
            _write_durably(temporary / "manifest.json", snapshot.manifest)
            for descriptor in (snapshot.config, *snapshot.layers):
                _write_durably(temporary / FILES[descriptor.media_type], snapshot.blob(descriptor))
            _fsync_dir(temporary)
            try:
                temporary.rename(final)
            except OSError:
                if not final.is_dir():
                    raise
                # Another builder wrote the same content first: it is the same snapshot.
            _fsync_dir(self.snapshots)
        finally:
            shutil.rmtree(temporary, ignore_errors=True)

    def prune(self, keep: int) -> list[str]:
        if not self.snapshots.is_dir():
            return []
        current = self.latest()
        now = time.time()
        found: list[tuple[float, str]] = []
        for entry in self.snapshots.iterdir():
            with contextlib.suppress(FileNotFoundError):
                age = entry.stat().st_mtime
                if entry.name.startswith(".tmp-"):
                    if now - age > STALE_TEMP_S:
                        shutil.rmtree(entry, ignore_errors=True)
                elif re.fullmatch(r"[0-9a-f]{64}", entry.name):
                    found.append((age, entry.name))
        removed = []
        for _, name in sorted(found, reverse=True)[keep:]:
            if current == f"sha256:{name}":
                continue
            shutil.rmtree(self.snapshots / name, ignore_errors=True)
            removed.append(f"sha256:{name}")
        return removed


# --- a registry -----------------------------------------------------------------------------


class _SnapshotRegistry(RegistryClient):
    """The registry client, plus what pruning needs: the tags, and deleting a manifest."""

    def tags(self, repository: str) -> list[str]:
        url = f"{self.base}/v2/{repository}/tags/list"
        response = self._request("GET", url, self._scope(repository, False))
        if response.status_code == 404:
            return []
        if response.status_code != 200:
            raise self._fail(response, "cannot list the tags")
        try:
            doc = response.json()
        except ValueError:
            doc = None
        tags = doc.get("tags") if isinstance(doc, dict) else None
        return [t for t in tags or [] if isinstance(t, str)]

    def delete_manifest(self, repository: str, digest: str) -> None:
        url = f"{self.base}/v2/{repository}/manifests/{digest}"
        response = self._request("DELETE", url, self._scope(repository, True))
        if response.status_code not in (202, 404):
            raise self._fail(response, f"cannot delete {digest}")


class RegistryStore:
    """Snapshots as manifests of one repository; the tag names the newest."""

    def __init__(self, reference: Reference, *, plain_http: bool = False) -> None:
        self.reference = reference
        self.repository = reference.repository
        self.tag = reference.tag or POINTER
        self.name = f"{reference.name}:{self.tag}"
        # A poll must not hang for the release client's 300 s when the registry stalls.
        client = httpx.Client(timeout=REGISTRY_TIMEOUT_S, follow_redirects=True)
        self.client = _SnapshotRegistry(reference.registry, plain_http=plain_http, client=client)
        self._manifest: tuple[str, bytes] | None = None  # the last one `latest` read

    def _fail(self, exc: KupgradeError | str, reason: str) -> SnapshotError:
        if isinstance(exc, str):
            return SnapshotError(exc, source=self.name, reason=reason, hint=START_BUILDER)
        hint = exc.hint or START_BUILDER  # e.g. "is the registry running and reachable?"
        return SnapshotError(exc.message, source=self.name, reason=reason, hint=hint)

    def _digest_of(self, reference: str) -> str | None:
        try:
            descriptor, data = self.client.manifest(self.repository, reference)
        except IntegrityError as exc:
            raise self._fail(exc, "integrity") from None
        except InputError:  # the registry has no such tag (or repository)
            return None
        except KupgradeError as exc:
            raise self._fail(exc, "source") from None
        self._manifest = (descriptor.digest, data)
        return descriptor.digest

    def latest(self) -> str | None:
        return self._digest_of(self.tag)

    def read(self, digest: str) -> Rebuilt:
        cached = self._manifest
        try:
            manifest = (
                cached[1]
                if cached is not None and cached[0] == digest
                else self.client.manifest(self.repository, digest)[1]
            )
            return unpack(
                manifest,
                digest,
                lambda descriptor: self.client.blob(self.repository, descriptor),
                self.name,
            )
        except SnapshotError:
            raise
        except KupgradeError as exc:  # a blob missing, refused or not what it should be
            raise self._fail(exc, "integrity") from None

    def publish(self, snapshot: Snapshot) -> bool:
        digest = snapshot.digest
        if self.latest() == digest:
            return False
        try:
            for descriptor in (snapshot.config, *snapshot.layers):
                self.client.push_blob(self.repository, snapshot.blob(descriptor))
            history = f"s-{time.time_ns() // 1_000_000}"
            self.client.push_manifest(self.repository, history, snapshot.manifest)
            self.client.push_manifest(self.repository, self.tag, snapshot.manifest)
        except KupgradeError as exc:
            raise self._fail(exc, "source") from None
        return True

    def prune(self, keep: int) -> list[str]:
        try:
            history = sorted(
                (int(m.group(1)), tag)
                for tag in self.client.tags(self.repository)
                if (m := _HISTORY_TAG.match(tag))
            )
            if len(history) <= keep:
                return []
            kept = {self.latest()} | {self._digest_of(tag) for _, tag in history[-keep:]}
            removed: list[str] = []
            for _, tag in history[: len(history) - keep]:
                digest = self._digest_of(tag)
                if digest is None or digest in kept or digest in removed:
                    continue
                # Deleting a manifest untags every tag that names it (distribution's
                # registry/handlers/manifests.go): hence the kept digests above.
                self.client.delete_manifest(self.repository, digest)
                removed.append(digest)
        except SnapshotError:
            raise
        except KupgradeError as exc:
            raise self._fail(exc, "source") from None
        return removed
