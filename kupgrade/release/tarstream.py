"""The members of a layer's tar stream, read at the speed the headers allow (SPEC B2).

Why not tarfile alone: its stream mode parses each 512-byte header field by field in
Python, sums the checksum byte by byte and slices its read buffer on every read. For a
release layer of 1,000 manifests that was 60% of `release extract`'s time, and the
reason it ran behind `tar -xzf`. The headers image layers hold are few and plain (ustar
with its prefix, GNU long names and links, pax records for long paths and sizes), so
this reader reads those, with tarfile's own rules for each field (CPython
Lib/tarfile.py: TarInfo.frombuf, _proc_builtin, _proc_gnulong, _proc_pax,
_apply_pax_info; TarFile.next), and gives tarfile.TarInfo members so the checks that
follow are the same code either way.

Anything else, or anything wrong, raises `Unusual`: the caller reads the layer again
with tarfile from its start, so every case this reader does not take (global pax
headers, sparse files, devices, a checksum that holds only summed as signed bytes, a
bad checksum, a truncated stream, a malformed pax record) gets exactly tarfile's
answer, errors included.
Re-reading is safe because a layer's entries applied twice in order leave what they
leave once.
"""

from __future__ import annotations

import re
import tarfile
import zlib
from collections.abc import Callable, Iterator

BLOCK = 512
_CHUNK = 1 << 16
_ZEROS = bytes(BLOCK)

_REGULAR = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE)
_PLAIN = (*_REGULAR, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE)
_LONG = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
# A member is preceded by a pax header, a long name and a long link at most, in writers
# that mean well; a longer chain goes to tarfile.
_MAX_EXTENSIONS = 4

# The number fields of a header (TarInfo.frombuf reads each with nti): mode, uid, gid,
# size, mtime, chksum, devmajor, devminor.
_NUMBERS = (
    (100, 108),
    (108, 116),
    (116, 124),
    (124, 136),
    (136, 148),
    (148, 156),
    (329, 337),
    (337, 345),
)
# What tar writers put there: octal digits, maybe after spaces, ended by NULs or spaces.
# nti reads such a field as int(digits or "0", 8); any other form goes to nti itself.
_OCTAL = re.compile(rb" *([0-7]*)[ \x00]*")
# A pax record's start, as _proc_pax matches it.
_PAX_RECORD = re.compile(rb"(\d+) ([^=]+)=")


class Unusual(Exception):  # noqa: N818 - not an error: a case left to tarfile
    """A header or stream this reader leaves to tarfile."""


def _text(field: bytes) -> str:
    """nts: up to the first NUL, in tarfile's default encoding and error handler."""
    end = field.find(b"\x00")
    return (field if end < 0 else field[:end]).decode(tarfile.ENCODING, "surrogateescape")


def _number(block: bytes, start: int, end: int) -> int:
    """nti on block[start:end]; a field nti refuses is Unusual."""
    found = _OCTAL.fullmatch(block, start, end)
    if found is not None:
        return int(found.group(1) or b"0", 8)
    try:
        return int(tarfile.nti(block[start:end]))  # type: ignore[attr-defined]
    except (tarfile.HeaderError, ValueError):
        raise Unusual from None


def _checksum_holds(block: bytes, stored: int) -> bool:
    """The unsigned header checksum (calc_chksums' first): 256 for the field itself as
    spaces, plus every other byte. adler32's low half is 1 + the bytes' sum mod 65521,
    exact for 256 bytes (at most 65,280): the sum in C, not byte by byte. A header
    that holds only with the signed sum goes to tarfile."""
    total = (zlib.adler32(block[:256]) & 0xFFFF) + (zlib.adler32(block[256:]) & 0xFFFF) - 2
    return stored == total - sum(block[148:156]) + 256


def _decode_pax(value: bytes) -> str:
    """_decode_pax_field without hdrcharset: UTF-8, else UTF-8 with surrogateescape."""
    try:
        return value.decode("utf-8", "strict")
    except UnicodeDecodeError:
        return value.decode("utf-8", "surrogateescape")


