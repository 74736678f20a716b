"""A fleet plan carried out on the simulated clusters of a fleet, on one virtual clock
(SPEC X1, X2, X3, X5).

The loop moves the shared clock to the next event of any member, lets each member with
something due react (its world and its upgrade controller, as `controller run` would),
records and checks the state every change leaves (kupgrade.sim.fleet.monitor), then
starts every step of the plan whose `after` steps are done and for which a slot is free
(`--max-parallel`); a distributed-cloud cluster takes one step at a time (bmctl runs one
upgrade of a cluster at a time), a Kubernetes cluster's steps may overlap. A broken
rule, a step the platform refuses or a failed upgrade stops the rehearsal and says which.

Crash safety across many stores. Each member keeps its own SQLite store, and SQLite
commits one file at a time, so the fleet commits in a fixed order: first the fleet's
store, holding the window just run (every step started, with how many times its member
had advanced when it started, and how many times each member advanced in all), then
every member. A run killed between the two finds members a window behind; each one is
replayed alone through that window (its own events, the recorded starts at the recorded
points), which is exactly what it did the first time: members touch one another only
through the steps the fleet starts. Checks and records are not replayed; they are in the
fleet's store already.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from kupgrade.errors import InputError, KupgradeError
from kupgrade.plan.steps import Plan, Refusal, step_order
from kupgrade.sim.fleet.downtime import Downtime
from kupgrade.sim.fleet.monitor import Finding, Monitor
from kupgrade.sim.loop import CommitPace, Local, Loop
from kupgrade.sim.platform import FleetMember, FleetRun
from kupgrade.sim.platforms import platform_named
from kupgrade.sim.profile import Spec
from kupgrade.sim.runs import local_loop
from kupgrade.sim.store import Store

REHEARSAL = "rehearsal"
STEPS = "steps"
TICK = "fleet:tick"
ADVANCES = "fleet:advances"
MAX_SIMULATED = 14 * 86400.0  # as `controller run`: after 14 simulated days it stops
# A rehearsal in which no component changed version and no step ended for this long is
# stuck (a drain a budget holds forever retries every few seconds, so it never idles).
STALL = 6 * 3600.0
WALL_SLICE = 0.25  # seconds of a paced run's wait between two step callbacks


class PlanRefusedError(KupgradeError):
    """No plan keeps every state legal: nothing was started."""

    def __init__(self, plan: Plan) -> None:
        refusal = plan.refused
        assert refusal is not None
        super().__init__(
            f"no plan keeps every state legal: {', '.join(refusal.rules)}: {refusal.message}",
            hint=refusal.fix,
        )
        self.plan = plan


class Pacer(Protocol):
    """What else decides when steps start (a staged rollout, sim/fleet/rollout.py): the
    plain rehearsal starts each step as soon as its `after` steps and slots allow."""

    limit: float  # simulated seconds after which the run stops

    def hold(self, step_id: str, running: list[str], at: float) -> tuple[str, float | None] | None:
        """Why the ready step may not start at `at` (`running`: the steps under way), and
        when to look again."""

    def consider(
        self, order: list[str], records: dict[str, Any], running: list[str], at: float
    ) -> list[str]:
        """The steps of `order` that may start now or whose wait changed (the others
        are held as they were: a rollout of a thousand clusters asks of a few)."""

    def wake(self) -> float | None:
        """The next time the pacer changes on its own."""

    def advance(self, at: float) -> str | None:
        """Move on at `at` (steps done so far are in the store); `halted` or None."""

    def waiting(self) -> str | None:
        """What only a person can end (an approval), when nothing else is left to happen."""


@dataclass
class Settings:
    target: str
    available: list[str]
    policy: str
    max_parallel: int  # 0: as many as the plan allows


class Due:
    """When each member next has something to do, without asking all of them each time
    (a heap of their next times; an entry that no longer matches is dropped when met)."""

    def __init__(self, stores: dict[str, Store]) -> None:
        self.stores = stores
        self.known: dict[str, float | None] = {}
        self.heap: list[tuple[float, str]] = []
        for name in sorted(stores):
            self.note(name)

    def note(self, name: str) -> None:
        """Read the member's next time again (after it advanced or was asked)."""
        at = self.stores[name].next_at()
        if self.known.get(name, -1.0) != at:
            self.known[name] = at
            if at is not None:
                heapq.heappush(self.heap, (at, name))

    def first(self) -> float | None:
        while self.heap and self.known.get(self.heap[0][1]) != self.heap[0][0]:
            heapq.heappop(self.heap)
        return self.heap[0][0] if self.heap else None

    def until(self, at: float) -> list[str]:
        """The members due at or before `at`, in name order, each once; `note` each one
        after it advanced."""
        due = set()
        while (first := self.first()) is not None and first <= at:
            _, name = heapq.heappop(self.heap)
            due.add(name)
            self.known[name] = None  # not in the heap any more
        return sorted(due)


