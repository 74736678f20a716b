"""A staged rollout carried out on a fleet's simulated clusters (SPEC X3, X5, X9).

The fleet rehearsal (sim/fleet/rehearsal.py) runs the plan's steps; the rollout's
conductor (plan/rollout.py) decides when each may start, as the rehearsal's pacer. Its
state (stages, approvals, gate readings, a halt) is kept in the fleet's store beside the
rehearsal's and committed with it, so a killed run goes on from its last commit exactly
as the rehearsal does. Approvals and halts from another process while a run holds the
fleet arrive as request files (`requests/` in the fleet's directory), taken at the run's
next commit; with no run, they are applied under the fleet's lock at once.

Gates read each cluster's metrics snapshot (its profile's `metrics`, or
`simulation.clusters.NAME.metrics` in the fleet file) with the embedded PromQL engine at
the virtual clock's time; a query with no samples counts as passing, as an alert rule
without data does not fire.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from pathlib import Path
from typing import Any, Protocol

from kupgrade.errors import InputError
from kupgrade.plan.rollout import RUNNING, Conductor, Facts, Task
from kupgrade.plan.rollout_doc import Gate, Rollout, read_rollout
from kupgrade.risks.promql.engine import evaluate_text
from kupgrade.risks.promql.guards import QueryLimits
from kupgrade.risks.promql.snapshot import Snapshot
from kupgrade.risks.promql.snapshot_file import load_snapshot
from kupgrade.sim.fleet.forecast import step_seconds
from kupgrade.sim.fleet.rehearsal import REHEARSAL, Rehearsal
from kupgrade.sim.homes import twin_figure
from kupgrade.versions.times import rfc3339

ROLLOUT = "rollout"
LIMIT = 400 * 86400.0  # simulated seconds a rollout may take before it stops
REQUESTS = "requests"
_MINOR = re.compile(r"v?(\d+)\.(\d+)")


def minor_of(version: str) -> tuple[int, int] | None:
    found = _MINOR.match(version)
    return (int(found.group(1)), int(found.group(2))) if found else None


def facts_of(rehearsal: Rehearsal) -> list[Facts]:
    """Each member's name, role and labels (from the fleet file's `labels`)."""
    clusters = (rehearsal.info.get("document") or {}).get("clusters") or {}
    out = []
    for name in rehearsal.names:
        body = clusters.get(name)
        labels = body.get("labels") if isinstance(body, dict) else None
        role = rehearsal.part.role(name)[0]
        out.append(Facts(name, role, {str(k): str(v) for k, v in (labels or {}).items()}))
    return out


def forecast(rehearsal: Rehearsal, rollout: Rollout, step: dict[str, Any]) -> tuple[float, str]:
    """A step's forecast seconds and where it comes from."""
    cluster = step["cluster"]
    stated = stated_forecast(rollout, cluster, None)
    if stated is not None:
        return stated
    spec = rehearsal.members[cluster].spec
    seconds = step_seconds(spec, step["kind"], step.get("pool"), step.get("leavePools") or [])
    return seconds, "profile" + no_twin(rollout, cluster)


def no_twin(rollout: Rollout, cluster: str) -> str:
    """Why a twin the rollout names gave no forecast, said with the source used instead."""
    twin = rollout.twins.get(cluster)
    return f" (twin {twin} has no measured update)" if twin else ""


def stated_forecast(rollout: Rollout, cluster: str, twin: str | None) -> tuple[float, str] | None:
    """A forecast the rollout gives or points to: the cluster's own line, its twin's
    measured update length (SPEC X7; `twin` names one when the rollout does not), then
    the rollout's default."""
    if cluster in rollout.durations:
        return rollout.durations[cluster], "stated"
    named = rollout.twins.get(cluster, twin)
    measured = twin_figure(named, "cluster update") if named else None
    if measured is not None:
        return measured[1], f"twin {named}"
    if rollout.default_duration is not None:
        return rollout.default_duration, "stated"
    return None


