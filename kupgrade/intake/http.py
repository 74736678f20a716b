"""HTTP answers read within a size limit: a hostile server cannot fill our memory."""

from __future__ import annotations

import time
from typing import Any

import httpx

from kupgrade.intake.limits import BYTES


class BodyTooLarge(httpx.HTTPError):
    """The answer's body is larger than KUPGRADE_MAX_INPUT_BYTES allows."""


class TooSlow(httpx.TimeoutException):
    """The whole answer took longer than allowed (a server dripping bytes)."""


def bounded_get(
    client: httpx.Client,
    url: str,
    *,
    max_bytes: int | None = None,
    total_timeout: float | None = None,
    **kwargs: Any,
) -> tuple[httpx.Response, bytes]:
    """GET `url` and read at most `max_bytes` of its body (default: the input limit),
    within `total_timeout` seconds overall when given (httpx's own timeouts bound each
    read, not the whole answer).

    Raises BodyTooLarge or TooSlow (httpx errors, so callers' transport handling applies);
    the connection is closed unread.
    """
    limit = max_bytes if max_bytes is not None else BYTES.value()
    deadline = time.monotonic() + total_timeout if total_timeout is not None else None
    with client.stream("GET", url, **kwargs) as response:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise BodyTooLarge(
                f"the answer declares {int(declared):,} bytes, over the limit of {limit:,} "
                f"({BYTES.env})"
            )
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if deadline is not None and time.monotonic() > deadline:
                raise TooSlow(f"the answer took longer than {total_timeout:g}s")
            if size > limit:
                raise BodyTooLarge(f"the answer is over the limit of {limit:,} bytes ({BYTES.env})")
            chunks.append(chunk)
    return response, b"".join(chunks)
