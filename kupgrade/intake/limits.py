"""The bounds every input is read within, and how a user raises them.

Each limit has an environment variable; the defaults admit every real input we know of
(a 2.2M-sample metrics snapshot, the full OpenShift graph-data, a 5,000-node profile)
with room to spare, and stop hostile ones long before memory or time run out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from kupgrade.errors import InputError

_MIB = 1024 * 1024


class LimitError(InputError):
    """An input larger, deeper or more repetitive than the limits allow."""


@dataclass(frozen=True, slots=True)
class Limit:
    name: str
    env: str
    default: int
    unit: str

    def value(self) -> int:
        raw = os.environ.get(self.env, "").strip()
        if not raw:
            return self.default
        try:
            value = int(raw)
        except ValueError:
            raise InputError(
                f"{raw!r} is not a whole number", field=self.env, hint=f"default {self.default}"
            ) from None
        if value <= 0:
            raise InputError("must be positive", field=self.env, hint=f"default {self.default}")
        return value

    def exceeded(self, what: str, source: str) -> LimitError:
        return LimitError(
            f"{what} exceeds the limit of {self.value():,} {self.unit}",
            file=source,
            hint=f"if the input is genuine, raise {self.env}",
        )


BYTES = Limit("bytes", "KUPGRADE_MAX_INPUT_BYTES", 1024 * _MIB, "bytes")
DEPTH = Limit("depth", "KUPGRADE_MAX_DEPTH", 200, "levels")
NODES = Limit("alias nodes", "KUPGRADE_MAX_YAML_ALIAS_NODES", 1_000_000, "nodes")
