"""The fast tar reader reads what tarfile reads, or hands the stream back (SPEC B2).

Archives are written by tarfile in its three formats (ustar with its name prefix, GNU
long names and links, pax records), then read by both: the fast reader must give the
same members (name, type, link, size, content) or raise Unusual; it may never give
something else, nor end early where tarfile goes on or refuses. Damaged copies (cut
short, a byte changed) hold it to the same rule. Through `read_tree`, a layer the fast
reader leaves to tarfile is read again from its start with the same result.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from kupgrade.release.oci import open_image, read_tree
from kupgrade.release.payload import read_directory
from kupgrade.release.sources import LayoutDir
from kupgrade.release.tarstream import TarStream, Unusual
from tests.release.test_staged import _image
from tests.support.cli import kupgrade
from tests.support.conformance import CONFORMANCE, conformance_path, need_case

FORMATS = {"ustar": tarfile.USTAR_FORMAT, "gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT}

SEGMENT = st.text(alphabet=st.sampled_from("abcXYZ019._-é€"), min_size=1, max_size=60).filter(
    lambda s: s not in (".", "..")
)
# Long ones too: past 100 bytes ustar splits them into its prefix, GNU writes long-name
# and long-link headers, pax writes path and linkpath records.
PATH = st.one_of(
    st.lists(SEGMENT, min_size=1, max_size=5),
    st.lists(SEGMENT.map(lambda s: (s * 40)[:45]), min_size=3, max_size=6),
).map("/".join)
ENTRY = st.one_of(
    st.tuples(st.just("file"), PATH, st.binary(max_size=1500)),
    st.tuples(st.just("dir"), PATH, st.just(b"")),
    st.tuples(st.just("symlink"), PATH, PATH.map(str.encode)),
    st.tuples(st.just("hardlink"), PATH, PATH.map(str.encode)),
)


def _archive(fmt: int, entries: list[tuple[str, str, bytes]]) -> bytes:
    """The entries written by tarfile (a name or link the format cannot hold: rejected)."""
    try:
        return _written(fmt, entries)
    except ValueError:  # ustar: over 255 bytes of name, 100 of link
        reject()


def _written(fmt: int, entries: list[tuple[str, str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as tar:
        for kind, name, body in entries:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(body)
                tar.addfile(info, io.BytesIO(body))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE}.get(
                kind, tarfile.LNKTYPE
            )
            info.linkname = body.decode()
            tar.addfile(info)
        end = tar.offset + 2 * tarfile.BLOCKSIZE  # without the padding to a whole record
    return buffer.getvalue()[:end]


Seen = list[tuple[str, bytes, str, int, bytes | None]]


def _wanted(name: str) -> bool:
    """The files whose content is read (the others are skipped, as files outside the
    payload are)."""
    return len(name) % 3 != 0


def _by_tarfile(data: bytes) -> Seen | str:
    """What tarfile's stream mode reads, as `release extract` reads it; "error" when it
    refuses the stream anywhere."""
    seen: Seen = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r|") as tar:
            for m in tar:
                handle = tar.extractfile(m) if m.isreg() and _wanted(m.name) else None
                body = handle.read() if handle else None
                seen.append((m.name, m.type, m.linkname, m.size, body))
    except (tarfile.TarError, EOFError):
        return "error"
    return seen


def _by_fast(data: bytes, piece: int = 1 << 20) -> Seen | None:
    """What the fast reader reads, from a stream that gives at most `piece` bytes a read
    (as an inflating stream may); None when it hands the stream to tarfile."""
    stream = io.BytesIO(data)
    tar = TarStream(lambda n: stream.read(min(n, piece)))
    seen: Seen = []
    try:
        for m in tar:
            body = tar.data(m) if m.isreg() and _wanted(m.name) else None
            seen.append((m.name, m.type, m.linkname, m.size, body))
    except Unusual:
        return None
    return seen


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(FORMATS)), st.lists(ENTRY, max_size=8), st.integers(1, 3000))
def test_it_reads_what_tarfile_reads_in_every_format(fmt: str, entries: Any, piece: int) -> None:
    data = _archive(FORMATS[fmt], entries)
    fast = _by_fast(data, piece)
    assert fast is not None, "a plain archive is read here, not handed back"
    assert fast == _by_tarfile(data)
    # and every member came through, long names and links whole
    assert [
        (name, body if _wanted(name) else None) for k, name, body in entries if k == "file"
    ] == [(n, b) for n, t, _, _, b in fast if t == tarfile.REGTYPE]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(FORMATS)),
    st.lists(ENTRY, min_size=1, max_size=5),
    st.data(),
)
def test_a_damaged_archive_reads_the_same_or_goes_back(fmt: str, entries: Any, data: Any) -> None:
    raw = bytearray(_archive(FORMATS[fmt], entries))
    if data.draw(st.booleans(), label="cut"):
        raw = raw[: data.draw(st.integers(0, len(raw)), label="at")]
    else:
        at = data.draw(st.integers(0, len(raw) - 1), label="at")
        raw[at] = data.draw(st.integers(0, 255), label="byte")
    fast = _by_fast(bytes(raw), data.draw(st.integers(1, 3000), label="piece"))
    if fast is not None:  # read here: exactly what tarfile reads, and tarfile accepts it
        assert fast == _by_tarfile(bytes(raw))


def _signed_checksum(archive: bytearray) -> None:
    """Rewrite the first header's checksum as old tars wrote it: bytes summed as signed."""
    archive[148:156] = b" " * 8
    total = sum(b - 256 if b > 127 else b for b in archive[:512])
    archive[148:156] = b"%06o\x00 " % total


