"""Bytes to text: UTF-8 only, and an error that says where the first bad byte is."""

from __future__ import annotations

from kupgrade.errors import InputError


def decode_utf8(data: bytes, source: str) -> str:
    """The text of `data`; a leading byte-order mark is dropped as Go's readers do."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise not_utf8(data, source) from exc


def not_utf8(data: bytes, source: str) -> InputError:
    """The error for bytes that are not UTF-8, at the offset of the first bad byte."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return InputError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} ({exc.reason})",
            file=source,
            hint="save the file as UTF-8",
        )
    return InputError("not UTF-8 text", file=source, hint="save the file as UTF-8")
