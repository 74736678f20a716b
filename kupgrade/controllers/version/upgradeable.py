"""The ClusterVersion Upgradeable conditions (SPEC C6): what holds back a minor update.

Two forms, both from the cluster-version operator:

- the long-standing checks (pkg/cvo/upgradeable.go at ea13ba611^), in the controller's
  order: ClusterVersion overrides, admin acknowledgements, ClusterOperators that say
  Upgradeable=False, resource deletions in progress, an update in progress. `checks`
  runs them, each failing one as a condition of its own `Upgradeable*` type;
  `conditions` folds them as setUpgradeableConditions does (one failure: its reason and
  message go straight on Upgradeable; two or more: the per-check conditions stay beside
  Upgradeable=False MultipleReasons) and `apply` writes them as NeedsUpdate does.
- today's risk-based form (pkg/cvo/status.go setUpgradeableCondition at 6e719331f):
  `risk_condition` folds named risks, whose names must be valid condition reasons.

The condition is absent when nothing holds the cluster back, so that an absent
condition reads as "upgradeable".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from kupgrade.cluster.conditions import set_condition
from kupgrade.controllers.version.preconditions import OVERRIDES_MESSAGE
from kupgrade.risks.recommend import REASON_RE
from kupgrade.versions import go_quote

Reason = tuple[str, str]  # (reason, message)

# pkg/internal/constants.go: the condition type of each check, and the aggregate's.
UPGRADEABLE = "Upgradeable"
OVERRIDES = "UpgradeableClusterVersionOverrides"
ADMIN_ACK_REQUIRED = "UpgradeableAdminAckRequired"
CLUSTER_OPERATORS = "UpgradeableClusterOperators"
DELETES_IN_PROGRESS = "UpgradeableDeletesInProgress"
UPGRADE_IN_PROGRESS = "UpgradeableUpgradeInProgress"


class Found(NamedTuple):
    """One failing check: its condition type, reason and message.

    `status` is "False" for every check but the update in progress, whose condition the
    controller writes as True (upgradeInProgressUpgradeable.Check; a real cluster shows
    UpgradeableUpgradeInProgress=True beside Upgradeable=False).
    """

    type: str
    reason: str
    message: str
    status: str = "False"


OPERATOR_TEXT = "should not be upgraded between minor or major versions"
ADMIN_GATES = "admin-gates"
ADMIN_ACKS = "admin-acks"
# upgradeable.go adminAckGateFmt: the gate names a 4.y or 5.y release and then its topic.
ADMIN_ACK_GATE = "^ack-[4-5][.]([0-9]{1,})-[^-]"
_ADMIN_ACK_GATE_RE = re.compile(ADMIN_ACK_GATE)


def _operators(operators: Sequence[Mapping[str, Any]]) -> list[Reason]:
    held = [
        (str(o["name"]), o["upgradeable"])
        for o in operators
        if (o.get("upgradeable") or {}).get("status") == "False"
    ]
    if not held:
        return []
    if len(held) == 1:
        name, c = held[0]
        return [
            (
                str(c.get("reason") or ""),
                f"Cluster operator {name} {OPERATOR_TEXT}: {c.get('message') or ''}",
            )
        ]
    lines = "".join(
        f"\n* Cluster operator {name} {OPERATOR_TEXT}: {c.get('reason') or ''}: "
        f"{c.get('message') or ''}"
        for name, c in held
    )
    return [
        ("ClusterOperatorsNotUpgradeable", f"Multiple cluster operators {OPERATOR_TEXT}:{lines}")
    ]


def effective_minor(version: str) -> str:
    """status_history.go getEffectiveMinor: the second dot-separated field, or ""."""
    parts = version.split(".")
    return parts[1] if len(parts) >= 2 else ""


def _gate(name: str, value: str, version: str, acks: Mapping[str, str]) -> Reason | None:
    """upgradeable.go checkAdminGate for one admin-gates entry."""
    match = _ADMIN_ACK_GATE_RE.match(name)
    if match is None:
        return (
            "AdminAckConfigMapGateNameError",
            f"{ADMIN_GATES} configmap gate name {name} has invalid format; must comply with "
            f"{go_quote(ADMIN_ACK_GATE)}",
        )
    # Only the minor is compared, as the controller does: ack-5.14-x applies to 4.14.z.
    if effective_minor(match.group(0).split("-")[1]) != effective_minor(version):
        return None
    if not value:
        return (
            "AdminAckConfigMapGateValueError",
            f"{ADMIN_GATES} configmap gate {name} must contain a non-empty value.",
        )
    if acks.get(name) != "true":
        return ("AdminAckRequired", value)
    return None


def _admin_acks(
    version: str, gates: Mapping[str, str] | None, acks: Mapping[str, str] | None
) -> list[Reason]:
    """upgradeable.go clusterAdminAcksCompletedUpgradeable: one reason for all gates.

    `version` is the cluster's current version (the newest completed one); before any
    history exists there is nothing to acknowledge. A missing ConfigMap is None.
    """
    if not version:
        return []
    if gates is None:
        return [("UnableToAccessAdminGatesConfigMap", f"{ADMIN_GATES} configmap not found.")]
    if acks is None:
        return [("UnableToAccessAdminAcksConfigMap", f"{ADMIN_ACKS} configmap not found.")]
    by_reason: dict[str, list[str]] = {}
    for name, value in gates.items():
        if found := _gate(str(name), str(value or ""), version, acks):
            by_reason.setdefault(found[0], []).append(found[1])
    messages = [" ".join(sorted(texts)) for texts in by_reason.values()]
    if len(by_reason) == 1:
        return [(next(iter(by_reason)), messages[0])]
    if by_reason:
        return [("MultipleReasons", " ".join(sorted(messages)))]
    return []


def deletes_text(deletes: Iterable[tuple[str, str, str]]) -> str:
    """lib/resourcedelete Resource.String for each (kind, namespace, name), comma-joined."""
    return ",".join(
        sorted(f'{kind} "{f"{ns}/{name}" if ns else name}"' for kind, ns, name in deletes)
    )


def _deletes(deletes: Sequence[tuple[str, str, str]]) -> list[Reason]:
    if not deletes:
        return []
    return [
        (
            "ResourceDeletesInProgress",
            "Cluster minor or major version upgrades are not allowed while resource deletions "
            f"are in progress; resources={deletes_text(deletes)}",
        )
    ]


def checks(
    *,
    operators: Sequence[Mapping[str, Any]] = (),
    overrides: bool = False,
    progressing: bool = False,
    version: str = "",
    admin_gates: Mapping[str, str] | None = None,
    admin_acks: Mapping[str, str] | None = None,
    deletes: Sequence[tuple[str, str, str]] = (),
) -> list[Found]:
    """What holds the cluster back, one entry per failing check in the controller's order
    (defaultUpgradeableChecks).

    The admin-ack check runs only when one of its ConfigMaps exists: a simulated cluster
    need not carry the payload's admin-gates and admin-acks, where the controller would
    report the missing ConfigMap.
    """
    found: list[Found] = []
    if overrides:
        found.append(Found(OVERRIDES, "ClusterVersionOverridesSet", OVERRIDES_MESSAGE))
    if admin_gates is not None or admin_acks is not None:
        found += [
            Found(ADMIN_ACK_REQUIRED, *r) for r in _admin_acks(version, admin_gates, admin_acks)
        ]
    found += [Found(CLUSTER_OPERATORS, *r) for r in _operators(operators)]
    found += [Found(DELETES_IN_PROGRESS, *r) for r in _deletes(deletes)]
    if progressing:
        found.append(
            Found(
                UPGRADE_IN_PROGRESS,
                "UpdateInProgress",
                "An update is already in progress and the details are in the Progressing condition",
                "True",
            )
        )
    return found


def reasons(
    *,
    operators: Sequence[Mapping[str, Any]] = (),
    overrides: bool = False,
    progressing: bool = False,
    version: str = "",
    admin_gates: Mapping[str, str] | None = None,
    admin_acks: Mapping[str, str] | None = None,
    deletes: Sequence[tuple[str, str, str]] = (),
) -> list[Reason]:
    """`checks` as (reason, message) pairs, for callers that need no condition types."""
    found = checks(
        operators=operators,
        overrides=overrides,
        progressing=progressing,
        version=version,
        admin_gates=admin_gates,
        admin_acks=admin_acks,
        deletes=deletes,
    )
    return [(f.reason, f.message) for f in found]


def condition(found: Sequence[Reason]) -> dict[str, str] | None:
    """Upgradeable=False for what the checks found, or None (no condition at all)."""
    if not found:
        return None
    if len(found) == 1:
        reason, message = found[0]
        return {"type": "Upgradeable", "status": "False", "reason": reason, "message": message}
    names = ",".join(reason for reason, _ in found)
    lines = "".join(f"\n* {message}" for _, message in found)
    return {
        "type": "Upgradeable",
        "status": "False",
        "reason": "MultipleReasons",
        "message": f"Cluster {OPERATOR_TEXT} for multiple reasons: {names}{lines}",
    }


def conditions(found: Sequence[Found]) -> list[dict[str, str]]:
    """upgradeable.go setUpgradeableConditions: the Upgradeable* conditions, sorted by type.

    None failing: none at all. One: only Upgradeable=False, with that check's reason and
    message (its own condition is not kept). Two or more: every failing check's condition
    and Upgradeable=False MultipleReasons.
    """
    up = condition([(f.reason, f.message) for f in found])
    if up is None:
        return []
    out = [up]
    if len(found) > 1:
        out += [
            {"type": f.type, "status": f.status, "reason": f.reason, "message": f.message}
            for f in found
        ]
    return sorted(out, key=lambda c: c["type"])


def apply(status_conditions: list[dict[str, Any]], found: Sequence[Found], now: str) -> None:
    """upgradeable.go NeedsUpdate: write the checks' conditions into a ClusterVersion's.

    Each is set in type order (a new one is appended; lastTransitionTime changes only
    with the status), and every condition whose type starts with "Upgradeable" that the
    checks no longer give is removed, whoever wrote it.
    """
    wanted = conditions(found)
    for c in wanted:
        set_condition(status_conditions, c, now)
    keep = {c["type"] for c in wanted}
    status_conditions[:] = [
        c
        for c in status_conditions
        if not str(c.get("type", "")).startswith(UPGRADEABLE) or c.get("type") in keep
    ]


def risk_condition(risks: Sequence[Reason]) -> dict[str, str] | None:
    """Upgradeable=False for applying risks (name, message), or None (removed)."""
    if not risks:
        return None
    if len(risks) == 1:
        name, message = risks[0]
        reason = name if REASON_RE.match(name) else "RiskNameNotCompatibleWithReasonProperty"
        return {"type": "Upgradeable", "status": "False", "reason": reason, "message": message}
    lines = "".join(f"\n* {message}" for _, message in risks)
    return {
        "type": "Upgradeable",
        "status": "False",
        "reason": "MultipleReasons",
        "message": f"Cluster {OPERATOR_TEXT} for multiple reasons:{lines}",
    }
