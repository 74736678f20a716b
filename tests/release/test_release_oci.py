"""Release images (SPEC B): reproducible builds, and untrusted images that must be refused."""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from kupgrade.release.oci import (
    CONFIG_MEDIA,
    LAYER_GZIP,
    MANIFEST_MEDIA,
    Descriptor,
    IntegrityError,
    Limits,
    build_image,
    canonical_json,
    layout_files,
    layout_tar,
    open_image,
    read_tree,
    sha256,
)
from kupgrade.release.payload import load_payload
from kupgrade.release.sources import LayoutDir, LayoutTar, open_payload, write_tree

METADATA = b'{"kind": "cincinnati-metadata-v0", "version": "1.0.0", "previous": [], "metadata": {}}'
REFS = b"kind: ImageStream\napiVersion: image.openshift.io/v1\nmetadata: {name: 1.0.0}\n"
MANIFEST = (
    b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  annotations:\n"
    b"    include.release.openshift.io/self-managed-high-availability: 'true'\n"
)
FILES = {
    "release-manifests/release-metadata": METADATA,
    "release-manifests/image-references": REFS,
    "release-manifests/0000_10_a_01.yaml": MANIFEST,
    "manifests/0000_00_cvo_01.yaml": MANIFEST.replace(b"name: a", b"name: cvo"),
}


def _layout(tmp: Path, files: dict[str, bytes] | None = None) -> Path:
    root = tmp / "layout"
    write_tree(root, layout_files(build_image(files or FILES, "1.0.0")))
    return root


def test_the_same_inputs_give_the_same_digest(tmp_path: Path) -> None:
    first, second = build_image(FILES, "1.0.0"), build_image(dict(reversed(FILES.items())), "1.0.0")
    assert first.digest == second.digest
    assert layout_tar(layout_files(first)) == layout_tar(layout_files(second))
    changed = build_image(
        {**FILES, "release-manifests/0000_10_a_01.yaml": MANIFEST + b"data: {}\n"}, "1.0.0"
    )
    assert changed.digest != first.digest


def test_layout_dir_and_tar_read_back_the_payload(tmp_path: Path) -> None:
    root = _layout(tmp_path)
    tar = tmp_path / "release.tar"
    tar.write_bytes(layout_tar(layout_files(build_image(FILES, "1.0.0"))))
    for source in (LayoutDir(root), LayoutTar(tar)):
        image = open_image(source)
        assert image.digest == build_image(FILES, "1.0.0").digest
        tree = read_tree(image)
        assert tree.files == FILES
        payload = load_payload(tree.payload_files(source.name))
        assert [m.id.name for m in payload.included] == ["cvo", "a"]


def test_a_changed_layer_blob_is_refused(tmp_path: Path) -> None:
    root = _layout(tmp_path)
    image = open_image(LayoutDir(root))
    blob = root / "blobs" / "sha256" / image.layers[0].digest.removeprefix("sha256:")
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0xFF
    blob.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match=f"blob {image.layers[0].digest} was changed"):
        read_tree(open_image(LayoutDir(root)))


def test_a_changed_manifest_is_refused(tmp_path: Path) -> None:
    root = _layout(tmp_path)
    image = open_image(LayoutDir(root))
    blob = root / "blobs" / "sha256" / image.digest.removeprefix("sha256:")
    blob.write_bytes(blob.read_bytes().replace(b'"schemaVersion":2', b'"schemaVersion":3'))
    with pytest.raises(IntegrityError, match="was changed"):
        open_image(LayoutDir(root))


def test_a_blob_longer_than_its_descriptor_is_refused(tmp_path: Path) -> None:
    root = _layout(tmp_path)
    image = open_image(LayoutDir(root))
    blob = root / "blobs" / "sha256" / image.layers[0].digest.removeprefix("sha256:")
    blob.write_bytes(blob.read_bytes() + b"\0" * 10)
    with pytest.raises(IntegrityError, match="its descriptor says"):
        read_tree(open_image(LayoutDir(root)))