def task_of(step_id: str, record: dict[str, Any], seconds: float) -> Task:
    """A step's record (simulated or live) as the conductor sees it."""
    return Task(
        step_id,
        record["object"],
        record["cluster"],
        record["from"],
        record["to"],
        tuple(record.get("after") or ()),
        minor_of(record["from"]) != minor_of(record["to"]),
        seconds,
    )


def tasks_of(rehearsal: Rehearsal, rollout: Rollout, records: dict[str, Any]) -> list[Task]:
    """The plan's steps, each with its forecast."""
    return [
        task_of(step_id, record, forecast(rehearsal, rollout, record)[0])
        for step_id, record in records.items()
    ]


class Gauges:
    """Gate values from each member's metrics snapshot, each snapshot read once."""

    def __init__(self, rehearsal: Rehearsal) -> None:
        self.rehearsal = rehearsal
        self.snapshots: dict[str, Snapshot | None] = {}
        self.limits = QueryLimits.from_env()

    def _snapshot(self, cluster: str) -> Snapshot | None:
        if cluster not in self.snapshots:
            path = self.rehearsal.members[cluster].spec.metrics
            self.snapshots[cluster] = load_snapshot(Path(path)) if path else None
        return self.snapshots[cluster]

    def __call__(self, gate: Gate, cluster: str, at: float) -> float | None:
        snapshot = self._snapshot(cluster)
        if snapshot is None:
            return None
        answer = evaluate_text(gate.promql, snapshot, int(at * 1000), self.limits)
        return largest(answer)


def largest(answer: dict[str, Any]) -> float | None:
    """The largest value of an instant query's answer (None: no samples or an error)."""
    kind, result = answer.get("resultType"), answer.get("result")
    if kind == "scalar" and isinstance(result, list):
        return float(result[1])
    if kind == "vector" and isinstance(result, list) and result:
        return max(float(s["value"][1]) for s in result)
    return None


class RolloutPacer:
    """The conductor as the rehearsal's pacer; see the module."""

    limit = LIMIT

    def __init__(self, rehearsal: Rehearsal, rollout: Rollout, *, assume_approvals: bool) -> None:
        self.rehearsal = rehearsal
        self.rollout = rollout
        self.assume = assume_approvals
        stored = rehearsal.fleet.meta(ROLLOUT) or {}
        self.conductor = Conductor(
            rollout,
            facts_of(rehearsal),
            tasks_of(rehearsal, rollout, rehearsal.steps),
            stored.get("conductor"),
        )
        self.gauges = Gauges(rehearsal)
        self._busy: tuple[list[str] | None, dict[int, list[str]]] = (None, {})
        self._statuses: tuple[str, ...] = ()
        self._windows = math.inf  # the earliest window a step skipped by `consider` waits for

    def hold(self, step_id: str, running: list[str], at: float) -> tuple[str, float | None] | None:
        if self._busy[0] is not running:  # one schedule pass asks with one list
            self._busy = (running, self.conductor.busy(running))
        found = self.conductor.hold(self.conductor.tasks[step_id], self._busy[1], at)
        return None if found is None else (found.why, found.until)

    def consider(
        self, order: list[str], records: dict[str, Any], running: list[str], at: float
    ) -> list[str]:
        """Only one stage runs at a time: its steps that could start (not those of
        clusters waiting for a slot of a full stage, nor those waiting for a window that
        has not come), and every step of a stage whose status changed, so its wait is
        said again, or that has not been ready yet, so its readiness is seen when it
        comes."""
        conductor = self.conductor
        statuses = tuple(r["status"] for r in conductor.state["stages"])
        changed, self._statuses = statuses != self._statuses, statuses
        busy = conductor.busy(running)
        self._windows = math.inf
        out = []
        for step_id in order:
            task = conductor.tasks[step_id]
            index = conductor.stage_of.get(task.cluster)
            if index is None or statuses[index] != RUNNING:
                if changed or "readyAt" not in records[step_id]:
                    out.append(step_id)
                continue
            stage = conductor.rollout.stages[index]
            clusters = busy.get(index, [])
            if task.cluster not in clusters and len(clusters) >= stage.max_concurrency:
                continue
            fit = conductor.cached_fit(task, at)
            if fit is not None and fit > at:
                self._windows = min(self._windows, fit)
                continue
            out.append(step_id)
        return out

    def next_window(self) -> float | None:
        """When the window the next held step waits for opens (None: none waits)."""
        return None if math.isinf(self._windows) else self._windows

    def wake(self) -> float | None:
        times = [t for t in (self.conductor.wake(), self._windows) if t is not None]
        found = min(times, default=math.inf)
        return None if math.isinf(found) else found

    def advance(self, at: float) -> str | None:
        done = {i for i, r in self.rehearsal.steps.items() if "finishedAt" in r}
        self.conductor.advance(done, at, self.gauges, self.assume)
        self.save()
        halt = self.conductor.halted
        if halt is None:
            return None
        state = self.rehearsal.state or {}
        state["stop"] = {"kind": halt["kind"], **halt}
        self.rehearsal.fleet.set_meta(REHEARSAL, state)
        return "halted"

    def waiting(self) -> str | None:
        stage = self.conductor.waiting_for_approval()
        if stage is None:
            return None
        fleet = self.rehearsal.fleet.path.parent.name
        return (
            f"stage {stage} waits for approval: `kupgrade fleet rollout approve {stage} "
            f"--fleet {fleet}`"
        )

    def save(self) -> None:
        """The conductor's state and its new events, into the fleet's store."""
        for at, obj, reason, message in self.conductor.events:
            if reason == "RolloutHalted":
                self.rehearsal.fleet.event(at, "Warning", obj, reason, message)
            else:
                self.rehearsal.fleet.event(at, "Normal", obj, reason, message)
        self.conductor.events.clear()
        stored = dict(self.rehearsal.fleet.meta(ROLLOUT) or {})
        stored["conductor"] = self.conductor.state
        self.rehearsal.fleet.set_meta(ROLLOUT, stored)