class Member:
    """One cluster of the fleet: its run loop (world and upgrade controller) and the
    downtime of its workloads."""

    def __init__(self, name: str, root: Path, store: Store, spec: Spec) -> None:
        self.name = name
        self.store = store
        self.spec = spec
        self.runner: Loop[Local] = local_loop(root, store, spec)
        self.local = self.runner.transport
        self.downtime = Downtime(store)

    @property
    def advances(self) -> int:
        return int(self.store.meta(ADVANCES, 0))

    def advance(self, at: float) -> None:
        """Fire what is due at `at` and let everything react: one step of its loop."""
        self.store.set_meta("now", at)
        self.runner.settle(self.local.advance(at))
        self.store.set_meta(ADVANCES, self.advances + 1)
        self.downtime.update(at)

    def asked(self, at: float) -> None:
        """A step was asked for at `at`: let everything react to it."""
        self.runner.settle()
        self.downtime.update(at)

    def commit(self, tick: int, now: float) -> None:
        self.store.set_meta(TICK, tick)
        self.store.set_meta("now", max(now, float(self.store.meta("now", 0))))
        self.local.sim.save_rng()
        self.store.commit()


def split_object(obj: str) -> tuple[str, str, str | None]:
    """A plan step's object as (cluster, kind, pool)."""
    parts = obj.split("/")
    if parts[0] == "cluster" and len(parts) == 2:
        return parts[1], "cluster", None
    if parts[0] == "control-plane" and len(parts) == 2:
        return parts[1], "control-plane", None
    if parts[0] == "nodepool" and len(parts) == 3:
        return parts[1], "pool", parts[2]
    raise InputError(
        f"plan step object {obj!r} names no cluster of the fleet",
        hint="plan steps name cluster/NAME, control-plane/NAME or nodepool/NAME/POOL",
    )


