"""When a ClusterOperator counts as done (SPEC D4, C10).

The runlevel moves on only when each of its operators is Available=True,
Degraded=False and reports every version its manifest declares. What is missing decides
the error and its effect: not available fails at once, degraded is tolerated for 40
minutes (during install it is only reported), versions not yet reached is plain waiting.
Progressing is deliberately not part of the check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kupgrade.controllers.version.errors import (
    FAIL,
    FAIL_AFTER_INTERVAL,
    NONE,
    REPORT,
    UpdateError,
)
from kupgrade.controllers.version.status import INITIALIZING


def _undone(
    expected: Sequence[Mapping[str, str]], actual: Sequence[Mapping[str, str]]
) -> list[str]:
    reported: dict[str, str] = {}
    for entry in actual:
        reported.setdefault(entry.get("name", ""), entry.get("version", ""))
    undone = []
    for want in expected:
        current = reported.get(want.get("name", ""), "")
        if current != want.get("version", ""):
            if current:
                undone.append(f"{want['name']} from {current} to {want['version']}")
            else:
                undone.append(f"{want['name']} to {want['version']}")
    return sorted(undone)


# reason -> (plural reason, what the operator "is" / "does", singular and plural).
_WORDING = {
    "ClusterOperatorNoVersions": (
        "ClusterOperatorsNoVersions",
        "does not declare expected versions",
        "do not declare expected versions",
    ),
    "ClusterOperatorNotAvailable": (
        "ClusterOperatorsNotAvailable",
        "is not available",
        "are not available",
    ),
    "ClusterOperatorDegraded": ("ClusterOperatorsDegraded", "is degraded", "are degraded"),
    "ClusterOperatorUpdating": (
        "ClusterOperatorsUpdating",
        "is updating versions",
        "are updating versions",
    ),
}


def _error(
    reason: str, name: str, effect: str, detail: str = "", undone: Sequence[str] = ()
) -> UpdateError:
    """An operator error with the singular and plural wording the controller condenses by."""
    plural_reason, singular, plural = _WORDING[reason]
    return UpdateError(
        reason=reason,
        message=f"Cluster operator {name} {singular}",
        effect=effect,
        name=name,
        plural_reason=plural_reason,
        plural_message_format=f"Cluster operators %s {plural}",
        detail=detail,
        clusteroperator=True,
        undone=tuple(undone),
    )


def check_operator_health(
    name: str,
    expected_versions: Sequence[Mapping[str, str]],
    actual: Mapping[str, Any] | None,
    mode: str,
) -> UpdateError | None:
    """None when the operator is done; otherwise the error the controller waits on."""
    if not expected_versions:
        return _error("ClusterOperatorNoVersions", name, FAIL)
    status = (actual or {}).get("status") or {}
    undone = _undone(expected_versions, status.get("versions") or [])
    available, progressing, degraded = False, True, True
    available_c: Mapping[str, Any] | None = None
    degraded_c: Mapping[str, Any] | None = None
    for condition in status.get("conditions") or []:
        kind, value = condition.get("type"), condition.get("status")
        if kind == "Available":
            available, available_c = value == "True", condition
        elif kind == "Progressing" and value == "False":
            progressing = False
        elif kind == "Degraded":
            degraded, degraded_c = value != "False", condition
    detail = (
        f"cluster operator {name}: available={str(available).lower()}, "
        f"progressing={str(progressing).lower()}, degraded={str(degraded).lower()}, "
        f"undone={', '.join(undone)}"
    )
    if not available:
        if available_c and available_c.get("message"):
            detail = (
                f"cluster operator {name} is Available={available_c.get('status')}: "
                f"{available_c.get('reason', '')}: {available_c['message']}"
            )
        return _error("ClusterOperatorNotAvailable", name, FAIL, detail)
    if degraded:
        if degraded_c and degraded_c.get("message"):
            detail = (
                f"cluster operator {name} is Degraded={degraded_c.get('status')}: "
                f"{degraded_c.get('reason', '')}, {degraded_c['message']}"
            )
        effect = REPORT if mode == INITIALIZING else FAIL_AFTER_INTERVAL
        return _error("ClusterOperatorDegraded", name, effect, detail)
    if undone and mode != INITIALIZING:
        detail = f"cluster operator {name} is available and not degraded but has not finished updating to target version"
        return _error("ClusterOperatorUpdating", name, NONE, detail, undone)
    return None
