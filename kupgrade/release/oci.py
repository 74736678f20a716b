"""Release images as OCI images (SPEC B): build, read and unpack them without trusting them.

A release is identified by the sha256 digest of its image manifest. Its one layer holds
`release-manifests/` (release-metadata, image-references and the operators' manifests)
and `manifests/` (the version controller's own). Building is reproducible: the same
inputs give the same digest (sorted entries, zero times and owners, gzip without a
timestamp). Reading checks every blob against its digest and size before use, refuses
tar entries that would land outside the target (absolute paths, `..`, links pointing
out, devices) through tarfile's own extraction filter, and bounds sizes, so a hostile
image can neither write outside the target nor exhaust the disk.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import posixpath
import re
import tarfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, BinaryIO, Protocol, cast

from isal import igzip_threaded, isal_zlib

from kupgrade.errors import InputError
from kupgrade.intake import decode_json
from kupgrade.intake.limits import BYTES
from kupgrade.release.payload import CVO_DIR, RELEASE_DIR, PayloadFiles
from kupgrade.release.tarstream import TarStream, Unusual

OCI_LAYOUT = {"imageLayoutVersion": "1.0.0"}
INDEX_MEDIA = "application/vnd.oci.image.index.v1+json"
MANIFEST_MEDIA = "application/vnd.oci.image.manifest.v1+json"
CONFIG_MEDIA = "application/vnd.oci.image.config.v1+json"
LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
LAYER_TAR = "application/vnd.oci.image.layer.v1.tar"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip"
MANIFEST_TYPES = (MANIFEST_MEDIA, DOCKER_MANIFEST)
GZIP_LAYERS = (LAYER_GZIP, DOCKER_LAYER)
REF_NAME = "org.opencontainers.image.ref.name"
RELEASE_LABEL = "io.openshift.release"
PAYLOAD_DIRS = (CVO_DIR, RELEASE_DIR)
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")


class IntegrityError(InputError):
    """The image is not what its digests say, or tries to escape the target."""


@dataclass(frozen=True)
class Limits:
    """Bounds on what an untrusted image may unpack to (SPEC B, extraction)."""

    max_total: int = 1 << 30  # bytes of payload files, all together
    max_file: int = 64 << 20
    max_entries: int = 200_000
    max_layer: int = 8 << 30  # bytes of one unpacked layer, payload or not


@dataclass(frozen=True)
class Descriptor:
    media_type: str
    digest: str
    size: int
    annotations: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "mediaType": self.media_type,
            "digest": self.digest,
            "size": self.size,
        }
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        return out

    @staticmethod
    def parse(doc: Any, where: str) -> Descriptor:
        if not isinstance(doc, dict):
            raise IntegrityError("descriptor must be an object", file=where)
        digest, size = doc.get("digest"), doc.get("size")
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise IntegrityError(
                f"unsupported or malformed digest {digest!r}", file=where, field="digest"
            )
        if not isinstance(size, int) or size < 0:
            raise IntegrityError(
                f"size must be a non-negative integer, got {size!r}", file=where, field="size"
            )
        annotations = doc.get("annotations") or {}
        return Descriptor(str(doc.get("mediaType", "")), digest, size, annotations)


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def check_declared_size(descriptor: Descriptor, where: str) -> int:
    """The size a descriptor declares, refused before any read when over the input limit
    (a descriptor may claim 2^62 bytes; allocating for it would fail or exhaust memory)."""
    limit = BYTES.value()
    if descriptor.size > limit:
        raise IntegrityError(
            f"blob {descriptor.digest} declares {descriptor.size:,} bytes, over the limit of "
            f"{limit:,}",
            file=where,
            hint=f"if the image is genuine, raise {BYTES.env}",
        )
    return descriptor.size


def check_blob(data: bytes, descriptor: Descriptor, where: str) -> bytes:
    """The blob, if it is exactly what the descriptor says."""
    if len(data) != descriptor.size:
        raise IntegrityError(
            f"blob {descriptor.digest} has {len(data)} bytes, its descriptor says {descriptor.size}",
            file=where,
        )
    actual = sha256(data)
    if actual != descriptor.digest:
        raise IntegrityError(
            f"blob {descriptor.digest} was changed: its content hashes to {actual}", file=where
        )
    return data


def canonical_json(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


# --- building -----------------------------------------------------------------------------------


def build_layer(files: Mapping[str, bytes]) -> bytes:
    """A reproducible tar of the payload files (paths like release-manifests/x.yaml)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        directories = sorted({p.split("/", 1)[0] for p in files} | set(PAYLOAD_DIRS))
        for directory in directories:
            info = tarfile.TarInfo(directory)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(_zeroed(info))
        for path in sorted(files, key=lambda p: p.encode()):
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(files[path]), 0o644
            tar.addfile(_zeroed(info), io.BytesIO(files[path]))
    return buffer.getvalue()


