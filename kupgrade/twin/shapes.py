"""A dump's values read in the shape a reader expects, or empty: an object from a user's
must-gather may hold anything where a map or a list belongs, and one wrong value must
drop one reading, never the import."""

from __future__ import annotations

from typing import Any


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
