"""A directory written while its layers are read (SPEC B2): the files the reading
ended with, in place only when everything passed; nothing at all otherwise."""

from __future__ import annotations

import gzip
import io
import posixpath
import tarfile
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kupgrade.errors import InputError
from kupgrade.release.oci import (
    CONFIG_MEDIA,
    LAYER_GZIP,
    MANIFEST_MEDIA,
    Descriptor,
    IntegrityError,
    Limits,
    canonical_json,
    open_image,
    read_tree,
    sha256,
)
from kupgrade.release.sources import LayoutDir, write_tree
from kupgrade.release.staged import TreeWriter
from tests.support.cli import kupgrade

PAYLOAD = ("manifests", "release-manifests")


def _tar(entries: Sequence[tuple[str, bytes | str]]) -> bytes:
    """A tar of regular files (bytes) and symlinks (str, the link's target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, body in entries:
            info = tarfile.TarInfo(name)
            if isinstance(body, str):
                info.type, info.linkname = tarfile.SYMTYPE, body
                tar.addfile(info)
            else:
                info.size = len(body)
                tar.addfile(info, io.BytesIO(body))
    return buffer.getvalue()


def _image(tmp: Path, layers: Sequence[Sequence[tuple[str, bytes | str]] | bytes]) -> Path:
    """An OCI layout whose digests are all right, with one gzip layer per list (or per
    tar given whole)."""
    raws = [entries if isinstance(entries, bytes) else _tar(entries) for entries in layers]
    blobs = [gzip.compress(raw, mtime=0) for raw in raws]
    config = canonical_json({"rootfs": {"type": "layers", "diff_ids": [sha256(r) for r in raws]}})
    manifest = canonical_json(
        {
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA,
            "config": Descriptor(CONFIG_MEDIA, sha256(config), len(config)).to_json(),
            "layers": [Descriptor(LAYER_GZIP, sha256(b), len(b)).to_json() for b in blobs],
        }
    )
    files = {"oci-layout": b'{"imageLayoutVersion":"1.0.0"}'}
    files["index.json"] = canonical_json(
        {
            "schemaVersion": 2,
            "manifests": [Descriptor(MANIFEST_MEDIA, sha256(manifest), len(manifest)).to_json()],
        }
    )
    for blob in (config, manifest, *blobs):
        files[f"blobs/sha256/{sha256(blob)[7:]}"] = blob
    root = tmp / "image"
    write_tree(root, files)
    return root


def _on_disk(root: Path) -> tuple[dict[str, bytes], set[str]]:
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    dirs = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir()}
    return files, dirs


def _dirs_for(files: dict[str, bytes], directories: tuple[str, ...]) -> set[str]:
    """What writing only the final files (and the named directories) makes."""
    made: set[str] = set()
    for path in (*files, *(d + "/x" for d in directories)):
        parent = posixpath.dirname(path)
        while parent:
            made.add(parent)
            parent = posixpath.dirname(parent)
    return made


def _leftovers(parent: Path, name: str) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


NAMES = st.lists(st.sampled_from(["d0", "d1", "d2"]), max_size=2).map("/".join)
FILE = st.tuples(NAMES, st.sampled_from(["f0.yaml", "f1.yaml", "f2"])).map(
    lambda t: posixpath.join(*(p for p in t if p))
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), FILE, st.binary(max_size=40)),
        st.tuples(st.just("remove"), FILE, st.just(b"")),
    ),
    max_size=30,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS, directories=st.sets(st.sampled_from(["manifests", "d1", "d2/d0"]), max_size=2))
def test_the_directory_holds_what_the_writes_end_with(
    tmp_path: Path, ops: list[tuple[str, str, bytes]], directories: set[str]
) -> None:
    """Puts replace, removes delete, in order; a directory made only for files removed
    later is gone too, so the result is what writing the final files alone makes."""
    target = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
    final: dict[str, bytes] = {}
    with TreeWriter(target, directories) as out:
        for op, path, data in ops:
            if op == "put":
                out.put(path, data)
                final[path] = data
            elif path in final:
                out.remove(path)
                del final[path]
    files, dirs = _on_disk(target)
    assert files == final
    assert dirs == _dirs_for(final, tuple(directories))
    assert _leftovers(tmp_path, target.name) == []


def test_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    """A file where a directory must go: the error names the target; no target, no
    staging directory; later puts raise it at once."""
    target = tmp_path / "out"
    with pytest.raises(InputError, match="cannot write") as caught, TreeWriter(target) as out:
        out.put("a", b"file")
        out.put("a/b", b"under a file")
        for index in range(10_000):
            out.put(f"c{index}", b"")
    assert str(target) in str(caught.value)
    assert not target.exists()
    assert _leftovers(tmp_path, "out") == []


def test_an_error_while_reading_stops_the_writes_and_removes_them(tmp_path: Path) -> None:
    target = tmp_path / "out"
    with pytest.raises(RuntimeError, match="reader failed"), TreeWriter(target, PAYLOAD) as out:
        for index in range(200):
            out.put(f"manifests/{index}.yaml", b"x" * 1000)
        raise RuntimeError("reader failed")
    assert not target.exists()
    assert _leftovers(tmp_path, "out") == []
    assert not [t for t in threading.enumerate() if t.name == "tree-writer"]


def test_an_empty_target_directory_is_replaced_a_full_one_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    write_tree(tmp_path / "empty", {"manifests/a.yaml": b"a"}, PAYLOAD)
    assert _on_disk(tmp_path / "empty") == (
        {"manifests/a.yaml": b"a"},
        {"manifests", "release-manifests"},
    )
    with pytest.raises(InputError, match="not empty"):
        TreeWriter(tmp_path / "empty")


def test_extract_writes_the_layers_final_state(tmp_path: Path) -> None:
    """Two layers: the second replaces a file, whites out one file and a whole
    directory, and links to a file of the first; `release extract` writes what reading
    the image in memory ends with, nothing more (no directory of a removed file)."""
    first = [
        ("release-manifests/a.yaml", b"a1"),
        ("release-manifests/gone.yaml", b"g"),
        ("release-manifests/sub/x.yaml", b"x"),
        ("release-manifests/sub/deeper/y.yaml", b"y"),
        ("manifests/cvo.yaml", b"c"),
        ("ignored/elsewhere", b"not payload"),
    ]
    second: list[tuple[str, bytes | str]] = [
        ("release-manifests/a.yaml", b"a2"),
        ("release-manifests/.wh.gone.yaml", b""),
        ("release-manifests/.wh.sub", b""),
        ("release-manifests/alias.yaml", "../manifests/cvo.yaml"),
    ]
    image = _image(tmp_path, [first, second])
    tree = read_tree(open_image(LayoutDir(image)))
    target = tmp_path / "out"
    result = kupgrade("release", "extract", str(image), "--to", str(target), "-o", "json")
    assert result.returncode == 0, result.stderr
    files, dirs = _on_disk(target)
    assert (
        files
        == tree.files
        == {
            "release-manifests/a.yaml": b"a2",
            "release-manifests/alias.yaml": b"c",
            "manifests/cvo.yaml": b"c",
        }
    )
    assert dirs == set(PAYLOAD)


def test_extract_refused_in_a_later_layer_writes_nothing(tmp_path: Path) -> None:
    """The first layer's files were being written when the second layer's escaping entry
    is found: the command fails in one line and leaves no target and no staging."""
    first = [(f"release-manifests/{i:03d}.yaml", b"k: v\n" * 200) for i in range(300)]
    second = [("release-manifests/../../evil.yaml", b"evil")]
    image = _image(tmp_path, [first, second])
    target = tmp_path / "out"
    result = kupgrade("release", "extract", str(image), "--to", str(target))
    assert result.returncode != 0
    assert "path with '..'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not target.exists()
    assert _leftovers(tmp_path, "out") == []
    assert not (tmp_path / "evil.yaml").exists()


def test_a_refused_layer_stops_the_inflating_thread(tmp_path: Path) -> None:
    """The layer is inflated in a thread of its own: an error halfway must stop it."""
    before = threading.active_count()
    image = _image(tmp_path, [[("filler/zeros", b"\0" * (32 << 20))]])
    try:
        read_tree(open_image(LayoutDir(image)), Limits(max_layer=4 << 20))
    except IntegrityError as error:
        # Checked while the error (and so every frame of the reading) is still held: a
        # stream left open would be stopped only when collected, if ever.
        assert "unpacks to more than" in str(error)
        assert threading.active_count() == before
    else:
        pytest.fail("a layer over its bound was read")
