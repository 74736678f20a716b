"""A fleet plan placed into stages and maintenance windows (SPEC X1, X9).

The conductor is the one set of rules for *when* a plan's step may start; the planner
(`schedule`, on forecast durations) and the rehearsal of the fleet (on its simulated
clusters, sim/fleet/rollout.py) both ask it:

- stages go in order: a stage opens once the one before it is done and its soak is over,
  then, when it asks for one, once a person approved it, then once its gates pass on each
  of its clusters; it is done when every step of its clusters is done;
- a stage runs steps on at most `maxConcurrency` clusters at once;
- a step starts only where its forecast fits an occurrence of its cluster's windows and
  misses its exclusions (plan/windows.py);
- a gate above its threshold for `for`, before its stage opens or during its soak, halts
  the rollout: nothing more starts until `resume`.

A step's `after` steps still come first (they keep every state legal, X1); a stage order
that would need a later stage's step first is refused before anything starts, with the
rule the step would break.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kupgrade.plan.rollout_doc import Gate, Rollout, Stage
from kupgrade.plan.steps import BlockedError, Refusal, step_order
from kupgrade.plan.windows import Calendar, Exclusion, Window
from kupgrade.skew.verdict import Violation
from kupgrade.versions.goduration import go_duration
from kupgrade.versions.times import rfc3339

PENDING, APPROVAL, GATING, RUNNING, SOAKING, DONE = (
    "pending",
    "approval",
    "gating",
    "running",
    "soaking",
    "done",
)


@dataclass(frozen=True)
class Facts:
    """One cluster as selectors see it."""

    name: str
    role: str
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Task:
    """One plan step as the schedule sees it: its cluster, what it needs first, whether
    it changes the minor version, and how long it is forecast to take."""

    id: str
    obj: str
    cluster: str
    frm: str
    to: str
    after: tuple[str, ...]
    minor: bool
    seconds: float


@dataclass(frozen=True)
class Hold:
    """Why a ready step does not start now, and when to look again (None: when
    something else happens)."""

    why: str
    until: float | None = None


Event = tuple[float, str, str, str]  # at, object, reason, message
Evaluate = Callable[[Gate, str, float], float | None]  # gate, cluster, at -> value (None: no data)


def _span(seconds: float) -> str:
    return go_duration(round(seconds))


class Conductor:
    """The rollout's rules over one plan, with its progress as a JSON-able `state` so that
    a rehearsal keeps it in its store and goes on after a crash."""

    def __init__(
        self,
        rollout: Rollout,
        facts: Iterable[Facts],
        tasks: Iterable[Task],
        state: dict[str, Any] | None = None,
    ) -> None:
        self.rollout = rollout
        self.facts = {f.name: f for f in facts}
        self.tasks = {t.id: t for t in tasks}
        self.stage_of = {name: self._stage_of(f) for name, f in self.facts.items()}
        self.calendars = {name: self._calendar(f) for name, f in self.facts.items()}
        self.state: dict[str, Any] = state or {
            "stages": [{"name": s.name, "status": PENDING} for s in rollout.stages],
            "gates": {},
            "halt": None,
        }
        self.events: list[Event] = []
        self._fits: dict[str, tuple[float, float | None]] = {}
        self._by_stage: dict[int | None, list[Task]] | None = None

    # --- who is where -------------------------------------------------------------------

    def _stage_of(self, facts: Facts) -> int | None:
        """The first stage that selects the cluster."""
        for i, stage in enumerate(self.rollout.stages):
            if stage.clusters.selects(facts.name, facts.role, facts.labels):
                return i
        return None

    def _calendar(self, facts: Facts) -> Calendar:
        windows = [
            w.rule
            for w in self.rollout.windows
            if w.clusters.selects(facts.name, facts.role, facts.labels)
            and isinstance(w.rule, Window)
        ]
        exclusions = [
            e.rule
            for e in self.rollout.exclusions
            if e.clusters.selects(facts.name, facts.role, facts.labels)
            and isinstance(e.rule, Exclusion)
        ]
        return Calendar(windows, exclusions)

    def members(self, stage: int) -> list[str]:
        return sorted(n for n, s in self.stage_of.items() if s == stage)

    def stage_tasks(self, stage: int) -> list[Task]:
        if self._by_stage is None:
            self._by_stage = {}
            for task in self.tasks.values():
                self._by_stage.setdefault(self.stage_of.get(task.cluster), []).append(task)
        return self._by_stage.get(stage, [])

    # --- refusals before anything starts ------------------------------------------------

    def check(self, at: float, why_first: Callable[[Task, Task], Refusal | None]) -> None:
        """BlockedError when a step is in no stage, fits no window, or needs a step of a
        later stage (`why_first(step, needed)` names the rule it would break)."""
        for task in sorted(self.tasks.values(), key=lambda t: step_order(t.id)):
            stage = self.stage_of.get(task.cluster)
            if stage is None:
                raise BlockedError(
                    _refusal(
                        task,
                        "X9.stage",
                        (
                            f"cluster {task.cluster} has a step ({task.obj} {task.frm} -> {task.to}) "
                            "but no stage selects it"
                        ),
                        f"add {task.cluster} to a stage (a last stage with `clusters: {{}}` takes "
                        "every cluster not selected before)",
                        [f"cluster/{task.cluster}"],
                    )
                )
            self._check_window(task, at)
            for need in task.after:
                needed = self.tasks[need]
                later = self.stage_of.get(needed.cluster)
                if later is not None and later > stage:
                    raise BlockedError(self._order_refusal(task, needed, stage, later, why_first))

    def _check_window(self, task: Task, at: float) -> None:
        calendar = self.calendars[task.cluster]
        longest = calendar.longest()
        if task.seconds > longest:
            raise BlockedError(
                _refusal(
                    task,
                    "X9.window",
                    (
                        f"{task.obj} {task.frm} -> {task.to} is forecast at {_span(task.seconds)}, "
                        f"longer than any window of cluster {task.cluster} (the longest is "
                        f"{_span(longest)})"
                    ),
                    f"give {task.cluster} a window of at least {_span(task.seconds)}, or state "
                    f"a forecast under spec.durations.clusters.{task.cluster} if it is known to "
                    "take less",
                    [f"cluster/{task.cluster}"],
                )
            )
        if calendar.fit(at, task.seconds, task.minor) is None:
            raise BlockedError(
                _refusal(
                    task,
                    "X9.exclusion",
                    (
                        f"{task.obj} {task.frm} -> {task.to} ({_span(task.seconds)}) fits no window "
                        f"of cluster {task.cluster} outside its exclusions within two years"
                    ),
                    "shorten the exclusions that cover its windows, or widen the windows",
                    [f"cluster/{task.cluster}"],
                )
            )

    def _order_refusal(
        self,
        task: Task,
        needed: Task,
        stage: int,
        later: int,
        why_first: Callable[[Task, Task], Refusal | None],
    ) -> Refusal:
        names = self.rollout.stages
        found = why_first(task, needed)
        rules = found.rules if found is not None else ["X1"]
        detail = found.message if found is not None else "it would leave a state no rule allows"
        return Refusal(
            task.obj,
            task.frm,
            task.to,
            rules,
            f"stage {names[stage].name} would move {task.obj} to {task.to} before stage "
            f"{names[later].name} moves {needed.obj} to {needed.to}: {detail}",
            f"put cluster {needed.cluster} in stage {names[stage].name} or an earlier one, "
            f"or cluster {task.cluster} in stage {names[later].name} or a later one; or roll "
            f"out in two passes, first to {task.frm} (--to {task.frm}), then to {task.to}",
            [task.obj, needed.obj, *(found.objects if found is not None else [])],
        )

    # --- what may start -----------------------------------------------------------------

    @property
    def halted(self) -> dict[str, Any] | None:
        found = self.state.get("halt")
        return dict(found) if found else None

    def busy(self, running: Iterable[str]) -> dict[int, list[str]]:
        """The clusters of each stage with a step under way (`running`: their ids)."""
        out: dict[int, set[str]] = {}
        for step_id in running:
            cluster = self.tasks[step_id].cluster
            stage = self.stage_of.get(cluster)
            if stage is not None:
                out.setdefault(stage, set()).add(cluster)
        return {stage: sorted(names) for stage, names in out.items()}

    def hold(self, task: Task, busy_by_stage: dict[int, list[str]], now: float) -> Hold | None:
        """Why `task` (ready: its `after` steps are done) may not start at `now`; `busy`:
        the clusters of each stage with a step under way (`busy()`)."""
        halt = self.halted
        if halt is not None:
            return Hold(f"the rollout is halted: {halt['why']}")
        index = self.stage_of.get(task.cluster)
        if index is None:
            return Hold(f"no stage selects cluster {task.cluster}")
        stage = self.rollout.stages[index]
        record = self.state["stages"][index]
        if record["status"] != RUNNING:
            return Hold(f"stage {stage.name} {self.waits(index)}", self._timer(index))
        busy = busy_by_stage.get(index, [])
        if task.cluster not in busy and len(busy) >= stage.max_concurrency:
            return Hold(
                f"a free slot of stage {stage.name} (maxConcurrency {stage.max_concurrency}: "
                f"{', '.join(busy)} upgrading)"
            )
        fit = self._fit(task, now)
        if fit is None:
            return Hold(
                f"a window of {_span(task.seconds)} outside the exclusions (none within two years)"
            )
        if fit > now:
            return Hold(f"the window at {rfc3339(fit)} (forecast {_span(task.seconds)})", fit)
        return None

    def cached_fit(self, task: Task, now: float) -> float | None:
        """The fit found before that still holds at `now`, if there is one."""
        asked, found = self._fits.get(task.id, (math.inf, None))
        return found if found is not None and asked <= now <= found else None

    def _fit(self, task: Task, now: float) -> float | None:
        """Where the task fits from `now`; the answer found at an earlier moment holds
        until its start (nothing fits between, so nothing fits from any moment between)."""
        found = self.cached_fit(task, now)
        if found is not None:
            return found
        found = self.calendars[task.cluster].fit(now, task.seconds, task.minor)
        self._fits[task.id] = (now, found)
        return found

    def waits(self, index: int) -> str:
        record = self.state["stages"][index]
        status = record["status"]
        if status == APPROVAL:
            return f"waits for approval (`kupgrade fleet rollout approve {record['name']}`)"
        if status == GATING:
            return f"waits for its gates: {record.get('gating') or 'evaluating'}"
        if status == SOAKING:
            return f"soaking until {rfc3339(float(record['soakUntil']))}"
        if status == RUNNING:
            return "upgrading"
        if status == PENDING and index:
            before = self.state["stages"][index - 1]
            if before["status"] == SOAKING:
                return f"waits for the soak of stage {before['name']} (until {rfc3339(before['soakUntil'])})"
            return f"waits for stage {before['name']}"
        return f"is {status}"

    def _timer(self, index: int) -> float | None:
        record = self.state["stages"][index]
        if record["status"] == GATING:
            return float(record["gateAt"])
        if record["status"] == PENDING and index:
            before = self.state["stages"][index - 1]
            if before["status"] == SOAKING:
                return min(float(before["soakUntil"]), float(before.get("gateAt", math.inf)))
        return None

    def wake(self) -> float | None:
        """The next time the stages change on their own (a soak ends, a gate is due)."""
        times = []
        for record in self.state["stages"]:
            if record["status"] == SOAKING:
                times.append(float(record["soakUntil"]))
            if record["status"] in (SOAKING, GATING) and "gateAt" in record:
                times.append(float(record["gateAt"]))
        return min(times) if times and not self.halted else None

    def waiting_for_approval(self) -> str | None:
        for record in self.state["stages"]:
            if record["status"] == APPROVAL:
                return str(record["name"])
        return None

    # --- moving on ----------------------------------------------------------------------

    def advance(
        self, done: set[str], now: float, evaluate: Evaluate | None, assume_approvals: bool = False
    ) -> None:
        """Move the stages on as far as they go at `now`: open, approve, gate, soak, finish."""
        if self.halted:
            return
        for index, stage in enumerate(self.rollout.stages):
            record = self.state["stages"][index]
            if record["status"] == DONE:
                continue
            if index and self.state["stages"][index - 1]["status"] != DONE:
                return
            self._step_stage(
                index,
                stage=stage,
                record=record,
                done=done,
                now=now,
                evaluate=evaluate,
                assume=assume_approvals,
            )
            if record["status"] != DONE or self.halted:
                return

    def _step_stage(
        self,
        index: int,
        *,
        stage: Stage,
        record: dict[str, Any],
        done: set[str],
        now: float,
        evaluate: Evaluate | None,
        assume: bool,
    ) -> None:
        obj = f"stage/{stage.name}"
        if record["status"] == PENDING:
            record["readyAt"] = now
            if not self.stage_tasks(index):  # nothing to do: no approval, gate or soak
                self._finish(stage, record, now)
                return
            if stage.approval and "approvedAt" not in record:
                record["status"] = APPROVAL
                record["askedAt"] = now
                self._event(now, obj, "ApprovalRequested", f"stage {stage.name} waits for approval")
            else:
                self._gate_or_open(stage, record, now)
        if record["status"] == APPROVAL:
            if "approvedAt" not in record and assume:
                record.update(approvedAt=now, approvedBy="(assumed by the rehearsal)")
                self._event(now, obj, "Approved", "approval assumed by the rehearsal")
            if "approvedAt" not in record:
                return
            self._gate_or_open(stage, record, now)
        if record["status"] == GATING:
            if not self._gates(index, stage, record, now, evaluate):
                return
            record.pop("gating", None)
            self._open(stage, record, now)
        if record["status"] == RUNNING:
            if not all(t.id in done for t in self.stage_tasks(index)):
                return
            record["doneAt"] = now
            if not self.stage_tasks(index) or (stage.soak <= 0 and not stage.gates):
                self._finish(stage, record, now)
                return
            record.update(status=SOAKING, soakUntil=now + stage.soak)
            if stage.gates:
                record["gateAt"] = now
            self._event(
                now, obj, "SoakStarted", f"every step done; soaking for {_span(stage.soak)}"
            )
        if record["status"] == SOAKING:
            if stage.gates and now >= float(record.get("gateAt", now)):
                self._gates(index, stage, record, now, evaluate)
                if self.halted:
                    return
            if now >= float(record["soakUntil"]) and "gating" not in record:
                self._finish(stage, record, now)

    def _gate_or_open(self, stage: Stage, record: dict[str, Any], now: float) -> None:
        if stage.gates:
            record.update(status=GATING, gateAt=now)
        else:
            self._open(stage, record, now)

    def _open(self, stage: Stage, record: dict[str, Any], now: float) -> None:
        record.update(status=RUNNING, openedAt=now)
        record.pop("gateAt", None)
        self._event(
            now,
            f"stage/{stage.name}",
            "StageStarted",
            _few(self.members(self.rollout.stages.index(stage))),
        )

    def _finish(self, stage: Stage, record: dict[str, Any], now: float) -> None:
        record.update(status=DONE, finishedAt=now)
        record.pop("gateAt", None)
        self._event(now, f"stage/{stage.name}", "StageDone", f"stage {stage.name} done")

    def _gates(
        self,
        index: int,
        stage: Stage,
        record: dict[str, Any],
        now: float,
        evaluate: Evaluate | None,
    ) -> bool:
        """Evaluate the stage's gates on its clusters if due; True when all pass now.
        Halts the rollout on a gate above its threshold for its `for`."""
        if now < float(record.get("gateAt", now)):
            return "gating" not in record
        failing = []
        interval = min(g.interval for g in stage.gates)
        for gate in stage.gates:
            for cluster in self.members(index):
                value = evaluate(gate, cluster, now) if evaluate is not None else None
                key = f"{stage.name}/{gate.name}/{cluster}"
                seen = self.state["gates"].setdefault(key, {})
                seen.update(value=value, at=now)
                if value is None or value <= gate.threshold:
                    seen.pop("aboveSince", None)
                    continue
                since = float(seen.setdefault("aboveSince", now))
                failing.append(f"{gate.name} on {cluster} is {value:g} (above {gate.threshold:g})")
                if now - since >= gate.hold:
                    self._halt_on(stage, gate, cluster, value=value, since=since, now=now)
                    return False
        record["gateAt"] = now + interval
        if failing:
            record["gating"] = "; ".join(failing)
            return False
        record.pop("gating", None)
        return True

    def _halt_on(
        self, stage: Stage, gate: Gate, cluster: str, *, value: float, since: float, now: float
    ) -> None:
        why = (
            f"gate {gate.name} of stage {stage.name} on cluster {cluster}: {value:g} above "
            f"{gate.threshold:g} for {_span(now - since)}"
        )
        self.state["halt"] = {
            "kind": "gate",
            "stage": stage.name,
            "gate": gate.name,
            "cluster": cluster,
            "value": value,
            "threshold": gate.threshold,
            "since": since,
            "at": now,
            "why": why,
        }
        self._event(now, f"gate/{stage.name}/{gate.name}", "RolloutHalted", why)

    def halt(self, by: str, now: float) -> None:
        """A person halted the rollout: nothing more starts until `resume`."""
        if not self.halted:
            self.state["halt"] = {"kind": "manual", "by": by, "at": now, "why": f"halted by {by}"}
            self._event(now, "rollout", "RolloutHalted", f"halted by {by}")

    def resume(self, by: str, now: float) -> None:
        """Clear a halt; gates measure their `for` afresh."""
        if self.halted:
            self.state["halt"] = None
            for seen in self.state["gates"].values():
                seen.pop("aboveSince", None)
            for record in self.state["stages"]:
                if record["status"] in (GATING, SOAKING):
                    record["gateAt"] = now
            self._event(now, "rollout", "RolloutResumed", f"resumed by {by}")

    def approve(self, stage: str, by: str, now: float, when: str = "") -> bool:
        """Record a person's approval of `stage` (before it asks, too); False when it had
        one already."""
        for record in self.state["stages"]:
            if record["name"] != stage:
                continue
            if "approvedAt" in record:
                return False
            record.update(approvedAt=now, approvedBy=by)
            if when:
                record["approvedOn"] = when
            said = f"approved by {by}" + (f" on {when}" if when else "")
            self._event(now, f"stage/{stage}", "Approved", said)
            return True
        raise KeyError(stage)

    def _event(self, at: float, obj: str, reason: str, message: str) -> None:
        self.events.append((at, obj, reason, message))


def _few(names: list[str], shown: int = 8) -> str:
    """A stage's clusters in a line: the first few and how many more."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return f"{len(names)} clusters: {', '.join(names[:shown]) or 'none'}{more}"