class Rehearsal:
    def __init__(
        self, fleet: Store, members: dict[str, tuple[Path, Store, Spec]], info: dict[str, Any]
    ) -> None:
        self.fleet = fleet
        self.info = info
        self.platform = str(info["platform"])
        self.members = {
            n: Member(n, root, store, spec) for n, (root, store, spec) in members.items()
        }
        self.names = sorted(self.members)
        self.due = Due({n: m.store for n, m in self.members.items()})
        self.decisions: list[dict[str, Any]] = []
        self.pacer: Pacer | None = None
        self.holds: list[float] = []  # when held steps look again (the last schedule's)
        self.moved = True  # a step ended or a person acted since the pacer last looked
        self.running_of: dict[str, list[str]] | None = None  # see _under_way
        self.pace = CommitPace()
        seen = {n: FleetMember(m.store, m.spec, m.runner.api) for n, m in self.members.items()}
        run = platform_named(self.platform, "platform").fleet(seen, info["document"])
        if run is None:
            raise InputError(
                f"a fleet of {self.platform} clusters cannot be rehearsed",
                hint="rehearse each cluster with `kupgrade controller run`",
            )
        self.part: FleetRun = run  # the platform's part of the rehearsal
        rules = run.rules(str((self.state or {}).get("policy") or "auto"))
        self.monitor = Monitor(rules, run.components, self._record)

    # --- what the fleet's store holds -------------------------------------------------

    @property
    def state(self) -> dict[str, Any] | None:
        found = self.fleet.meta(REHEARSAL)
        return dict(found) if found else None

    @property
    def steps(self) -> dict[str, dict[str, Any]]:
        return dict(self.fleet.meta(STEPS) or {})

    @property
    def now(self) -> float:
        return float(self.fleet.meta("now", 0.0))

    def _record(self, at: float, obj: str, reason: str, message: str) -> None:
        self.fleet.event(at, "Normal", obj, reason, message)
        if reason in ("VersionChanged", "StepStarted", "StepDone"):
            self.fleet.set_meta("progressAt", at)

    def _warn(self, at: float, obj: str, reason: str, message: str) -> None:
        self.fleet.event(at, "Warning", obj, reason, message)

    # --- the plan -----------------------------------------------------------------------

    def plan(self, settings: Settings) -> Plan:
        """The planner's plan from where every member is now."""
        return self.part.plan(settings.target, settings.available, settings.policy)

    def prepare(
        self, settings: Settings, steps: list[dict[str, Any]] | None = None
    ) -> tuple[Plan, dict[str, dict[str, Any]]]:
        """The plan (or the one given) and a record per step; nothing written. Refused
        when no plan exists or a member is busy."""
        for name in self.members:
            busy = self.part.busy(name)
            if busy is not None:
                raise InputError(
                    f"cluster {name} has an upgrade to {busy} in progress that the "
                    "fleet did not start",
                    hint=f"let it finish: `kupgrade controller run --cluster {name}`",
                )
        self.monitor.rules = self.part.rules(settings.policy)
        self.monitor.load(self.names)
        broken = self.monitor.check_all(self.names)
        if broken:  # no plan can keep every state legal from here
            raise PlanRefusedError(Plan([], refused=Refusal.illegal_start(broken, "fleet")))
        plan = self.plan(settings)
        if steps is None:
            if plan.refused is not None:
                raise PlanRefusedError(plan)
            steps = [s.to_json() for s in plan.steps]
        records = {}
        for step in steps:
            cluster, kind, pool = split_object(step["object"])
            if cluster not in self.members:
                raise InputError(
                    f"plan step {step['id']} names cluster {cluster!r}, which is not in the fleet",
                    field="--plan",
                )
            records[step["id"]] = {
                **step,
                "cluster": cluster,
                "kind": kind,
                "pool": pool,
                "leavePools": step.get("leave_pools", []),
            }
        return plan, records

    def begin(
        self,
        settings: Settings,
        steps: list[dict[str, Any]] | None = None,
        *,
        prepared: tuple[Plan, dict[str, dict[str, Any]]] | None = None,
        pacer: Callable[[Rehearsal], Pacer] | None = None,
    ) -> Plan:
        """Plan (or take the plan given), record the first state, start what may start,
        commit. Nothing is written when no plan exists or a member is busy."""
        plan, records = prepared or self.prepare(settings, steps)
        now = max([self.now, *(float(m.store.meta("now", 0)) for m in self.members.values())])
        serial = int((self.state or {}).get("serial", 0)) + 1
        self.fleet.set_meta(
            REHEARSAL,
            {
                "serial": serial,
                "status": "running",
                "target": settings.target,
                "available": settings.available,
                "policy": settings.policy,
                "maxParallel": settings.max_parallel,
                "startedAt": now,
                "order": list(records),
                "statesChecked": plan.states_checked,
            },
        )
        self.fleet.set_meta(STEPS, records)
        self.fleet.set_meta("now", now)
        self.fleet.set_meta("progressAt", now)
        self._record(
            now,
            "fleet",
            "RehearsalStarted",
            f"{len(records)} steps to {settings.target}, up to "
            f"{settings.max_parallel or 'any number of'} at once",
        )
        self.monitor.first(self.names, now)
        if pacer is not None:
            self.pacer = pacer(self)
        self._pace(now)
        self._schedule(now)
        self.commit()
        return plan

    # --- the loop -----------------------------------------------------------------------

    def resume(self) -> None:
        """Bring members a window behind up to the fleet's last commit (see the module)."""
        tick = int(self.fleet.meta("tick", 0))
        window = self.fleet.meta("window") or {"decisions": [], "advances": {}}
        for name, member in self.members.items():
            at = int(member.store.meta(TICK, 0))
            if at == tick:
                continue
            if at != tick - 1:
                raise KupgradeError(
                    f"cluster {name} was last committed {tick - at} windows behind its fleet",
                    hint="delete the fleet and create it again",
                )
            self._replay(member, window)
            member.commit(tick, self.now)
            self.due.note(name)
        self.monitor.load(self.names)

    def _replay(self, member: Member, window: dict[str, Any]) -> None:
        mine = [d for d in window["decisions"] if d["cluster"] == member.name]
        goal = int(window["advances"].get(member.name, member.advances))
        steps = self.steps
        while True:
            while mine and mine[0]["advances"] == member.advances:
                decision = mine.pop(0)
                self._ask(member, steps[decision["step"]], decision["at"])
            if member.advances >= goal:
                break
            at = member.store.next_at()
            if at is None:
                break
            member.advance(at)

    def _policy(self) -> str:
        return str((self.state or {}).get("policy") or "auto")

    def run(
        self, on_step: Callable[[Rehearsal], None] | None = None, speed: float = 0.0
    ) -> dict[str, Any]:
        """Go on until every step is done or something stops the rehearsal."""
        state = self.state
        if state is None or state["status"] != "running":
            return state or {}
        wall, start = time.monotonic(), self.now
        limit = self.pacer.limit if self.pacer is not None else MAX_SIMULATED
        if self.pacer is not None:  # holds are not stored: find them again (idempotent)
            self._pace(self.now)
            self._schedule(self.now)
        while self.state_status() == "running":
            at = self.due.first()
            timers = [t for t in (self.pacer.wake() if self.pacer else None, *self.holds) if t]
            if timers and (at is None or min(timers) < at):
                at = max(min(timers), self.now)
            if at is None:
                self._idle(self.now)
                break
            if at - float(state["startedAt"]) > limit:
                self._stop(self.now, "limit", why=f"{limit / 86400:.0f} simulated days passed")
                break
            if at - float(self.fleet.meta("progressAt", state["startedAt"])) > STALL and any(
                "startedAt" in r and "finishedAt" not in r for r in self.steps.values()
            ):
                self._stalled(self.now)
                break
            if speed > 0:
                self._pace_wall(wall + (at - start) / speed, on_step)
            self._tick(max(at, self.now))
            if on_step is not None:
                on_step(self)
            if self.pace.due():
                self.commit()
        self.commit()
        return self.state or {}

    def _pace_wall(self, until: float, on_step: Callable[[Rehearsal], None] | None) -> None:
        """Wait for the wall clock to reach `until` (monotonic), in slices: between them the
        step callback runs, so a console stays fresh and requests are taken during a long
        wait (a soak, a window)."""
        while (left := until - time.monotonic()) > 0:
            time.sleep(min(left, WALL_SLICE))
            if on_step is not None and left > WALL_SLICE:
                on_step(self)

    def state_status(self) -> str:
        return str((self.state or {}).get("status", ""))

    def _tick(self, at: float) -> None:
        self.fleet.set_meta("now", at)
        for name in self.due.until(at):
            member = self.members[name]
            member.advance(at)
            self.due.note(name)
            if not self._observe(name, at) or not self._progress(name, at):
                return
        if self.pacer is not None and not self.moved and at < self._look_at():
            return  # nothing a pacer or a waiting step depends on changed
        self.moved = False
        self._pace(at)
        self._schedule(at)

    def _look_at(self) -> float:
        """When held steps and the pacer next need a look (infinite: not on their own)."""
        times = [t for t in (self.pacer.wake() if self.pacer else None, *self.holds) if t]
        return min(times, default=math.inf)

    def _pace(self, at: float) -> None:
        """Let the pacer move on (stages, soaks, gates); a halt stops the run."""
        if self.pacer is None or self.state_status() != "running":
            return
        if self.pacer.advance(at) == "halted":
            state = self.state or {}
            state.update(status="halted")
            self.fleet.set_meta(REHEARSAL, state)

    def _observe(self, name: str, at: float) -> bool:
        findings = self.monitor.observe(name, at)
        if findings:
            self._stop(at, "violation", findings=findings)
            return False
        return True

    def _progress(self, name: str, at: float) -> bool:
        """Mark the member's running step done (or stop on a failed one)."""
        mine = self._under_way().get(name)
        if not mine:
            return True
        records = self.steps
        for step_id in list(mine):
            record = records[step_id]
            state, why = self.part.outcome(name, record["ticket"])
            if state == "failed":
                self._stop(at, "failed", step=step_id, why=why)
                return False
            if state == "done":
                record["finishedAt"] = at
                mine.remove(step_id)
                self.moved = True
                record.pop("blocked", None)
                self._record(at, f"step/{step_id}", "StepDone", _what(record))
            elif why and record.get("blocked") != why:
                record["blocked"] = why
                self._warn(at, f"step/{step_id}", "StepBlocked", why)
        self.fleet.set_meta(STEPS, records)
        return True

    def _under_way(self) -> dict[str, list[str]]:
        """Each member's steps under way, in plan order (kept as steps start and end)."""
        if self.running_of is None:
            self.running_of = {}
            for step_id, record in self.steps.items():
                if "startedAt" in record and "finishedAt" not in record:
                    self.running_of.setdefault(record["cluster"], []).append(step_id)
        return self.running_of

    def _schedule(self, at: float) -> None:
        """Start every step that may start now, in plan order; again while a start
        finishes a step at once (nothing left to change)."""
        started = True
        while started and self.state_status() == "running":
            started = False
            self.holds = []
            records = self.steps
            running = [i for i, r in records.items() if "startedAt" in r and "finishedAt" not in r]
            order = (self.state or {})["order"]
            if self.pacer is not None:
                order = self.pacer.consider(order, records, running, at)
            for step_id in order:
                record = records[step_id]
                if "startedAt" in record or not self._ready(record, records, at):
                    continue
                holder = self._holder(record, records, running)
                if holder is None and self.pacer is not None:
                    held = self.pacer.hold(step_id, running, at)
                    if held is not None:
                        holder = held[0]
                        if held[1] is not None:
                            self.holds.append(held[1])
                if holder is not None:
                    if record.get("heldBy") != holder:
                        record["heldBy"] = holder
                        self._record(at, f"step/{step_id}", "StepWaiting", f"waits for {holder}")
                    continue
                if not self._start(step_id, record, records, at):
                    return
                started = True
                break  # records changed: read them again

    def _ready(self, record: dict[str, Any], records: dict[str, Any], at: float) -> bool:
        if not all("finishedAt" in records[a] for a in record["after"]):
            return False
        if "readyAt" not in record:
            record["readyAt"] = at
            last = max(
                record["after"],
                key=lambda a: (records[a]["finishedAt"], step_order(a)),
                default=None,
            )
            record["waitedFor"] = last
            self.fleet.set_meta(STEPS, records)
        return True

    def _holder(
        self, record: dict[str, Any], records: dict[str, Any], running: list[str]
    ) -> str | None:
        """What keeps a ready step from starting: its cluster's running step, or the
        steps filling every slot."""
        same = [i for i in running if records[i]["cluster"] == record["cluster"]]
        if same and self.part.one_at_a_time:
            return f"{same[0]} (cluster {record['cluster']} runs one upgrade at a time)"
        limit = int((self.state or {}).get("maxParallel") or 0)
        if limit and len(running) >= limit:
            return f"a free slot ({', '.join(sorted(running, key=step_order))} running; --max-parallel {limit})"
        return None

    def _start(
        self, step_id: str, record: dict[str, Any], records: dict[str, Any], at: float
    ) -> bool:
        member = self.members[record["cluster"]]
        refusal = self.part.refusal(record)
        if refusal is not None:
            self._stop(at, "refused", step=step_id, **refusal)
            return False
        if record["readyAt"] < at:
            freed = [i for i, r in records.items() if r.get("finishedAt") == at]
            same = [i for i in freed if records[i]["cluster"] == record["cluster"]]
            chosen = same or sorted(freed, key=step_order)
            record["freedBy"] = chosen[0] if chosen else None
        record["ticket"] = self._ask(member, record, at)
        self.due.note(member.name)
        mine = self._under_way().setdefault(member.name, [])
        mine.append(step_id)
        if len(mine) > 1:
            rank = {s: i for i, s in enumerate(records)}
            mine.sort(key=rank.__getitem__)
        record["startedAt"] = at
        self.fleet.set_meta(STEPS, records)
        self.decisions.append(
            {"cluster": member.name, "advances": member.advances, "at": at, "step": step_id}
        )
        self._record(at, f"step/{step_id}", "StepStarted", _what(record))
        return self._observe(member.name, at) and self._progress(member.name, at)

    def _ask(self, member: Member, step: dict[str, Any], at: float) -> dict[str, Any]:
        """Ask the member's upgrade controller for one step of the plan; its ticket."""
        member.store.set_meta("now", at)
        ticket = self.part.start(member.name, step, self._policy())
        member.asked(at)
        return ticket

    def _stalled(self, at: float) -> None:
        """Nothing has moved for STALL simulated seconds: say what the steps wait on."""
        self._progress_all(at)
        running = [
            (i, r) for i, r in self.steps.items() if "startedAt" in r and "finishedAt" not in r
        ]
        step_id, record = running[0] if running else ("", {})
        why = record.get("blocked") or "nothing changed"
        self._stop(
            at,
            "stuck",
            step=step_id,
            why=f"no progress for {STALL / 3600:.0f} simulated hours: {why}",
        )

    def _progress_all(self, at: float) -> None:
        for name in self.names:
            self._progress(name, at)

    def _idle(self, at: float) -> None:
        """Nothing is left to happen: done, waiting for a person, or stuck on a step that
        cannot go on."""
        records = self.steps
        waits = self.pacer.waiting() if self.pacer is not None else None
        if waits is not None:
            state = self.state or {}
            state.update(status="waiting", waitingFor=waits)
            self.fleet.set_meta(REHEARSAL, state)
            self._record(at, "fleet", "RolloutWaiting", waits)
            return
        if all("finishedAt" in r for r in records.values()):
            state = self.state or {}
            state.update(status="completed", finishedAt=at)
            self.fleet.set_meta(REHEARSAL, state)
            self._record(at, "fleet", "RehearsalCompleted", f"every cluster at {state['target']}")
            return
        running = [(i, r) for i, r in records.items() if "startedAt" in r and "finishedAt" not in r]
        if running:
            step_id, record = running[0]
            why = record.get("blocked") or "its upgrade controller has nothing left to do"
            self._stop(at, "stuck", step=step_id, why=str(why))
        else:
            waiting = [i for i, r in records.items() if "startedAt" not in r]
            self._stop(at, "stuck", step=waiting[0], why="its `after` steps can never finish")

    def _stop(self, at: float, kind: str, **details: Any) -> None:
        state = self.state or {}
        findings: list[Finding] = details.pop("findings", [])
        stop = {"kind": kind, "at": at, **details}
        if findings:
            stop["findings"] = [f.to_json() for f in findings]
            first = findings[0]
            stop["why"] = f"{first.violation.id}: {first.violation.message}; {first.violation.fix}"
            stop["objects"] = [first.violation.object, *first.violation.related]
            stop["state"] = first.change
        state.update(status="stopped", stop=stop, finishedAt=at)
        self.fleet.set_meta(REHEARSAL, state)
        self._warn(
            at,
            f"step/{details['step']}" if "step" in details else "fleet",
            "RehearsalStopped",
            f"{kind}: {stop.get('why', '')}",
        )

    def commit(self) -> None:
        """The fleet's store first (with the window), then every member (see module)."""
        with self.pace.committing():
            tick = int(self.fleet.meta("tick", 0)) + 1
            self.fleet.set_meta("tick", tick)
            self.fleet.set_meta(
                "window",
                {
                    "decisions": self.decisions,
                    "advances": {n: m.advances for n, m in self.members.items()},
                },
            )
            self.fleet.commit()
            for name in self.names:
                self.members[name].commit(tick, self.now)
            self.decisions = []


def _what(record: dict[str, Any]) -> str:
    left = f" (leaves {', '.join(record['leavePools'])})" if record.get("leavePools") else ""
    return f"{record['object']} {record['from']} -> {record['to']}{left}"
