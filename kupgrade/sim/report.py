"""The timeline every platform's rehearsal report holds: what took how long, and what
held things up, from the cluster's event log."""

from __future__ import annotations

from typing import Any


def timeline(events: list[dict[str, Any]], since: float) -> list[dict[str, Any]]:
    """What took how long, in the order it started: operators, nodes (with how long their
    drain took) and whatever held things up; what is still under way has no end."""
    rows: list[dict[str, Any]] = []
    started: dict[str, float] = {}
    drained: dict[str, str] = {}
    for e in events:
        if e["at"] < since:
            continue
        obj = e["object"]
        if e["reason"] in STARTS:
            started.setdefault(obj, e["at"])
        elif e["reason"] == "Drained":
            drained[obj] = e["message"]
        elif e["reason"] in ENDS and obj in started:
            row = {"object": obj, "from": started.pop(obj), "to": e["at"]}
            if obj in drained:
                row["note"] = drained.pop(obj)
            rows.append(row)
        elif e["kind"] == "Warning" or e["reason"] in HOLD_UPS:
            rows.append(
                {
                    "object": obj,
                    "from": e["at"],
                    "to": e["at"],
                    "note": f"{e['reason']}: {e['message']}",
                }
            )
    rows += [
        {"object": o, "from": at, "to": None, "note": "not finished"} for o, at in started.items()
    ]
    return sorted(rows, key=lambda r: r["from"])


# Installing/Succeeded: an OLM CSV's; StepStarted/StepDone: a Kubernetes plan step's.
STARTS = ("Progressing", "Drain", "StageStarted", "Installing", "StepStarted")
ENDS = ("VersionReached", "Done", "StageDone", "Succeeded", "StepDone")
HOLD_UPS = (
    "DrainThresholdExceeded",
    "DrainFailed",
    "EvictionBlocked",
    "Handoff",
    "Completed",
    "DrainTimeout",
    "DrainWaiting",
    "PoolStalled",
    "UpgradeBlocked",
    "Pivot",
    "PivotBack",
    "Failed",
    "InstallPlanCreated",
)