class TarStream:
    """The members of one tar stream, read through `read(n)`; `data` gives the current
    member's content. Raises Unusual where tarfile must decide."""

    def __init__(self, read: Callable[[int], bytes]) -> None:
        self._read = read
        self._buf = b""
        self._pos = 0
        self._pending = 0  # bytes of the current member's data not yet read
        self._padding = 0  # and the padding after them

    def __iter__(self) -> Iterator[tarfile.TarInfo]:
        while True:
            self._skip_rest()
            block = self._header()
            if block is None:
                return
            member = self._member(block)
            self._pending = member.size if member.type in _REGULAR else 0
            self._padding = -self._pending % BLOCK
            yield member

    def data(self, member: tarfile.TarInfo) -> bytes:
        """The content of the member just given (a regular file)."""
        if self._pending != member.size:
            raise Unusual  # read already, or not the current member
        self._pending = 0
        return self._take(member.size)

    # --- the stream ----------------------------------------------------------------

    def _take(self, size: int) -> bytes:
        end = self._pos + size
        if end <= len(self._buf):
            out = self._buf[self._pos : end]
            self._pos = end
            return out
        parts = [self._buf[self._pos :]]
        have = len(parts[0])
        while have < size:
            chunk = self._read(max(_CHUNK, size - have))
            if not chunk:
                raise Unusual  # truncated: tarfile says how
            parts.append(chunk)
            have += len(chunk)
        joined = b"".join(parts)
        self._buf, self._pos = joined, size
        return joined[:size] if have > size else joined

    def _skip_rest(self) -> None:
        """Past the current member's unread data and its padding, a piece at a time (a
        file outside the payload may be as large as the layer)."""
        skip = self._pending + self._padding
        self._pending = self._padding = 0
        held = len(self._buf) - self._pos
        while skip > held:
            skip -= held
            self._buf, self._pos = self._read(_CHUNK), 0
            held = len(self._buf)
            if not held:
                raise Unusual  # truncated: tarfile says how
        self._pos += skip

    def _header(self) -> bytes | None:
        """The next header block; None at the end (a block of zeros). A stream that ends
        without one is Unusual (`_take`): tarfile ends there or refuses it."""
        block = self._take(BLOCK)
        return None if block == _ZEROS else block

    # --- headers -------------------------------------------------------------------

    def _member(self, block: bytes, depth: int = 0) -> tarfile.TarInfo:
        """The member a header starts, after any pax or GNU long-name headers before
        it, each applied as tarfile applies them (the outermost last)."""
        member = self._frombuf(block)
        if member.type in _PLAIN:
            return member
        if depth >= _MAX_EXTENSIONS:
            raise Unusual
        if member.type in _LONG:
            text = _text(self._take(member.size + (-member.size % BLOCK)))
            inner = self._member(self._required_header(), depth + 1)
            if member.type == tarfile.GNUTYPE_LONGNAME:
                inner.name = text
            else:
                inner.linkname = text
            if inner.isdir():
                inner.name = inner.name.removesuffix("/")
            return inner
        if member.type == tarfile.XHDTYPE:
            records = self._pax(self._take(member.size + (-member.size % BLOCK)))
            inner = self._member(self._required_header(), depth + 1)
            return self._apply_pax(inner, records)
        raise Unusual  # global pax headers, sparse files, devices, unknown types

    def _required_header(self) -> bytes:
        """The header a pax or long-name header applies to: one must follow."""
        block = self._header()
        if block is None:
            raise Unusual  # tarfile: a subsequent header error
        return block

    def _frombuf(self, block: bytes) -> tarfile.TarInfo:
        """TarInfo.frombuf for the types read here."""
        numbers = [_number(block, start, end) for start, end in _NUMBERS]
        if not _checksum_holds(block, numbers[5]):
            raise Unusual
        if numbers[3] < 0:
            raise Unusual  # a negative base-256 size
        member = tarfile.TarInfo(_text(block[0:100]))
        member.size = numbers[3]
        member.type = block[156:157]
        member.linkname = _text(block[157:257])
        prefix = _text(block[345:500])
        if member.type == tarfile.AREGTYPE and member.name.endswith("/"):
            member.type = tarfile.DIRTYPE
        if member.isdir():
            member.name = member.name.rstrip("/")
        if prefix and member.type not in tarfile.GNU_TYPES:
            member.name = prefix + "/" + member.name
        return member

    def _pax(self, data: bytes) -> dict[str, str]:
        """_proc_pax's records; anything beyond path, link path and plain fields is Unusual."""
        if re.search(rb"\d+ hdrcharset=([^\n]+)\n", data):
            raise Unusual
        records: dict[str, str] = {}
        pos = 0
        while (found := _PAX_RECORD.match(data, pos)) is not None:
            length = int(found.group(1))
            if length == 0:
                raise Unusual
            keyword = _decode_pax(found.group(2))
            if keyword.startswith("GNU.sparse."):
                raise Unusual
            records[keyword] = _decode_pax(data[found.end(2) + 1 : found.start(1) + length - 1])
            pos += length
        return records

    @staticmethod
    def _apply_pax(member: tarfile.TarInfo, records: dict[str, str]) -> tarfile.TarInfo:
        """_apply_pax_info, for the fields this reader's callers read (the others it sets
        never fail: a number that does not parse becomes 0)."""
        for keyword, value in records.items():
            if keyword == "path":
                member.name = value.rstrip("/")
            elif keyword == "linkpath":
                member.linkname = value
            elif keyword == "size":
                try:
                    member.size = int(value)
                except ValueError:
                    member.size = 0
        if member.size < 0:
            raise Unusual
        return member
