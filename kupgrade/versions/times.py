"""Kubernetes' timestamps (RFC 3339, whole seconds, UTC: metav1.Time), written and read
back as every object and event carries them."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any


def rfc3339(seconds: float) -> str:
    return _rfc3339(int(seconds))


# A rehearsal stamps every object it writes in one step with the same second, and parses
# the same few stamps back again (a drain's pods' deletionTimestamps): formatting and
# parsing are cached, by the whole second that is all they depend on.
@functools.lru_cache(maxsize=4096)
def _rfc3339(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@functools.lru_cache(maxsize=4096)
def parse_rfc3339(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def stamp_or_zero(stamp: object) -> float:
    """A timestamp a client may have left out or written badly: 0 (Go's zero time, long
    ago) rather than an error."""
    try:
        return parse_rfc3339(str(stamp)) if stamp else 0.0
    except ValueError:
        return 0.0


def parse_time(text: Any) -> float:
    """An RFC 3339 time as seconds; 0.0 when there is none (a real cluster's old events)."""
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0
