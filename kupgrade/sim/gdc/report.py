"""What a distributed-cloud rehearsal reports (SPEC G7-G9, G11): how long each stage
took, the status fields in the order they were filled, each component's measured
downtime next to what the documentation's table expects, and which drains were slow and why."""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.gdc import cluster_columns, own_clusters
from kupgrade.plan.stages import EXPECTED_DOWNTIME
from kupgrade.sim.report import timeline

SLOW_DRAIN_MINUTES = 5.0  # a drain worth naming in the report


def _pairs(events: list[dict[str, Any]], start: str, end: str) -> list[dict[str, Any]]:
    """(object, from, to) of each start..end pair, in start order; open ones end None."""
    open_: dict[str, float] = {}
    rows: list[dict[str, Any]] = []
    for e in events:
        if e["reason"] == start:
            open_.setdefault(e["object"], e["at"])
        elif e["reason"] == end and e["object"] in open_:
            rows.append({"object": e["object"], "from": open_.pop(e["object"]), "to": e["at"]})
    rows += [{"object": o, "from": at, "to": None} for o, at in open_.items()]
    return sorted(rows, key=lambda r: (r["from"], r["object"]))


def downtime(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each component rolled out: measured minutes down vs the expectation (SPEC G7)."""
    down: dict[str, float] = {}
    for row in _pairs(events, "ComponentDown", "ComponentUp"):
        end = row["to"] if row["to"] is not None else events[-1]["at"]
        name = row["object"].removeprefix("component/")
        down[name] = down.get(name, 0.0) + (end - row["from"]) / 60
    rolled = {
        e["object"].removeprefix("component/")
        for e in events
        if e["object"].startswith("component/") and e["reason"] == "Progressing"
    }
    out = []
    for name in sorted(rolled):
        expected = EXPECTED_DOWNTIME.get(name)
        measured = round(down.get(name, 0.0), 2)
        bound = expected.bound_minutes if expected else None
        out.append(
            {
                "component": name,
                "measuredMinutes": measured,
                "expected": expected.words if expected else "not in the documented table",
                "when": expected.when if expected else "",
                "boundMinutes": bound,
                "within": None if bound is None else measured <= bound,
            }
        )
    return out


def drains(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Nodes whose drain took long or was held up, with what held it (SPEC G11)."""
    held: dict[str, list[str]] = {}
    timed_out: set[str] = set()
    for e in events:
        if e["reason"] in ("EvictionBlocked", "DrainWaiting") and e["message"] not in held.get(
            e["object"], []
        ):
            held.setdefault(e["object"], []).append(e["message"])
        elif e["reason"] == "DrainTimeout":
            timed_out.add(e["object"])
    out = []
    for row in _pairs(events, "Drain", "Drained"):
        node, end = row["object"], row["to"]
        minutes = None if end is None else round((end - row["from"]) / 60, 2)
        if minutes is not None and minutes < SLOW_DRAIN_MINUTES and node not in timed_out:
            continue
        why = [m for m in held.get(node, []) if "still terminating" not in m][-2:] or held.get(
            node, []
        )[-1:]
        if node in timed_out:
            why.append("went on after the 20-minute drain timeout")
        out.append({"node": node, "minutes": minutes, "why": why})
    return out


def gdc_report(
    api: Backend, log: list[dict[str, Any]], run: dict[str, Any], started: float
) -> dict[str, Any]:
    events = [e for e in log if e["at"] >= started]
    clusters = own_clusters(api.list("Cluster"))
    return {
        **run,
        "cluster": cluster_columns(clusters[0]) if clusters else {},
        "stages": [
            {"stage": r["object"].removeprefix("stage/"), "from": r["from"], "to": r["to"]}
            for r in _pairs(events, "StageStarted", "StageDone")
        ],
        "statusFields": [
            {
                "at": e["at"],
                "field": e["message"].split(":", 1)[0],
                "value": e["message"].split(": ", 1)[1],
            }
            for e in events
            if e["reason"] == "StatusField"
        ],
        "downtime": downtime(events) if events else [],
        "drains": drains(events),
        "timeline": timeline(log, started),
    }