def _hostile(tmp: Path, add: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    """A layout whose digests are all correct but whose layer holds `add`."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, data in add:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    raw = buffer.getvalue()
    layer = gzip.compress(raw, mtime=0)
    config = canonical_json({"rootfs": {"type": "layers", "diff_ids": [sha256(raw)]}})
    manifest = canonical_json(
        {
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA,
            "config": Descriptor(CONFIG_MEDIA, sha256(config), len(config)).to_json(),
            "layers": [Descriptor(LAYER_GZIP, sha256(layer), len(layer)).to_json()],
        }
    )
    root = tmp / "hostile"
    files = {"oci-layout": b'{"imageLayoutVersion":"1.0.0"}'}
    files["index.json"] = canonical_json(
        {
            "schemaVersion": 2,
            "manifests": [Descriptor(MANIFEST_MEDIA, sha256(manifest), len(manifest)).to_json()],
        }
    )
    for blob in (config, layer, manifest):
        files[f"blobs/sha256/{sha256(blob)[7:]}"] = blob
    write_tree(root, files)
    return root


def _entry(
    name: str, kind: bytes = tarfile.REGTYPE, link: str = "", data: bytes = b"x"
) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    if kind == tarfile.REGTYPE:
        info.size = len(data)
        return info, data
    return info, None


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (_entry("release-manifests/../../evil.yaml"), "path with '..'"),
        (_entry("/etc/cron.d/evil"), "absolute path"),
        (
            _entry("release-manifests/evil", tarfile.SYMTYPE, "../../../etc/passwd"),
            "outside the destination",
        ),
        (
            _entry("release-manifests/evil", tarfile.LNKTYPE, "../etc/passwd"),
            "outside the destination",
        ),
        (_entry("release-manifests/dev", tarfile.CHRTYPE), "special file"),
    ],
)
def test_entries_escaping_the_target_are_refused(
    tmp_path: Path, entry: tuple[tarfile.TarInfo, bytes | None], reason: str
) -> None:
    root = _hostile(tmp_path, [_entry("release-manifests/release-metadata", data=METADATA), entry])
    with pytest.raises(IntegrityError, match=reason):
        read_tree(open_image(LayoutDir(root)))
    assert not (tmp_path / "evil.yaml").exists()


def test_links_inside_the_payload_are_followed(tmp_path: Path) -> None:
    root = _hostile(
        tmp_path,
        [
            _entry("release-manifests/real.yaml", data=b"kind: A"),
            _entry("release-manifests/alias.yaml", tarfile.SYMTYPE, "real.yaml"),
            _entry("release-manifests/hard.yaml", tarfile.LNKTYPE, "release-manifests/real.yaml"),
        ],
    )
    tree = read_tree(open_image(LayoutDir(root)))
    assert (
        tree.files["release-manifests/alias.yaml"]
        == tree.files["release-manifests/hard.yaml"]
        == b"kind: A"
    )


def test_sizes_are_bounded(tmp_path: Path) -> None:
    root = _hostile(
        tmp_path, [_entry(f"release-manifests/f{i}.yaml", data=b"y" * 100) for i in range(5)]
    )
    image = open_image(LayoutDir(root))
    with pytest.raises(IntegrityError, match="over the 50-byte limit"):
        read_tree(image, Limits(max_file=50))
    with pytest.raises(IntegrityError, match="payload exceeds 300 bytes"):
        read_tree(image, Limits(max_total=300))
    with pytest.raises(IntegrityError, match="more than 3 entries"):
        read_tree(image, Limits(max_entries=3))


def test_whiteouts_of_later_layers_apply(tmp_path: Path) -> None:
    root = _hostile(
        tmp_path,
        [
            _entry("release-manifests/keep.yaml"),
            _entry("release-manifests/drop.yaml"),
            _entry("release-manifests/.wh.drop.yaml"),
        ],
    )
    assert sorted(read_tree(open_image(LayoutDir(root))).files) == ["release-manifests/keep.yaml"]


def test_open_payload_reads_an_extracted_directory_or_an_image(tmp_path: Path) -> None:
    root = _layout(tmp_path)
    from_image = open_payload(str(root))
    assert from_image.digest == build_image(FILES, "1.0.0").digest
    extracted = tmp_path / "extracted"
    write_tree(
        extracted, read_tree(open_image(LayoutDir(root))).files, ("manifests", "release-manifests")
    )
    from_dir = open_payload(str(extracted))
    assert from_dir.digest is None
    assert load_payload(from_dir.files).version_hash == load_payload(from_image.files).version_hash


def test_write_tree_refuses_a_non_empty_target(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "x").write_text("keep")
    with pytest.raises(Exception, match="not empty"):
        write_tree(tmp_path / "t", {"a": b"b"})
    assert json.loads(json.dumps(sorted(p.name for p in (tmp_path / "t").iterdir()))) == ["x"]


def test_a_layer_that_inflates_without_end_is_stopped(tmp_path: Path) -> None:
    """A gzip bomb: 64 MB of zeros in one entry, about 64 KB compressed."""
    root = _hostile(tmp_path, [_entry("filler/zeros", data=b"\0" * (64 << 20))])
    image = open_image(LayoutDir(root))
    assert image.size < 1 << 20
    with pytest.raises(IntegrityError, match="layer unpacks to more than 8388608 bytes"):
        read_tree(image, Limits(max_layer=8 << 20))


def test_links_count_towards_the_size_bound(tmp_path: Path) -> None:
    entries = [_entry("release-manifests/big.yaml", data=b"z" * 1000)]
    entries += [
        _entry(f"release-manifests/l{i}.yaml", tarfile.SYMTYPE, "big.yaml") for i in range(10)
    ]
    image = open_image(LayoutDir(_hostile(tmp_path, entries)))
    assert len(read_tree(image).files) == 11
    with pytest.raises(IntegrityError, match="payload exceeds 5000 bytes"):
        read_tree(image, Limits(max_total=5000))


def test_a_layer_whose_diff_id_differs_is_refused(tmp_path: Path) -> None:
    root = _hostile(tmp_path, [_entry("release-manifests/a.yaml")])
    image = open_image(LayoutDir(root))
    lying = dataclasses.replace(image, config={"rootfs": {"diff_ids": ["sha256:" + "0" * 64]}})
    with pytest.raises(IntegrityError, match="the config says sha256:0000"):
        read_tree(lying)
