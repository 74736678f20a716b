"""The layer reader's own tar entry check says what tarfile's data filter says (CPython's
`tarfile.data_filter`), refusing the same entries with the same words, on drawn entries:
every type, names and link targets with `.`, `..`, `/` and absolute paths."""

from __future__ import annotations

import tarfile

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.release.oci import _ANCHOR, _data_filter

PARTS = st.sampled_from(["a", "b", ".", "..", "release-manifests", "x.yaml", ""])
NAMES = st.lists(PARTS, min_size=1, max_size=5).map("/".join)
TYPES = st.sampled_from(
    [
        tarfile.REGTYPE,
        tarfile.AREGTYPE,
        tarfile.DIRTYPE,
        tarfile.SYMTYPE,
        tarfile.LNKTYPE,
        tarfile.CHRTYPE,
        tarfile.BLKTYPE,
        tarfile.FIFOTYPE,
        tarfile.CONTTYPE,
        tarfile.GNUTYPE_SPARSE,
    ]
)


@given(NAMES, TYPES, NAMES, st.booleans())
def test_the_check_refuses_what_the_data_filter_refuses(
    name: str, kind: bytes, link: str, absolute_link: bool
) -> None:
    member = tarfile.TarInfo(name)
    member.type = kind
    member.linkname = ("/" + link) if absolute_link else link
    if name.startswith("/") or ".." in name.split("/"):
        return  # refused before either check runs (absolute paths, '..')
    try:
        tarfile.data_filter(member, _ANCHOR)
        expected = None
    except tarfile.FilterError as exc:
        expected = str(exc)
    assert _data_filter(member) == expected
