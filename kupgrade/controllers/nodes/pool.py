"""Which nodes of a pool may update now, and what the pool reports (SPEC E1-E6).

These are the machine-config operator's rules, kept exact because users size
maxUnavailable and PodDisruptionBudgets by them: capacity is maxUnavailable minus the
nodes already unavailable (not ready, cordoned, or not done with their config) and
minus those failing the new config; candidates are taken by zone, then oldest first;
a node counts as "updated" only when its daemon says Done at the pool's target, and the
pool's CONFIG moves only when every node is updated and available.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kupgrade.cluster.mco import (  # noqa: F401  (re-exported: the pool rules' vocabulary)
    CURRENT,
    CURRENT_IMAGE,
    DEGRADED,
    DESIRED,
    DESIRED_DRAIN,
    DESIRED_IMAGE,
    DONE,
    LAST_APPLIED_DRAIN,
    PREFIX,
    REASON,
    REQUIRED_FOR_UPGRADE,
    STATE,
    UNRECONCILABLE,
    WORKING,
    ZONE_LABEL,
)
from kupgrade.errors import InputError
from kupgrade.versions import go_quote

Node = Mapping[str, Any]


def notes_of(node: Node) -> Mapping[str, str]:
    return (node.get("metadata") or {}).get("annotations") or {}


def name_of(node: Node) -> str:
    return str((node.get("metadata") or {}).get("name", ""))


def max_unavailable(value: int | str | None, nodes: int, pool: str = "worker") -> int:
    """spec.maxUnavailable as a node count: percentages round down, never below 1 (SPEC E2)."""
    if pool == "arbiter":
        return 1
    if value is None:
        return 1
    if isinstance(value, bool):
        raise InputError(f"maxUnavailable must be an integer or a percentage, not {value!r}")
    if isinstance(value, int):
        count = value
    else:
        text = str(value)
        if not text.endswith("%") or not text[:-1].isdigit():
            raise InputError(
                f"invalid value for IntOrString: invalid type: string is not a percentage: {text!r}",
                field="spec.maxUnavailable",
                rule="SPEC E2",
                hint='use an integer or a percentage such as "25%"',
            )
        count = math.floor(int(text[:-1]) * nodes / 100)
    return max(count, 1)


def is_ready(node: Node) -> bool:
    """Ready=True, no disk pressure, network available and not cordoned."""
    for condition in (node.get("status") or {}).get("conditions") or []:
        kind, status = condition.get("type"), condition.get("status")
        if kind == "Ready" and status != "True":
            return False
        if kind in ("DiskPressure", "NetworkUnavailable") and status != "False":
            return False
    return not (node.get("spec") or {}).get("unschedulable", False)


def is_done(node: Node) -> bool:
    """The daemon finished the config it was asked for."""
    a = notes_of(node)
    current, desired = a.get(CURRENT, ""), a.get(DESIRED, "")
    return (
        bool(current)
        and current == desired
        and a.get(CURRENT_IMAGE) == a.get(DESIRED_IMAGE)
        and a.get(STATE) == DONE
    )


def is_failing(node: Node) -> bool:
    a = notes_of(node)
    return a.get(CURRENT) != a.get(DESIRED) and a.get(STATE) in (DEGRADED, UNRECONCILABLE)


def is_unavailable(node: Node) -> bool:
    return not is_ready(node) or (not is_done(node) and not is_failing(node))


def is_updated(node: Node, target: str) -> bool:
    return (
        is_done(node)
        and notes_of(node).get(DESIRED) == target
        and DESIRED_IMAGE not in notes_of(node)
    )


def is_degraded(node: Node) -> bool:
    return notes_of(node).get(STATE) in (DEGRADED, UNRECONCILABLE)


def is_candidate(node: Node, target: str) -> bool:
    a = notes_of(node)
    return (a.get(DESIRED) != target or DESIRED_IMAGE in a) and is_ready(node)


def zone_order(nodes: Sequence[Node]) -> list[Node]:
    """Zone label ascending, oldest first within a zone; nodes without a zone last (SPEC E4)."""

    def key(node: Node) -> tuple[int, str, str]:
        meta = node.get("metadata") or {}
        zone = (meta.get("labels") or {}).get(ZONE_LABEL)
        created = sortable_time(str(meta.get("creationTimestamp", "")))
        return (1, "", created) if zone is None else (0, str(zone), created)

    return sorted(nodes, key=key)


def sortable_time(stamp: str) -> str:
    """RFC 3339 with any fraction, as text that sorts by time (fractions padded)."""
    if not stamp:
        return ""
    head, dot, rest = stamp.partition(".")
    if not dot:
        return stamp.rstrip("Z") + ".000000000"
    return head + "." + rest.rstrip("Z").ljust(9, "0")


@dataclass(frozen=True)
class Candidates:
    capacity: int
    targeted: list[str]
    others: list[str] | None

    def to_json(self) -> dict[str, Any]:
        return {
            "capacity": self.capacity,
            "targeted": self.targeted,
            "other_candidates": self.others,
        }


def candidates(
    nodes: Sequence[Node], target: str, limit: int, defer: str | None = None
) -> Candidates:
    """The nodes to target now; `defer` names a node to keep for last (the one hosting the operator)."""
    unavailable = sum(1 for n in nodes if is_unavailable(n))
    if unavailable >= limit:
        return Candidates(0, [], None)
    capacity = limit - unavailable
    pending = [n for n in nodes if is_candidate(n, target)]
    failing = sum(1 for n in nodes if is_failing(n) and not is_candidate(n, target))
    if failing >= capacity:
        return Candidates(0, [], None)
    capacity -= failing
    if capacity < len(pending):
        pending = zone_order(pending)
    if defer is not None and len(pending) > 1:
        pending = [n for n in pending if name_of(n) != defer] + [
            n for n in pending if name_of(n) == defer
        ]
    names = [name_of(n) for n in pending]
    if capacity >= len(names):
        return Candidates(capacity, names, None)
    return Candidates(capacity, names[:capacity], names[capacity:])


@dataclass(frozen=True)
class PoolStatus:
    configuration: str
    machines: int
    ready: int
    updated: int
    unavailable: int
    degraded: int
    conditions: dict[str, dict[str, str]]

    def columns(self) -> dict[str, Any]:
        """`oc get mcp` columns without NAME and AGE (SPEC E6), as the stored pool shows them."""
        conditions = [{"type": kind, **c} for kind, c in self.conditions.items()]
        return mcp_columns({"status": {**self.status(), "conditions": conditions}})

    def status(self) -> dict[str, Any]:
        """The MachineConfigPool status fields (conditions get their times from the caller)."""
        return {
            "configuration": {"name": self.configuration},
            "machineCount": self.machines,
            "readyMachineCount": self.ready,
            "updatedMachineCount": self.updated,
            "unavailableMachineCount": self.unavailable,
            "degradedMachineCount": self.degraded,
        }


def _condition(status: str, reason: str = "", message: str = "") -> dict[str, str]:
    return {"status": status, "reason": reason, "message": message}


def pool_status(
    nodes: Sequence[Node],
    target: str,
    configuration: str,
    *,
    paused: bool = False,
    render_degraded: str | None = None,
) -> PoolStatus:
    """The pool's status from its nodes (the node-annotation rules)."""
    updated = [n for n in nodes if is_updated(n, target)]
    return summarize_pool(
        target,
        configuration,
        Counts(
            machines=len(nodes),
            updated=len(updated),
            ready=sum(1 for n in updated if is_ready(n)),
            unavailable=sum(1 for n in nodes if is_unavailable(n)),
        ),
        [n for n in nodes if is_degraded(n)],
        paused=paused,
        render_degraded=render_degraded,
    )