def _zeroed(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


@dataclass(frozen=True)
class BuiltImage:
    manifest: bytes
    blobs: dict[str, bytes]  # digest -> content (config and layer)
    version: str

    @property
    def digest(self) -> str:
        return sha256(self.manifest)

    def descriptor(self) -> Descriptor:
        return Descriptor(MANIFEST_MEDIA, self.digest, len(self.manifest), {REF_NAME: self.version})


def build_image(
    files: Mapping[str, bytes],
    version: str,
    arch: str = "amd64",
    labels: Mapping[str, str] | None = None,
) -> BuiltImage:
    """The release image for these payload files (or, with `labels`, another image such
    as a catalog's); same input, same digest."""
    labels = dict(labels) if labels is not None else {RELEASE_LABEL: version}
    tar = build_layer(files)
    layer = gzip.compress(tar, compresslevel=6, mtime=0)
    config = canonical_json(
        {
            "architecture": arch,
            "os": "linux",
            "config": {"Labels": labels},
            "rootfs": {"type": "layers", "diff_ids": [sha256(tar)]},
        }
    )
    manifest = canonical_json(
        {
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA,
            "config": Descriptor(CONFIG_MEDIA, sha256(config), len(config)).to_json(),
            "layers": [Descriptor(LAYER_GZIP, sha256(layer), len(layer)).to_json()],
            "annotations": labels,
        }
    )
    return BuiltImage(manifest, {sha256(config): config, sha256(layer): layer}, version)


def layout_files(image: BuiltImage) -> dict[str, bytes]:
    """The files of an OCI image layout holding this one image."""
    index = {
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA,
        "manifests": [image.descriptor().to_json()],
    }
    files = {"oci-layout": canonical_json(OCI_LAYOUT), "index.json": canonical_json(index)}
    for digest, blob in {image.digest: image.manifest, **image.blobs}.items():
        files[f"blobs/sha256/{digest.removeprefix('sha256:')}"] = blob
    return files


def layout_tar(files: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(files[path]), 0o644
            tar.addfile(_zeroed(info), io.BytesIO(files[path]))
    return buffer.getvalue()


# --- reading --------------------------------------------------------------------------------


class ImageSource(Protocol):
    """Where an image's manifest and blobs come from (layout dir, layout tar, registry)."""

    name: str

    def manifest(self) -> tuple[Descriptor, bytes]: ...

    def blob(self, descriptor: Descriptor) -> bytes: ...


@dataclass(frozen=True)
class Image:
    """A release image whose manifest and config have been checked against their digests."""

    source: ImageSource
    digest: str
    manifest: dict[str, Any]
    config: dict[str, Any]
    layers: list[Descriptor]
    raw_manifest: bytes  # the checked bytes, pushed as they are
    media_type: str
    config_descriptor: Descriptor

    @property
    def size(self) -> int:
        return sum(layer.size for layer in self.layers)


def select_manifest(index: Any, where: str, ref: str | None = None) -> Descriptor:
    """The image manifest of an index: the one named `ref`, or the only one."""
    manifests = index.get("manifests") if isinstance(index, dict) else None
    if not isinstance(manifests, list) or not manifests:
        raise IntegrityError("index.json lists no manifests", file=where, field="manifests")
    descriptors = [Descriptor.parse(m, where) for m in manifests]
    if ref is not None:
        named = [d for d in descriptors if d.annotations.get(REF_NAME) == ref]
        if not named:
            raise InputError(f"no manifest is named {ref!r}", file=where, field=REF_NAME)
        descriptors = named
    if len(descriptors) > 1:
        names = ", ".join(d.annotations.get(REF_NAME, d.digest) for d in descriptors)
        raise InputError(f"holds several images ({names}); name one", file=where)
    return descriptors[0]


def open_image(source: ImageSource) -> Image:
    """Read and check the manifest and config; layers are checked when read."""
    descriptor, raw = source.manifest()
    check_blob(raw, descriptor, source.name)
    try:
        manifest = decode_json(raw, source.name, "image manifest JSON")
    except InputError as exc:
        raise IntegrityError(exc.message, file=source.name) from None
    media = manifest.get("mediaType", descriptor.media_type) if isinstance(manifest, dict) else None
    if media not in MANIFEST_TYPES:
        raise IntegrityError(
            f"{media!r} is not an image manifest (a multi-arch index must be resolved to one image first)",
            file=source.name,
            field="mediaType",
        )
    config_desc = Descriptor.parse(manifest.get("config"), source.name)
    layers = [Descriptor.parse(layer, source.name) for layer in manifest.get("layers") or []]
    try:
        config = decode_json(source.blob(config_desc), source.name, "image config JSON")
    except IntegrityError:
        raise
    except InputError as exc:
        raise IntegrityError(exc.message, file=source.name) from None
    return Image(
        source,
        descriptor.digest,
        manifest,
        config if isinstance(config, dict) else {},
        layers,
        raw,
        str(media),
        config_desc,
    )


# igzip raises OSError (BadGzipFile) or EOFError as gzip does, and its own error type
# where zlib would raise zlib.error (isal_zlib's stub leaves that type untyped).
_INFLATE_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    EOFError,
    zlib.error,
    cast("type[Exception]", isal_zlib.error),
)


class _LayerReader:
    """The unpacked layer as a stream: hashed as it is read (its diff_id) and bounded, so a
    small gzip that inflates to terabytes stops at the limit instead of filling memory.

    Only `read` is offered, which is all tarfile's stream mode calls: io.RawIOBase's
    read would copy every piece twice more (into a buffer for readinto, then out)."""

    def __init__(self, source: BinaryIO, limit: int, where: str) -> None:
        self.source = source
        self.limit = limit
        self.where = where
        self.hash = hashlib.sha256()
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        try:
            data = self.source.read(size)
        except _INFLATE_ERRORS as exc:
            raise IntegrityError(f"layer does not decompress: {exc}", file=self.where) from None
        self.count += len(data)
        if self.count > self.limit:
            raise IntegrityError(f"layer unpacks to more than {self.limit} bytes", file=self.where)
        self.hash.update(data)
        return data

    def drain(self) -> str:
        """Read to the end (tar padding included) and give the digest of everything."""
        while self.read(1 << 20):
            pass
        return "sha256:" + self.hash.hexdigest()

    def close(self) -> None:
        """Stop the inflating thread, read to the end or not (an error halfway)."""
        self.source.close()


def _layer_stream(image: Image, layer: Descriptor, limits: Limits) -> _LayerReader:
    """The layer's tar, inflated by ISA-L in a thread of its own while tarfile reads the
    headers in this one (igzip is about twice zlib's speed here, and runs beside the
    parsing as gzip beside `tar -xzf`); the stream must be closed to stop that thread."""
    data = io.BytesIO(image.source.blob(layer))
    if layer.media_type in GZIP_LAYERS:
        source: BinaryIO = igzip_threaded.open(data, "rb")  # type: ignore[no-untyped-call]
    elif layer.media_type == LAYER_TAR:
        source = data
    else:
        raise IntegrityError(
            f"unsupported layer media type {layer.media_type!r}", file=image.source.name
        )
    return _LayerReader(source, limits.max_layer, image.source.name)


def _check_diff_id(image: Image, index: int, layer: Descriptor, actual: str) -> None:
    diff_ids = (image.config.get("rootfs") or {}).get("diff_ids") or []
    if index < len(diff_ids) and diff_ids[index] != actual:
        raise IntegrityError(
            f"layer {layer.digest} unpacks to {actual}, the config says {diff_ids[index]}",
            file=image.source.name,
        )


_ANCHOR = "/kupgrade-extract"


def _check_member(member: tarfile.TarInfo, where: str) -> str:
    """The member's normalised path; refuses what tarfile's data filter refuses, and more.

    The filter would strip a leading "/" and go on; an absolute path in a release layer
    is refused instead, as is any ".." component even when it stays inside.
    """
    if member.name.startswith("/") or ".." in member.name.split("/"):
        kind = "absolute path" if member.name.startswith("/") else "path with '..'"
        raise IntegrityError(
            f"refused tar entry {member.name!r}: {kind}", file=where, rule="SPEC B2"
        )
    refused = _data_filter(member)
    if refused is not None:
        raise IntegrityError(
            f"refused tar entry {member.name!r}: {refused}", file=where, rule="SPEC B2"
        )
    return posixpath.normpath(member.name.removeprefix("./"))


def _data_filter(member: tarfile.TarInfo) -> str | None:
    """What tarfile.data_filter refuses in a member whose name is already checked, in its
    words (CPython Lib/tarfile.py _get_filtered_attrs), computed on the names alone.

    Nothing is extracted, so its realpath() calls against a destination that does not
    exist only normalise names, with two lstat()s per member: a third of the time of
    reading a layer of 1,000 manifests. Its mode and owner changes do not apply to
    files held in memory."""
    if not (member.isreg() or member.islnk() or member.isdir() or member.issym()):
        return f"{member.name!r} is a special file"
    if member.islnk() or member.issym():
        if member.linkname.startswith("/"):
            return f"{member.name!r} is a link to an absolute path"
        base = posixpath.dirname(member.name) if member.issym() else ""
        target = posixpath.normpath(posixpath.join(_ANCHOR, base, member.linkname))
        if target != _ANCHOR and not target.startswith(_ANCHOR + "/"):
            return f"{member.name!r} would link to {target!r}, which is outside the destination"
    return None


class Sink(Protocol):
    """Where the tree's files go as they are read (a directory being written)."""

    def put(self, relative: str, data: bytes) -> None: ...

    def remove(self, relative: str) -> None: ...


@dataclass
class Tree:
    """The payload directories of an image after all its layers, held in memory (and
    given to `sink` as they change, when there is one)."""

    files: dict[str, bytes] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    total: int = 0
    sink: Sink | None = None

    def payload_files(self, origin: str) -> PayloadFiles:
        """The top-level files of both directories, as the loader reads them."""
        top = {p: d for p, d in self.files.items() if p.count("/") == 1}
        present = {p.split("/", 1)[0] for p in self.files} | self.dirs
        return PayloadFiles(top, frozenset(d for d in PAYLOAD_DIRS if d in present), origin)

    def set(self, path: str, data: bytes, limits: Limits, where: str) -> None:
        """A file added or replaced, within the payload's size bound."""
        self.total += len(data) - len(self.files.get(path, b""))
        if self.total > limits.max_total:
            raise IntegrityError(f"payload exceeds {limits.max_total} bytes", file=where)
        self.files[path] = data
        if self.sink is not None:
            self.sink.put(path, data)

    def drop(self, path: str) -> None:
        """A file removed by a later layer's whiteout."""
        self.total -= len(self.files.pop(path))
        if self.sink is not None:
            self.sink.remove(path)


def _apply_whiteout(tree: Tree, path: str) -> bool:
    parent, name = posixpath.split(path)
    if name == ".wh..wh..opq":
        for key in [k for k in tree.files if k.startswith(parent + "/")]:
            tree.drop(key)
        return True
    if name.startswith(".wh."):
        target = posixpath.join(parent, name[4:])
        for key in [k for k in tree.files if k == target or k.startswith(target + "/")]:
            tree.drop(key)
        return True
    return False


def _in_payload(path: str) -> bool:
    return path.split("/", 1)[0] in PAYLOAD_DIRS


class _Members(Protocol):
    """A layer's members in order, and the content of the one just given."""

    def __iter__(self) -> Iterator[tarfile.TarInfo]: ...

    def data(self, member: tarfile.TarInfo) -> bytes: ...


class _TarfileMembers:
    """tarfile's stream mode: every case, errors included (see kupgrade/release/tarstream.py)."""

    def __init__(self, stream: _LayerReader, where: str) -> None:
        self.where = where
        try:
            # 64 KiB pieces (the default is one 10 KiB record): fewer reads through the
            # hashing, bounded stream. A larger buffer is slower: tarfile slices it on
            # every read. The stream mode only ever calls read(), all _LayerReader offers.
            reader = cast("IO[bytes]", stream)
            self.tar = tarfile.open(fileobj=reader, mode="r|", bufsize=1 << 16)  # noqa: SIM115 - closed as it is iterated
        except tarfile.TarError as exc:
            raise IntegrityError(f"layer is not a tar: {exc}", file=where) from None

    def __iter__(self) -> Iterator[tarfile.TarInfo]:
        with self.tar, self._refused():
            yield from self.tar

    def data(self, member: tarfile.TarInfo) -> bytes:
        with self._refused():
            handle = self.tar.extractfile(member)
            return handle.read() if handle else b""

    @contextmanager
    def _refused(self) -> Iterator[None]:
        """tarfile's errors past the first header (a stream cut short in a member or
        its padding, a bad header after a long name) in the same words as at the first."""
        try:
            yield
        except tarfile.TarError as exc:
            raise IntegrityError(f"layer is not a tar: {exc}", file=self.where) from None


def _members(
    members: _Members, where: str, limits: Limits
) -> Iterator[tuple[tarfile.TarInfo, str]]:
    for count, member in enumerate(members, start=1):
        if count > limits.max_entries:
            raise IntegrityError(f"layer has more than {limits.max_entries} entries", file=where)
        yield member, _check_member(member, where)


def read_tree(
    image: Image,
    limits: Limits | None = None,
    keep: Callable[[str], bool] | None = None,
    sink: Sink | None = None,
) -> Tree:
    """Unpack the payload directories of every layer (or the paths `keep` takes) in
    memory, checking as it goes; each change also goes to `sink` as it is made."""
    limits = limits or Limits()
    wanted = keep or _in_payload
    where = image.source.name
    tree = Tree(sink=sink)
    for index, layer in enumerate(image.layers):
        try:
            links, digest = _read_layer(tree, image, layer, wanted, limits, fast=True)
        except Unusual:
            # Read again from the start by tarfile, which decides every case: what was
            # applied already is applied again in order, to the same end.
            links, digest = _read_layer(tree, image, layer, wanted, limits, fast=False)
        _check_diff_id(image, index, layer, digest)
        _resolve_links(tree, links, where, limits)
    return tree


def _read_layer(
    tree: Tree,
    image: Image,
    layer: Descriptor,
    wanted: Callable[[str], bool],
    limits: Limits,
    *,
    fast: bool,
) -> tuple[list[tuple[str, str]], str]:
    """One layer's entries into the tree: its links, to be resolved once it is read, and
    the digest of the whole unpacked layer (its diff_id)."""
    where = image.source.name
    with closing(_layer_stream(image, layer, limits)) as stream:
        members: _Members = TarStream(stream.read) if fast else _TarfileMembers(stream, where)
        links = _entries(tree, members, wanted, where, limits)
        return links, stream.drain()


def _entries(
    tree: Tree, members: _Members, wanted: Callable[[str], bool], where: str, limits: Limits
) -> list[tuple[str, str]]:
    links: list[tuple[str, str]] = []
    for member, path in _members(members, where, limits):
        if not wanted(path) or _apply_whiteout(tree, path):
            continue
        if member.isdir():
            tree.dirs.add(path.split("/", 1)[0])
        elif member.isreg():
            if member.size > limits.max_file:
                raise IntegrityError(
                    f"{path} is {member.size} bytes, over the {limits.max_file}-byte limit",
                    file=where,
                )
            tree.set(path, members.data(member), limits, where)
        elif member.issym() or member.islnk():
            base = posixpath.dirname(path) if member.issym() else ""
            links.append((path, posixpath.normpath(posixpath.join(base, member.linkname))))
    return links


def _resolve_links(tree: Tree, links: list[tuple[str, str]], where: str, limits: Limits) -> None:
    """Links become copies of their target (counted in the size bound); a chain is
    followed, a loop or dangling link refused."""
    pending = dict(links)
    for _ in range(len(pending) + 1):
        progress = [(p, t) for p, t in pending.items() if t in tree.files]
        for path, target in progress:
            tree.set(path, tree.files[target], limits, where)
            del pending[path]
        if not progress:
            break
    for path, target in pending.items():
        raise IntegrityError(
            f"link {path} points at {target}, which is not a payload file", file=where
        )
