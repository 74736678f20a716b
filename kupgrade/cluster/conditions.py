"""Status conditions as the API server keeps them (`type`, `status`, `reason`, `message`,
`lastTransitionTime`).

The transition time only moves when the status changes: users read "since when" off it
(`oc get clusterversion` SINCE), so re-writing the same status must not reset it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Condition = dict[str, Any]


def find(conditions: Sequence[Condition] | None, kind: str) -> Condition | None:
    for condition in conditions or ():
        if condition.get("type") == kind:
            return condition
    return None


def set_condition(conditions: list[Condition], new: Condition, now: str) -> None:
    """Insert or update `new` in place; keep lastTransitionTime unless the status changed."""
    new = {k: v for k, v in new.items() if v not in (None, "") or k in ("type", "status")}
    old = find(conditions, new["type"])
    if old is None:
        conditions.append({**new, "lastTransitionTime": new.get("lastTransitionTime", now)})
        return
    stamp = old.get("lastTransitionTime", now) if old.get("status") == new["status"] else now
    old.clear()
    old.update({**new, "lastTransitionTime": stamp})


def remove(conditions: list[Condition], kind: str) -> None:
    conditions[:] = [c for c in conditions if c.get("type") != kind]


def indent(text: str) -> str:
    """A multi-line text under a two-space label, as oc indents a condition's message."""
    return str(text).replace("\n", "\n  ")


def reason_message(c: dict[str, Any]) -> list[str]:
    """A condition's Reason and Message lines as `oc adm upgrade` prints them."""
    return [f"  Reason: {c.get('reason', '')}", f"  Message: {indent(c.get('message', ''))}"]


def conditions_row(c: Condition) -> dict[str, str]:
    """A condition's fields as text, as the live view lists them."""
    return {
        k: str(c.get(k, "")) for k in ("type", "status", "reason", "message", "lastTransitionTime")
    }


def operator_row(co: Condition) -> dict[str, Any]:
    """A ClusterOperator's version and its three conditions."""
    conditions = {
        c.get("type"): c.get("status") for c in (co.get("status") or {}).get("conditions") or []
    }
    versions = [
        v.get("version", "")
        for v in (co.get("status") or {}).get("versions") or []
        if v.get("name") == "operator"
    ]
    return {
        "name": co["metadata"]["name"],
        "version": versions[0] if versions else "",
        **{k: conditions.get(k, "Unknown") for k in ("Available", "Progressing", "Degraded")},
    }
