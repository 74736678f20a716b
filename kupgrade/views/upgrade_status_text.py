"""`oc adm upgrade status` as oc prints it (openshift/oc pkg/cli/admin/upgrade/status:
status.go's sections, its tabwriter widths, health.go's detailed insights) and as JSON,
from the assessment views/upgrade_status.py makes."""

from __future__ import annotations

from typing import Any

from kupgrade.outputs.tabwriter import table
from kupgrade.versions.times import rfc3339
from kupgrade.views.status_health import INFO, LEVELS, elapsed, short_duration
from kupgrade.views.upgrade_status import (
    ControlPlane,
    Pool,
    Status,
    condition_stamp,
    vague_under,
)


def tabulate(rows: list[list[str]], padding: int = 3) -> list[str]:
    """oc's tabwriter (minwidth 0, padding 3): a multi-line cell ends the column blocks,
    and the rows after it are aligned afresh."""
    return table(rows, padding=padding)


def _control_plane_text(cp: ControlPlane, detailed: bool, now: float) -> list[str]:
    if cp.updated == cp.total:
        return [
            "= Control Plane =",
            f"Update to {cp.target} successfully completed at "
            f"{rfc3339(cp.completion_at)} (duration: {short_duration(cp.duration)})",
        ]
    lines = [
        "= Control Plane =",
        f"Assessment:      {cp.assessment}",
        f"Target Version:  {cp.version_text()}",
    ]
    if cp.updating:
        lines.append(f"Updating:        {', '.join(n for n, _ in cp.updating)}")
    lines.append(
        f"Completion:      {cp.completion:.0f}% ({cp.updated} operators updated, "
        f"{len(cp.updating)} updating, {cp.waiting} waiting)"
    )
    duration = f"Duration:        {short_duration(cp.duration)}"
    if cp.est_remaining:
        duration += f" (Est. Time Remaining: {vague_under(cp.est_remaining, cp.est_duration, cp.multi_arch)})"
    lines += [duration, f"Operator Health: {cp.health()}"]
    if detailed and cp.updating:
        lines += ["", "Updating Cluster Operators"]
        table = [["NAME", "SINCE", "REASON", "MESSAGE"]]
        for name, condition in cp.updating:
            reason = str(condition.get("reason") or "-")
            reason = reason if len(reason) <= 20 else reason[:17] + "..."
            message = str(condition.get("message", "")).split("\n")
            table.append(
                [name, short_duration(elapsed(now, condition_stamp(condition))), reason, message[0]]
            )
            table += [["", "", "", line] for line in message[1:]]
        lines += tabulate(table)
    return lines


def _nodes_text(pool: Pool, detailed: bool) -> list[str]:
    if not pool.rows:
        return []
    if pool.name == "master":
        if pool.completion == 100:
            return ["", f"All control plane nodes successfully updated to {pool.rows[0].version}"]
        lines = ["", "Control Plane Nodes"]
    else:
        lines = ["", f"Worker Pool Nodes: {pool.name}"]
    table = [["NAME", "ASSESSMENT", "PHASE", "VERSION", "EST", "MESSAGE"]]
    omitted = {
        "total": 0,
        "completed": 0,
        "available": 0,
        "progressing": 0,
        "outdated": 0,
        "draining": 0,
        "excluded": 0,
    }
    for i, row in enumerate(pool.rows):
        if not detailed and i >= 10 and not row.degraded and (not row.unavailable or row.updating):
            omitted["total"] += 1
            omitted["completed" if row.updated else "outdated"] += 1
            omitted["available"] += not row.unavailable
            omitted["draining"] += row.phase == "Draining"
            omitted["excluded"] += row.phase == "Paused"
            omitted["progressing"] += row.assessment == "Progressing"
            continue
        table.append(
            [row.name, row.assessment, row.phase, row.version or "?", row.estimate, row.message]
        )
    lines += tabulate(table)
    if omitted["total"]:
        o = omitted
        lines += [
            "...",
            f"Omitted additional {o['total']} Total, {o['completed']} Completed, "
            f"{o['available']} Available, {o['progressing']} Progressing, {o['outdated']} "
            f"Outdated, {o['draining']} Draining, {o['excluded']} Excluded, and 0 Degraded nodes.",
            "Pass along --details=nodes to see all information.",
        ]
    return lines


