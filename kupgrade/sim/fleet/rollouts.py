"""What `kupgrade fleet rollout` does with a fleet of simulated clusters (SPEC X9):
plan the rollout on forecasts, rehearse it on a copy of the fleet, start it on the fleet
itself, go on after a crash, an approval or a halt, and report it.

Every report has `outcome` (completed, halted, waiting, refused; running while a run is
under way), `startedAt` (RFC 3339) and `steps`, each with `cluster`, `stage`, `startedAt`
and `finishedAt` in seconds from the rollout's start, as `fleet rehearse` gives them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from kupgrade.errors import InputError
from kupgrade.plan.rollout import Conductor, Schedule, schedule
from kupgrade.plan.rollout_doc import Rollout
from kupgrade.plan.steps import BlockedError, Plan, Refusal
from kupgrade.plan.windows import Window
from kupgrade.sim.fleet.home import FLEET_DB
from kupgrade.sim.fleet.rehearsal import REHEARSAL, PlanRefusedError, Rehearsal, Settings
from kupgrade.sim.fleet.report import fleet_view, step_rows
from kupgrade.sim.fleet.rollout import (
    ROLLOUT,
    Conducted,
    RolloutPacer,
    apply_request,
    facts_of,
    forecast,
    pending_requests,
    tasks_of,
)
from kupgrade.sim.homes import copy_cluster, spec_in
from kupgrade.sim.store import Store
from kupgrade.versions.times import rfc3339

Members = dict[str, tuple[Path, Store, Any]]


class RolloutRefusedError(PlanRefusedError):
    """The rollout cannot keep its stages, windows and every rule: nothing started."""


def settings_of(rehearsal: Rehearsal, rollout: Rollout, to: str | None) -> Settings:
    info = rehearsal.info
    target = to or rollout.target_for(rehearsal.platform) or info.get("target")
    if not target:
        raise InputError(
            "the rollout names no target version",
            field="spec.target",
            hint="set spec.target in the rollout (or `target:` in the fleet file), or pass --to",
        )
    available = rollout.available if rollout.available is not None else info.get("available")
    policy = rehearsal.part.policy(rollout.policy or info.get("policy"))
    return Settings(str(target), [str(v) for v in available or []], policy, 0)


def _why_first(
    rehearsal: Rehearsal, records: dict[str, Any]
) -> Callable[[Any, Any], Refusal | None]:
    """The platform's own refusal of a step taken before the one it needs."""

    def why(task: Any, needed: Any) -> Refusal | None:
        found = rehearsal.part.refusal(records[task.id])
        if found is None:
            return None
        return Refusal(
            task.obj,
            task.frm,
            task.to,
            list(found.get("rules") or ["X1"]),
            str(found["why"]),
            "",
            list(found.get("objects") or []),
        )

    return why


def prepared(
    rehearsal: Rehearsal, rollout: Rollout, settings: Settings
) -> tuple[Plan, dict[str, dict[str, Any]], Conductor]:
    """The fleet's plan, its records and the conductor over them; refused (nothing
    written) when no plan keeps every state legal or the rollout cannot place it."""
    plan, records = rehearsal.prepare(settings)
    conductor = Conductor(rollout, facts_of(rehearsal), tasks_of(rehearsal, rollout, records))
    try:
        conductor.check(_start(rehearsal), _why_first(rehearsal, records))
    except BlockedError as blocked:
        raise RolloutRefusedError(Plan([], refused=blocked.refusal)) from None
    return plan, records, conductor


def _start(rehearsal: Rehearsal) -> float:
    return max(
        [rehearsal.now, *(float(m.store.meta("now", 0)) for m in rehearsal.members.values())]
    )


# --- plan -------------------------------------------------------------------------------