def stored_rollout(rehearsal: Rehearsal) -> Rollout | None:
    """The rollout the fleet's store holds, as it began."""
    stored = rehearsal.fleet.meta(ROLLOUT)
    if not stored:
        return None
    return read_rollout(stored["document"], str(stored.get("file", "the fleet's store")))


# --- requests from other processes ----------------------------------------------------------


def drop_request(root: Path, kind: str, **details: Any) -> Path:
    """A request file for the run holding the fleet, written whole or not at all."""
    folder = root / REQUESTS
    folder.mkdir(exist_ok=True)
    name = f"{time.time_ns()}-{os.getpid()}-{kind}.json"
    tmp = folder / f".{name}"
    tmp.write_text(json.dumps({"kind": kind, **details}))
    os.replace(tmp, folder / name)
    return folder / name


def pending_requests(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    folder = root / REQUESTS
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("[0-9]*.json")):
        try:
            body = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(body, dict):
            out.append((path, body))
    return out


class Conducted(Protocol):
    """A rollout under way: its document and its conductor (simulated or live)."""

    rollout: Rollout
    conductor: Conductor

    def save(self) -> None:
        """The conductor's state and its new events, into the store."""


def apply_request(pacer: Conducted, body: dict[str, Any], at: float) -> str:
    """Apply one request to the conductor; what it did, in a few words."""
    by = str(body.get("by") or "someone")
    conductor = pacer.conductor
    if body.get("kind") == "approve":
        stage = str(body.get("stage"))
        if stage not in [s.name for s in pacer.rollout.stages]:
            raise InputError(
                f"the rollout has no stage {stage!r}",
                hint=f"its stages are {', '.join(s.name for s in pacer.rollout.stages)}",
            )
        when = rfc3339(float(body["at"])) if isinstance(body.get("at"), int | float) else ""
        fresh = conductor.approve(stage, by, at, when)
        return f"approved {stage}" if fresh else f"{stage} was approved before"
    if body.get("kind") == "halt":
        conductor.halt(by, at)
        return "halted"
    conductor.resume(by, at)
    return "resumed"