def _refusal(task: Task, rule: str, message: str, fix: str, objects: list[str]) -> Refusal:
    return Refusal(task.obj, task.frm, task.to, [rule], message, fix, [task.obj, *objects])


def violation_refusal(task: Task, violations: list[Violation]) -> Refusal:
    """The refusal of a step the platform's rules would not allow."""
    return Refusal.of(violations, (task.obj, task.frm, task.to))


# --- the schedule on forecasts ------------------------------------------------------------


@dataclass
class Placed:
    task: Task
    start: float
    finish: float
    ready: float
    held: str | None = None  # what it waited for last, if it waited


@dataclass
class Schedule:
    placed: list[Placed]
    outcome: str  # completed | waiting
    finish: float
    events: list[Event]
    stages: list[dict[str, Any]]


def schedule(
    conductor: Conductor, start: float, *, one_at_a_time: bool, limit: float = 400 * 86400.0
) -> Schedule:
    """Every step placed on forecast durations, as the rehearsal would start them: each as
    early as its `after` steps, its stage, its stage's concurrency and its windows allow,
    in plan order; approvals taken as given when asked and gates as passing."""
    tasks = sorted(conductor.tasks.values(), key=lambda t: step_order(t.id))
    now = start
    done: set[str] = set()
    running: dict[str, float] = {}  # id -> forecast finish
    placed: dict[str, Placed] = {}
    ready_at: dict[str, float] = {}
    held: dict[str, str] = {}
    while len(done) < len(tasks) and now - start <= limit:
        conductor.advance(done, now, None, assume_approvals=True)
        wakes = [conductor.wake()]
        for task in tasks:
            if task.id in done or task.id in running or not all(a in done for a in task.after):
                continue
            ready_at.setdefault(task.id, now)
            if one_at_a_time and any(conductor.tasks[r].cluster == task.cluster for r in running):
                continue
            hold = conductor.hold(task, conductor.busy(running), now)
            if hold is not None:
                held[task.id] = hold.why
                wakes.append(hold.until)
                continue
            running[task.id] = now + task.seconds
            placed[task.id] = Placed(
                task, now, now + task.seconds, ready_at[task.id], held.get(task.id)
            )
        wakes.extend(running.values())
        upcoming = [w for w in wakes if w is not None and w > now]
        if not upcoming:
            break
        now = min(upcoming)
        for task_id in sorted((i for i, f in running.items() if f <= now), key=step_order):
            del running[task_id]
            done.add(task_id)
    conductor.advance(done, now, None, assume_approvals=True)
    while len(done) == len(tasks) and (wake := conductor.wake()) is not None and wake > now:
        now = wake  # the last soaks: the rollout is done when its last stage is
        conductor.advance(done, now, None, assume_approvals=True)
    outcome = "completed" if len(done) == len(tasks) else "waiting"
    order = [placed[t.id] for t in tasks if t.id in placed]
    return Schedule(order, outcome, now, list(conductor.events), conductor.state["stages"])