def plan_report(
    rehearsal: Rehearsal, rollout: Rollout, name: str, to: str | None
) -> dict[str, Any]:
    """Where each step lands on forecasts; `refused` with rule, objects and fix."""
    settings = settings_of(rehearsal, rollout, to)
    try:
        _, records, conductor = prepared(rehearsal, rollout, settings)
    except PlanRefusedError as refused:
        return refused_report(rehearsal, rollout, name, settings.target, refused)
    start = _start(rehearsal)
    placed = schedule(conductor, start, one_at_a_time=rehearsal.part.one_at_a_time)
    return _plan_json(
        rehearsal,
        rollout=rollout,
        name=name,
        settings=settings,
        records=records,
        conductor=conductor,
        placed=placed,
        start=start,
    )


def refused_report(
    rehearsal: Rehearsal, rollout: Rollout, name: str, target: str, refused: PlanRefusedError
) -> dict[str, Any]:
    said = refused_json(rollout, name, rehearsal.platform, refused, _start(rehearsal))
    return {**said, "target": target}


def refused_json(
    rollout: Rollout, name: str, platform: str, refused: PlanRefusedError, at: float
) -> dict[str, Any]:
    """A rollout refused before anything started (simulated or live fleet)."""
    refusal = refused.plan.refused
    return {
        "rollout": rollout.name,
        "fleet": name,
        "platform": platform,
        "outcome": "refused",
        "startedAt": rfc3339(at),
        "steps": [],
        "refused": refusal.to_json() if refusal is not None else None,
    }


def _plan_json(
    rehearsal: Rehearsal,
    *,
    rollout: Rollout,
    name: str,
    settings: Settings,
    records: dict[str, Any],
    conductor: Conductor,
    placed: Schedule,
    start: float,
) -> dict[str, Any]:
    forecasts = {}
    for p in placed.placed:
        seconds, source = forecast(rehearsal, rollout, records[p.task.id])
        forecasts[p.task.id] = (round(seconds, 3), source)
    steps = placed_rows(placed, conductor, forecasts, start)
    return {
        "rollout": rollout.name,
        "fleet": name,
        "platform": rehearsal.platform,
        "target": settings.target,
        "outcome": placed.outcome,
        "startedAt": rfc3339(start),
        "finishedAt": round(placed.finish - start, 3),
        "steps": steps,
        "stages": stage_rows(conductor, start),
        "windows": window_rows(rollout, start),
    }


def placed_rows(
    placed: Schedule,
    conductor: Conductor,
    forecasts: dict[str, tuple[float, str]],
    start: float,
) -> list[dict[str, Any]]:
    """Each step the schedule placed, its times since `start` and its forecast (seconds,
    where from), as `plan` reports them for simulated and live fleets alike."""
    stage_names = [s.name for s in conductor.rollout.stages]
    rows = []
    for p in placed.placed:
        seconds, source = forecasts[p.task.id]
        rows.append(
            {
                "id": p.task.id,
                "object": p.task.obj,
                "cluster": p.task.cluster,
                "stage": stage_names[conductor.stage_of[p.task.cluster] or 0],
                "from": p.task.frm,
                "to": p.task.to,
                "after": list(p.task.after),
                "readyAt": relative(p.ready, start),
                "startedAt": relative(p.start, start),
                "finishedAt": relative(p.finish, start),
                "forecastSeconds": seconds,
                "forecastFrom": source,
                "heldBy": p.held,
            }
        )
    return rows


def stage_rows(conductor: Conductor, start: float) -> list[dict[str, Any]]:
    """Each stage: its clusters, status, times since `start`, approval and gates."""
    rows = []
    for index, (stage, record) in enumerate(
        zip(conductor.rollout.stages, conductor.state["stages"], strict=True)
    ):
        gates = [
            {"gate": key.split("/")[1], "cluster": key.split("/")[2], **seen}
            for key, seen in sorted(conductor.state["gates"].items())
            if key.split("/")[0] == stage.name
        ]
        rows.append(
            {
                "name": stage.name,
                "clusters": conductor.members(index),
                "status": record["status"],
                "maxConcurrency": stage.max_concurrency,
                "soakSeconds": stage.soak,
                **{
                    k: relative(record.get(k), start)
                    for k in ("readyAt", "openedAt", "doneAt", "soakUntil", "finishedAt")
                },
                "approval": (
                    {
                        "askedAt": relative(record.get("askedAt"), start),
                        "approvedAt": relative(record.get("approvedAt"), start),
                        "approvedBy": record.get("approvedBy"),
                        "approvedOn": record.get("approvedOn"),
                    }
                    if stage.approval
                    else None
                ),
                "gates": [
                    {
                        **g,
                        "at": relative(g.get("at"), start),
                        "aboveSince": relative(g.get("aboveSince"), start),
                    }
                    for g in gates
                ],
                "waitingFor": record.get("gating"),
            }
        )
    return rows