def test_what_it_leaves_to_tarfile() -> None:
    plain = _archive(tarfile.USTAR_FORMAT, [("file", "manifests/a€.yaml", b"x")])
    signed = bytearray(plain)
    _signed_checksum(signed)  # a name with bytes over 127: the sums differ
    assert _by_fast(bytes(signed)) is None
    assert _by_tarfile(bytes(signed)) == _by_tarfile(plain) != "error"
    buffer = io.BytesIO()
    with tarfile.open(
        fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, pax_headers={"comment": "global"}
    ) as tar:  # a global header ("g") first
        tar.addfile(tarfile.TarInfo("manifests/a.yaml"))
    assert _by_fast(buffer.getvalue()) is None
    device = tarfile.TarInfo("manifests/dev")
    device.type = tarfile.CHRTYPE
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(device)
    assert _by_fast(buffer.getvalue()) is None
    assert _by_fast(b"") is None and _by_fast(b"garbage" * 100) is None


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_layer_handed_back_is_read_again_from_its_start(tmp_path: Path, fmt: str) -> None:
    """Through read_tree: a layer the fast reader hands back halfway (a global pax header
    after two files) is read again by tarfile, to the same tree as if read once."""
    long = "manifests/" + "d" * 90 + "/" + "n" * 60 + ".yaml"  # ustar: in its prefix
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w", format=FORMATS[fmt]) as tar:
        for name, body in [("manifests/a.yaml", b"a: 1\n"), (long, b"b: 2\n")]:
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
        header = tarfile.TarInfo.create_pax_global_header({"comment": "global"})
        tar.fileobj.write(header)
        tar.offset += len(header)
        info = tarfile.TarInfo("manifests/c.yaml")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"c: 3\n"))
    assert _by_fast(layer.getvalue()) is None
    root = _image(tmp_path, [layer.getvalue(), [("manifests/a.yaml", b"a: 4\n")]])
    tree = read_tree(open_image(LayoutDir(root)))
    assert tree.files == {
        "manifests/a.yaml": b"a: 4\n",
        long: b"b: 2\n",
        "manifests/c.yaml": b"c: 3\n",
    }
    assert tree.total == sum(len(b) for b in tree.files.values())


def test_a_pax_size_outranks_the_header_field() -> None:
    """A pax "size" record (what writers give files over 8 GiB) is the size read and
    skipped, whatever the ustar field says, as tarfile reads it."""
    info = tarfile.TarInfo("manifests/big.yaml")
    info.size = 700
    info.pax_headers = {"size": "700"}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(info, io.BytesIO(b"x" * 700))
        tar.addfile(tarfile.TarInfo("manifests/next.yaml"))
    raw = bytearray(buffer.getvalue())
    member = raw.index(b"manifests/big.yaml\x00")  # the ustar header after the pax one
    raw[member + 124 : member + 136] = b"%011o\x00" % 1  # the field says 1 byte
    raw[member + 148 : member + 156] = b" " * 8
    raw[member + 148 : member + 156] = b"%06o\x00 " % sum(raw[member : member + 512])
    fast = _by_fast(bytes(raw))
    assert fast == _by_tarfile(bytes(raw))
    assert fast is not None and [(m[0], m[3]) for m in fast] == [
        ("manifests/big.yaml", 700),
        ("manifests/next.yaml", 0),
    ]


def _fixtures() -> list[Any]:
    """The version controller's payload fixtures (cvo/payloads/expected.yaml), by path."""
    path = CONFORMANCE / "cvo" / "payloads" / "expected.yaml"
    if not path.exists():
        return [pytest.param(None, id="conformance-data-missing")]
    fixtures = yaml.safe_load(path.read_text())["fixtures"]
    return [pytest.param(f, id=f["path"].strip("/")) for f in fixtures]


@pytest.mark.parametrize("fmt", ["gnu", "posix", "ustar"])
@pytest.mark.parametrize("fixture", _fixtures())
def test_conformance_payloads_packed_by_gnu_tar(tmp_path: Path, fixture: Any, fmt: str) -> None:
    """SPEC B2, C5: each of the controller's payload fixtures, packed by GNU tar itself
    in its three formats, reads here as tarfile reads it, and through read_tree gives
    the payload files the fixture's directory gives."""
    fixture = need_case(fixture, "cvo", "payloads", "expected.yaml")
    root = conformance_path("cvo", "payloads") / fixture["path"]
    packed = subprocess.run(
        ["tar", f"--format={fmt}", "-cf", "-", "-C", str(root), "."],
        check=True,
        capture_output=True,
    ).stdout
    fast = _by_fast(packed)
    assert fast is not None and fast == _by_tarfile(packed)
    image = _image(tmp_path, [packed])
    tree = read_tree(open_image(LayoutDir(image)))
    got, want = tree.payload_files("layer"), read_directory(root)
    assert want.files and got.files == want.files
    assert got.directories == want.directories


def test_a_layer_cut_inside_a_file_is_refused_in_one_line(tmp_path: Path) -> None:
    """Cut short inside a file's content: the fast reader hands it back, and tarfile's
    error past the first header is the command's one line (it was an internal error),
    exit 1, nothing written."""
    raw = _archive(
        tarfile.USTAR_FORMAT, [("file", f"manifests/{i}.yaml", b"a" * 2000) for i in range(5)]
    )
    image = _image(tmp_path, [raw[:5000]])
    assert _by_fast(raw[:5000]) is None and _by_tarfile(raw[:5000]) == "error"
    target = tmp_path / "out"
    result = kupgrade("release", "extract", str(image), "--to", str(target))
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: {image}: layer is not a tar: unexpected end of data"
    ]
    assert not target.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]