def _health_text(status: Status, detailed: bool) -> list[str]:
    lines = ["= Update Health ="]
    items = status.insights
    if detailed and not status.healthy:
        pad = len("Description: ")
        for i, item in enumerate(items):
            lines += [f"Message: {item.summary}"] + [
                f"  {label:<{pad}}{value}"
                for label, value in (
                    ("Since:", item.since(status.now)),
                    ("Level:", LEVELS[item.level]),
                    ("Impact:", item.impact),
                    ("Reference:", item.reference),
                )
            ]
            if item.resources:
                # health.go detailedOutput lists a kind once per resource of that kind.
                kinds: dict[str, list[str]] = {}
                for kind, name in item.resources:
                    kinds.setdefault(f"{kind}: ", []).append(name)
                width = max(len(k) for k in kinds)
                lines.append("  Resources:")
                lines += [
                    f"    {k:<{width}}{', '.join(sorted(kinds[k]))}"
                    for k in sorted(f"{kind}: " for kind, _ in item.resources)
                ]
            description = item.description.replace("\n", "\n" + " " * (pad + 2) + ", ")
            lines.append(f"  {'Description:':<{pad}}{description}")
            if i + 1 < len(items):
                lines.append("")
        return lines
    lines += tabulate(
        [["SINCE", "LEVEL", "IMPACT", "MESSAGE"]]
        + [[i.since(status.now), LEVELS[i.level], i.impact, i.summary] for i in items]
    )
    if len(items) > 1 or items[0].level != INFO:
        lines += [
            "",
            "Run with --details=health for additional description and links to related "
            "online documentation",
        ]
    return lines


def render(status: Status | None, details: set[str]) -> str:
    """The text of `oc adm upgrade status [--details=…]`."""
    if status is None:
        return "The cluster is not updating.\n"
    lines = _control_plane_text(status.control_plane, "operators" in details, status.now)
    if status.masters is not None:
        lines += _nodes_text(status.masters, "nodes" in details)
    workers = [p for p in status.workers if p.rows]
    if workers:
        lines += ["", "= Worker Upgrade =", ""]
        table = [["WORKER POOL", "ASSESSMENT", "COMPLETION", "STATUS"]]
        for p in status.workers:
            if not p.rows:
                table.append([p.name, "Empty", "", f"{p.total} Total"])
            else:
                table.append(
                    [
                        p.name,
                        p.assessment,
                        f"{p.completion:.0f}% ({p.total - p.outdated}/{p.total})",
                        p.summary(),
                    ]
                )
        lines += tabulate(table)
        for p in status.workers:
            lines += _nodes_text(p, "nodes" in details)
    lines += ["", *_health_text(status, "health" in details)]
    return "\n".join(lines) + "\n"


def as_data(status: Status | None) -> dict[str, Any]:
    """The same assessment for -o json|yaml."""
    if status is None:
        return {"updating": False}
    cp = status.control_plane
    return {
        "updating": True,
        "controlPlane": {
            "assessment": cp.assessment,
            "targetVersion": cp.version_text(),
            "completion": round(cp.completion, 1),
            "operatorsUpdated": cp.updated,
            "operatorsUpdating": [n for n, _ in cp.updating],
            "operatorsWaiting": cp.waiting,
            "operatorsTotal": cp.total,
            "duration": short_duration(cp.duration),
            "estimatedTimeRemaining": short_duration(cp.est_remaining)
            if cp.est_remaining
            else None,
            "operatorHealth": cp.health(),
            "nodes": status.masters.as_dict() if status.masters is not None else None,
        },
        "workerPools": [p.as_dict() for p in status.workers],
        "health": [i.as_dict(status.now) for i in status.insights],
    }
