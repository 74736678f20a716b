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


def check_operator_health(
    name: str,
    expected_versions: Sequence[Mapping[str, str]],
    actual: Mapping[str, Any] | None,
    mode: str,
) -> UpdateError | None:
    """None when the operator is done; otherwise the error the controller waits on."""
    if not expected_versions:
        return UpdateError(
            reason="ClusterOperatorNoVersions",
            message=f"Cluster operator {name} does not declare expected versions",
            effect=FAIL,
            plural_reason="ClusterOperatorsNoVersions",
            plural_message_format="Cluster operators %s do not declare expected versions",
            name=name,
            clusteroperator=True,
        )
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
        return UpdateError(
            reason="ClusterOperatorNotAvailable",
            message=f"Cluster operator {name} is not available",
            effect=FAIL,
            plural_reason="ClusterOperatorsNotAvailable",
            plural_message_format="Cluster operators %s are not available",
            detail=detail,
            name=name,
            clusteroperator=True,
        )
    if degraded:
        if degraded_c and degraded_c.get("message"):
            detail = (
                f"cluster operator {name} is Degraded={degraded_c.get('status')}: "
                f"{degraded_c.get('reason', '')}, {degraded_c['message']}"
            )
        return UpdateError(
            reason="ClusterOperatorDegraded",
            message=f"Cluster operator {name} is degraded",
            effect=REPORT if mode == INITIALIZING else FAIL_AFTER_INTERVAL,
            plural_reason="ClusterOperatorsDegraded",
            plural_message_format="Cluster operators %s are degraded",
            detail=detail,
            name=name,
            clusteroperator=True,
        )
    if undone and mode != INITIALIZING:
        return UpdateError(
            reason="ClusterOperatorUpdating",
            message=f"Cluster operator {name} is updating versions",
            effect=NONE,
            plural_reason="ClusterOperatorsUpdating",
            plural_message_format="Cluster operators %s are updating versions",
            detail=f"cluster operator {name} is available and not degraded but has not finished updating to target version",
            undone=tuple(undone),
            name=name,
            clusteroperator=True,
        )
    return None
