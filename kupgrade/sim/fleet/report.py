"""What a fleet rehearsal reports (SPEC X5): every step with when it was ready, when it
started and what it waited for; per cluster its start, finish and the downtime of its
workloads; the critical path (the chain of steps that decided when the fleet finished);
and what stopped the rehearsal, if anything did.

Times are seconds of simulated time since the rehearsal started.
"""

from __future__ import annotations

from typing import Any

from kupgrade.plan.steps import step_order
from kupgrade.sim.fleet.downtime import measured
from kupgrade.sim.fleet.rehearsal import Rehearsal
from kupgrade.versions.times import rfc3339


def _rel(value: float | None, start: float) -> float | None:
    return None if value is None else round(value - start, 3)


def step_state(record: dict[str, Any]) -> str:
    if "finishedAt" in record:
        return "done"
    if "startedAt" in record:
        return "blocked" if record.get("blocked") else "running"
    if "readyAt" in record:
        return "waiting"
    return "pending"


def critical_path(records: dict[str, dict[str, Any]]) -> list[str]:
    """From the step that finished last back to the start: each step's predecessor is
    what it started after (the last of its `after` steps, or the step whose end freed
    its cluster or slot)."""
    done = [i for i, r in records.items() if "finishedAt" in r]
    if not done:
        return []
    path = [max(done, key=lambda i: (records[i]["finishedAt"], step_order(i)))]
    while True:
        record = records[path[-1]]
        waited = record.get("freedBy") if record.get("freedBy") else record.get("waitedFor")
        if not waited or waited in path:
            return path[::-1]
        path.append(waited)


def versions(rehearsal: Rehearsal, name: str) -> str:
    return rehearsal.part.versions(name)


def step_rows(rehearsal: Rehearsal, start: float) -> list[dict[str, Any]]:
    """Every step of the plan in its order, with its state and times since `start`."""
    records = rehearsal.steps
    steps = []
    for step_id in (rehearsal.state or {}).get("order", []):
        r = records[step_id]
        steps.append(
            {
                "id": step_id,
                "object": r["object"],
                "cluster": r["cluster"],
                "from": r["from"],
                "to": r["to"],
                "after": r["after"],
                "state": step_state(r),
                "readyAt": _rel(r.get("readyAt"), start),
                "startedAt": _rel(r.get("startedAt"), start),
                "finishedAt": _rel(r.get("finishedAt"), start),
                "waitedFor": r.get("waitedFor"),
                "freedBy": r.get("freedBy"),
                "heldBy": r.get("heldBy"),
                "blocked": r.get("blocked"),
                **({"leavePools": r["leavePools"]} if r.get("leavePools") else {}),
            }
        )
    return steps


def fleet_report(rehearsal: Rehearsal, name: str, wall: float | None = None) -> dict[str, Any]:
    state = rehearsal.state or {}
    records = rehearsal.steps
    start = float(state.get("startedAt", rehearsal.now))
    now = rehearsal.now
    steps = step_rows(rehearsal, start)
    clusters = []
    for member in rehearsal.names:
        own = [s for s in steps if s["cluster"] == member]
        store = rehearsal.members[member].store
        clusters.append(
            {
                "name": member,
                "versions": versions(rehearsal, member),
                "steps": [s["id"] for s in own],
                **_span(own),
                "downtime": measured(store, now),
            }
        )
    path = critical_path(records)
    out: dict[str, Any] = {
        "fleet": name,
        "platform": rehearsal.platform,
        "outcome": state.get("status", "not started"),
        "target": state.get("target"),
        "maxParallel": state.get("maxParallel"),
        "startedAt": rfc3339(start) if state else None,
        "simulatedSeconds": round(now - start, 3) if state else 0.0,
        "steps": steps,
        "clusters": clusters,
        "criticalPath": [_path_row(records[i], i, start) for i in path],
        "statesRecorded": sum(
            1 for e in rehearsal.fleet.events() if e["reason"] == "VersionChanged"
        ),
    }
    if state.get("stop"):
        stop = dict(state["stop"])
        stop["at"] = _rel(stop.get("at"), start)
        out["stop"] = stop
    if wall is not None:
        out["wallSeconds"] = round(wall, 3)
    return out


def _span(own: list[dict[str, Any]]) -> dict[str, float | None]:
    """A cluster's start (its first step's) and finish (its last step's, once all are done)."""
    began = [s["startedAt"] for s in own if s["startedAt"] is not None]
    ended = [s["finishedAt"] for s in own if s["finishedAt"] is not None]
    return {
        "start": min(began) if began else None,
        "finish": max(ended) if len(ended) == len(own) and own else None,
    }


def _path_row(record: dict[str, Any], step_id: str, start: float) -> dict[str, Any]:
    return {
        "id": step_id,
        "object": record["object"],
        "startedAt": _rel(record.get("startedAt"), start),
        "finishedAt": _rel(record.get("finishedAt"), start),
    }


def fleet_view(rehearsal: Rehearsal, name: str) -> dict[str, Any]:
    """What the web console's fleet view shows while a rehearsal runs: every cluster by
    role with its versions and the steps it is running, and the plan's steps with their
    state (no downtime: that is the report's, measured once at the end)."""
    state = rehearsal.state or {}
    start = float(state.get("startedAt", rehearsal.now))
    steps = step_rows(rehearsal, start)
    clusters = []
    for member in rehearsal.names:
        own = [s for s in steps if s["cluster"] == member]
        role, managed = rehearsal.part.role(member)
        clusters.append(
            {
                "name": member,
                "role": role,
                "managedBy": managed,
                "versions": versions(rehearsal, member),
                "running": [s["id"] for s in own if s["state"] in ("running", "blocked")],
                **_span(own),
            }
        )
    out: dict[str, Any] = {
        "kind": "fleet",
        "fleet": name,
        "platform": rehearsal.platform,
        "outcome": state.get("status", "not started"),
        "target": state.get("target"),
        "simulatedSeconds": round(rehearsal.now - start, 3) if state else 0.0,
        "steps": steps,
        "clusters": clusters,
    }
    if state.get("stop"):
        out["stop"] = {**state["stop"], "at": _rel(state["stop"].get("at"), start)}
    return out
