"""The ClusterVersion Upgradeable condition (SPEC C6): what holds back a minor update.

Each check names one reason — overrides that take resources away from the controller,
an update already running, ClusterOperators that say Upgradeable=False, admin
acknowledgements not yet given. The condition is absent when nothing holds the cluster
back, so that an absent condition reads as "upgradeable".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kupgrade.controllers.version.preconditions import OVERRIDES_MESSAGE
from kupgrade.risks.recommend import REASON_RE
from kupgrade.versions import SemVer

Reason = tuple[str, str]  # (reason, message)

OPERATOR_TEXT = "should not be upgraded between minor or major versions"


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
                str(c.get("reason", "")),
                f"Cluster operator {name} {OPERATOR_TEXT}: {c.get('message', '')}",
            )
        ]
    lines = "".join(
        f"\n* Cluster operator {name} {OPERATOR_TEXT}: {c.get('reason', '')}: {c.get('message', '')}"
        for name, c in held
    )
    return [
        ("ClusterOperatorsNotUpgradeable", f"Multiple cluster operators {OPERATOR_TEXT}:{lines}")
    ]


def _admin_acks(version: str, gates: Mapping[str, str], acks: Mapping[str, str]) -> list[Reason]:
    parsed = SemVer.try_parse(version)
    if parsed is None:
        return []
    prefix = f"ack-{parsed.major}.{parsed.minor}-"
    return [
        ("AdminAckRequired", str(message))
        for key, message in sorted(gates.items())
        if key.startswith(prefix) and acks.get(key) != "true"
    ]


def reasons(
    *,
    operators: Sequence[Mapping[str, Any]] = (),
    overrides: bool = False,
    progressing: bool = False,
    version: str = "",
    admin_gates: Mapping[str, str] | None = None,
    admin_acks: Mapping[str, str] | None = None,
) -> list[Reason]:
    found: list[Reason] = []
    if overrides:
        found.append(("ClusterVersionOverridesSet", OVERRIDES_MESSAGE))
    if progressing:
        found.append(
            (
                "UpdateInProgress",
                "An update is already in progress and the details are in the Progressing condition",
            )
        )
    found += _operators(operators)
    found += _admin_acks(version, admin_gates or {}, admin_acks or {})
    return found


def condition(found: Sequence[Reason]) -> dict[str, str] | None:
    """Upgradeable=False for what was found, or None (no condition at all)."""
    if not found:
        return None
    if len(found) == 1:
        reason, message = found[0]
        if not REASON_RE.match(reason):
            reason = "RiskNameNotCompatibleWithReasonProperty"
        return {"type": "Upgradeable", "status": "False", "reason": reason, "message": message}
    lines = "".join(f"\n* {message}" for _, message in found)
    return {
        "type": "Upgradeable",
        "status": "False",
        "reason": "MultipleReasons",
        "message": f"Cluster {OPERATOR_TEXT} for multiple reasons:{lines}",
    }