def relative(value: Any, start: float) -> float | None:
    """Seconds from `start` (None stays None), as every report gives its times."""
    return None if value is None else round(float(value) - start, 3)


def window_rows(rollout: Rollout, now: float) -> list[dict[str, Any]]:
    """Each window as written, with the start of its occurrence open at `now` or next."""
    rows = []
    for scoped, written in zip(
        rollout.windows, rollout.document["spec"].get("windows") or [], strict=True
    ):
        rule = scoped.rule
        upcoming = (
            next(iter(rule.occurrences(now, now + 8 * 86400)), None)
            if isinstance(rule, Window)
            else None
        )
        rows.append({**written, "next": rfc3339(upcoming[0]) if upcoming else None})
    return rows


# --- rehearse on a copy, start on the fleet -------------------------------------------------


@contextmanager
def fleet_copy(root: Path, members: Members) -> Iterator[tuple[Store, Members]]:
    """The fleet and its members copied into a temporary directory (SQLite backups)."""
    with tempfile.TemporaryDirectory(prefix="kupgrade-rollout-") as tmp, ExitStack() as stack:
        copy = Path(tmp) / "fleet"
        copy_cluster(root, copy, FLEET_DB)
        store = Store(copy / FLEET_DB)
        stack.callback(store.close)
        opened: Members = {}
        for name, (member_root, _, _) in members.items():
            where = Path(tmp) / "clusters" / name
            copy_cluster(member_root, where)
            member_store = Store(where / "cluster.db")
            stack.callback(member_store.close)
            opened[name] = (where, member_store, spec_in(where, member_store))
        yield store, opened


def begin(
    rehearsal: Rehearsal, rollout: Rollout, file: str, to: str | None, *, assume: bool
) -> None:
    """Plan, check and start the rollout on `rehearsal`'s fleet (refused: nothing written)."""
    settings = settings_of(rehearsal, rollout, to)
    plan, records, _ = prepared(rehearsal, rollout, settings)
    rehearsal.fleet.set_meta(ROLLOUT, {"document": rollout.document, "file": file, "taken": []})
    rehearsal.begin(
        settings,
        prepared=(plan, records),
        pacer=lambda r: RolloutPacer(r, rollout, assume_approvals=assume),
    )


def go_on(rehearsal: Rehearsal, rollout: Rollout, *, assume: bool, by: str | None = None) -> None:
    """A rollout under way (or waiting, or halted) taken up again: its pacer attached and
    its status running; `by` a person, who clears a halt."""
    rehearsal.resume()
    pacer = RolloutPacer(rehearsal, rollout, assume_approvals=assume)
    rehearsal.pacer = pacer
    if by is not None and pacer.conductor.halted:
        pacer.conductor.resume(by, rehearsal.now)
        pacer.save()
    state = rehearsal.state or {}
    if state.get("status") in ("waiting", "halted"):
        state["status"] = "running"
        state.pop("waitingFor", None)
        if state.get("stop", {}).get("kind") in ("gate", "manual"):
            state.pop("stop", None)
            state.pop("finishedAt", None)
        rehearsal.fleet.set_meta(REHEARSAL, state)


def take_requests(rehearsal: Rehearsal, root: Path) -> list[str]:
    """Apply the request files not taken yet to a simulated fleet's rollout."""
    pacer = rehearsal.pacer
    if not isinstance(pacer, RolloutPacer):
        return []
    return take_into(rehearsal.fleet, pacer, root, rehearsal.now)


