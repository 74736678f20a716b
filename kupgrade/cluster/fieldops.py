"""What changed between two versions of an object, field by field, and that change made
again on a third: a merge patch (RFC 7386) with removals said explicitly, so that a field
set to null is kept and one removed is removed. Two writers that change different fields
of one object both keep theirs (the store's one writer, sim/inbox.py; a conflict retried
as client-go's RetryOnConflict retries it, cluster/remote.py)."""

from __future__ import annotations

import copy
from typing import Any

import msgspec


class Op(msgspec.Struct, array_like=True):
    """Set `value` at `path` (creating the maps on the way), or remove the field there."""

    path: list[str]
    value: Any = None
    remove: bool = False


def field_ops(old: Any, new: Any, at: list[str] | None = None) -> list[Op]:
    """The fields that differ between `old` and `new`: maps compared key by key, every
    other value (lists included, as a merge patch does) set whole."""
    at = at or []
    if not isinstance(old, dict) or not isinstance(new, dict):
        return [] if old == new else [Op(at, new)]
    ops = [Op([*at, k], remove=True) for k in old if k not in new]
    for k, value in new.items():
        if k not in old:
            ops.append(Op([*at, k], value))
        elif old[k] != value:
            ops.extend(field_ops(old[k], value, [*at, k]))
    return ops


def applied(target: Any, ops: list[Op]) -> Any:
    """`target` with the ops applied, as a new value (the target is not changed)."""
    out = copy.deepcopy(target)
    for op in ops:
        if not op.path:
            out = copy.deepcopy(op.value)
            continue
        if not isinstance(out, dict):
            out = {}
        holder = out
        for part in op.path[:-1]:
            nxt = holder.get(part)
            if not isinstance(nxt, dict):
                nxt = holder[part] = {}
            holder = nxt
        if op.remove:
            holder.pop(op.path[-1], None)
        else:
            holder[op.path[-1]] = copy.deepcopy(op.value)
    return out