@dataclass(frozen=True)
class Counts:
    machines: int
    updated: int
    ready: int  # updated and ready
    unavailable: int


def summarize_pool(
    target: str,
    configuration: str,
    counts: Counts,
    degraded: Sequence[Node],
    *,
    paused: bool = False,
    render_degraded: str | None = None,
) -> PoolStatus:
    """Conditions and counts from what was counted; `degraded` in the pool's node order."""
    machines, ready, unavailable = counts.machines, counts.ready, counts.unavailable
    conditions: dict[str, dict[str, str]] = {}
    all_updated = counts.updated == ready == machines and unavailable == 0
    if all_updated:
        configuration = target
        conditions["Updated"] = _condition(
            "True", message=f"All nodes are updated with MachineConfig {target}"
        )
        conditions["Updating"] = _condition("False")
    else:
        conditions["Updated"] = _condition("False")
        conditions["Updating"] = (
            _condition(
                "False", message=f"Pool is paused; will not update to MachineConfig {target}"
            )
            if paused
            else _condition("True", message=f"All nodes are updating to MachineConfig {target}")
        )
    # machine-config-operator pkg/controller/node/status.go (dc7fd14f7^): reasons with %q.
    node_message = ", ".join(
        f"Node {name_of(n)} is reporting: {go_quote(notes_of(n).get(REASON, ''))}" for n in degraded
    )
    conditions["NodeDegraded"] = (
        _condition(
            "True", f"{len(degraded)} nodes are reporting degraded status on sync", node_message
        )
        if degraded
        else _condition("False")
    )
    # Degraded = NodeDegraded or RenderDegraded; only the nodes' message is carried over (a
    # render failure is explained by the pool's RenderDegraded condition, which the render
    # controller owns).
    conditions["Degraded"] = (
        _condition("True", message=node_message if degraded else "")
        if degraded or render_degraded is not None
        else _condition("False")
    )
    return PoolStatus(
        configuration, machines, ready, counts.updated, unavailable, len(degraded), conditions
    )


MCP_COLUMNS = (
    "CONFIG",
    "UPDATED",
    "UPDATING",
    "DEGRADED",
    "MACHINECOUNT",
    "READYMACHINECOUNT",
    "UPDATEDMACHINECOUNT",
    "DEGRADEDMACHINECOUNT",
)


def mcp_columns(pool: dict[str, Any]) -> dict[str, Any]:
    """`oc get mcp` columns of a stored MachineConfigPool, without NAME and AGE (SPEC E6)."""
    status = pool.get("status") or {}
    conditions = status.get("conditions") or []

    def state(kind: str) -> str:
        return next((c["status"] for c in conditions if c.get("type") == kind), "")

    return {
        "CONFIG": (status.get("configuration") or {}).get("name", ""),
        "UPDATED": state("Updated"),
        "UPDATING": state("Updating"),
        "DEGRADED": state("Degraded"),
        "MACHINECOUNT": status.get("machineCount", 0),
        "READYMACHINECOUNT": status.get("readyMachineCount", 0),
        "UPDATEDMACHINECOUNT": status.get("updatedMachineCount", 0),
        "DEGRADEDMACHINECOUNT": status.get("degradedMachineCount", 0),
    }