def take_into(store: Store, conducted: Conducted, root: Path, now: float) -> list[str]:
    """Apply the request files not taken yet (their names are kept in the store, so a
    request is applied once even when a crash leaves its file behind)."""
    stored = dict(store.meta(ROLLOUT) or {})
    taken = list(stored.get("taken") or [])
    done = []
    for path, body in pending_requests(root):
        if path.name in taken:
            continue
        done.append(apply_request(conducted, body, now))
        taken.append(path.name)
    if done:
        conducted.save()
        stored = dict(store.meta(ROLLOUT) or {})
        stored["taken"] = taken[-1000:]
        store.set_meta(ROLLOUT, stored)
    return done


def clear_taken(root: Path, store: Store) -> None:
    """Remove request files the store says were taken (after it committed them)."""
    taken = set((store.meta(ROLLOUT) or {}).get("taken") or [])
    for path, _ in pending_requests(root):
        if path.name in taken:
            path.unlink(missing_ok=True)


# --- the report -------------------------------------------------------------------------------


def outcome_of(status: str) -> str:
    """The rehearsal's status as a rollout's outcome."""
    return {"stopped": "halted", "completed": "completed", "waiting": "waiting"}.get(status, status)


def rollout_report(rehearsal: Rehearsal, rollout: Rollout, name: str) -> dict[str, Any]:
    """The rollout as far as it got."""
    state = rehearsal.state or {}
    start = float(state.get("startedAt", rehearsal.now))
    stored = rehearsal.fleet.meta(ROLLOUT) or {}
    conductor = Conductor(
        rollout,
        facts_of(rehearsal),
        tasks_of(rehearsal, rollout, rehearsal.steps),
        stored.get("conductor"),
    )
    stage_names = [s.name for s in rollout.stages]
    steps = []
    for row in step_rows(rehearsal, start):
        record = rehearsal.steps[row["id"]]
        seconds, source = forecast(rehearsal, rollout, record)
        index = conductor.stage_of.get(row["cluster"])
        steps.append(
            {
                **row,
                "stage": stage_names[index] if index is not None else None,
                "forecastSeconds": round(seconds, 3),
                "forecastFrom": source,
            }
        )
    out: dict[str, Any] = {
        "rollout": rollout.name,
        "fleet": name,
        "platform": rehearsal.platform,
        "target": state.get("target"),
        "outcome": outcome_of(str(state.get("status", "not started"))),
        "startedAt": rfc3339(start) if state else None,
        "now": round(rehearsal.now - start, 3),
        "finishedAt": relative(state.get("finishedAt"), start),
        "steps": steps,
        "stages": stage_rows(conductor, start),
        "windows": window_rows(rollout, rehearsal.now),
        "events": [
            {**e, "at": relative(e["at"], start)}
            for e in rehearsal.fleet.events()
            if e["object"].startswith(("stage/", "gate/", "rollout"))
            or e["reason"].startswith("Rollout")
        ],
    }
    if state.get("waitingFor"):
        out["waitingFor"] = state["waitingFor"]
    if state.get("stop"):
        stop = dict(state["stop"])
        for key in ("at", "since"):
            if key in stop:
                stop[key] = relative(stop[key], start)
        out["halt"] = stop
    return out


def rollout_view(rehearsal: Rehearsal, rollout: Rollout, name: str) -> dict[str, Any]:
    """What the web console shows of a rollout under way: the fleet's view (clusters,
    steps, their Gantt chart) with each step's stage and the stages themselves."""
    view = fleet_view(rehearsal, name)
    pacer = rehearsal.pacer
    conductor = (
        pacer.conductor
        if isinstance(pacer, RolloutPacer)
        else RolloutPacer(rehearsal, rollout, assume_approvals=False).conductor
    )
    start = float((rehearsal.state or {}).get("startedAt", rehearsal.now))
    names = [s.name for s in rollout.stages]
    for step in view["steps"]:
        index = conductor.stage_of.get(step["cluster"])
        step["stage"] = names[index] if index is not None else None
    view["rollout"] = rollout.name
    view["outcome"] = outcome_of(str(view["outcome"]))
    view["stages"] = stage_rows(conductor, start)
    return view
