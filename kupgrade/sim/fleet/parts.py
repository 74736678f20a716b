"""A fleet rehearsal cut into parts that no rule ties, each rehearsed on its own virtual
clock (in a Ray task, sim/fleet/engines.py), and the parts' results merged into the one
rehearsal a single process would have run.

Where a fleet may be cut. Members touch one another only through (SPEC X1, X5):
- the skew rules: a change to a member is checked against the members of its scope
  (a distributed-cloud management cluster and its users, G2-G4; a Kubernetes cluster
  alone, H2-H6), so a scope is never cut;
- the plan: a step after a step of another member ties the two;
- shared slots (`--max-parallel`) and a rollout's stages, windows and gates: these tie
  every member, and such a fleet is one part.
Parts cut this way evolve exactly as they do inside the one run: a member advances only
at its own events, and a step starts only when its own part's steps end. The merged
report is the single run's: each step's times, each cluster's versions and downtime at
the fleet's last instant, the states recorded, and the last instant itself (the latest
part's). A part that stops (a broken rule, a refused or failed step, a stall) would
have stopped the other parts at that instant too: the driver then runs the fleet in
one process instead (engines.py), so a stopped rehearsal is decided by the same loop.
"""

from __future__ import annotations

import heapq
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kupgrade.sim.fleet.rehearsal import REHEARSAL, STEPS, Rehearsal
from kupgrade.sim.fleet.shipping import Shipped, opened_members, pack
from kupgrade.sim.store import Store

FLEET_KEYS = ("now", "progressAt", "tick")


@dataclass
class Cut:
    """The fleet's parts (member names, each part sorted, parts by their first name) and,
    when it is one part, what ties it whole."""

    parts: list[list[str]]
    whole: str | None = None


def partition(rehearsal: Rehearsal) -> Cut:
    """The finest cut of the fleet no rule, plan edge or shared limit crosses."""
    names = rehearsal.names
    state = rehearsal.state or {}
    if rehearsal.pacer is not None:
        return Cut([list(names)], "a rollout's stages, windows and gates tie every cluster")
    if int(state.get("maxParallel") or 0):
        return Cut([list(names)], "--max-parallel shares its slots among every cluster")
    parent = {n: n for n in names}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    def tie(a: str, b: str) -> None:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for name in names:
        for other in rehearsal.monitor.rules.scope(name):
            if other in parent:
                tie(name, other)
    records = rehearsal.steps
    for record in records.values():
        for after in record.get("after") or []:
            tie(record["cluster"], records[after]["cluster"])
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(root(name), []).append(name)
    parts = sorted(groups.values(), key=lambda g: g[0])
    return Cut(parts, None if len(parts) > 1 else "the rules and the plan tie every cluster")


def bins(rehearsal: Rehearsal, cut: Cut, count: int) -> Cut:
    """The parts packed into at most `count` bins of about equal work (each member
    weighs its nodes; the heaviest part first into the lightest bin): a union of parts no
    rule ties is itself such a part, and a task per bin keeps a few thousand small
    clusters from costing a few thousand task starts."""
    if count >= len(cut.parts):
        return cut
    weight = {n: 1 + len(rehearsal.members[n].store.list("Node")) for n in rehearsal.names}
    loads: list[tuple[int, int, list[str]]] = [(0, i, []) for i in range(max(1, count))]
    heapq.heapify(loads)
    for part in sorted(cut.parts, key=lambda p: (-sum(weight[n] for n in p), p[0])):
        load, i, names = heapq.heappop(loads)
        heapq.heappush(loads, (load + sum(weight[n] for n in part), i, [*names, *part]))
    packed = [sorted(names) for _, _, names in loads if names]
    return Cut(sorted(packed, key=lambda p: p[0]), cut.whole)


@dataclass
class Job:
    """One part to rehearse: its members as bytes and the fleet's state cut to them."""

    index: int
    info: dict[str, Any]
    meta: dict[str, Any]
    members: list[Shipped] = field(default_factory=list)


@dataclass
class Result:
    """What a part's rehearsal left: the fleet's state of its steps, the events it
    recorded, and its members as bytes."""

    index: int
    state: dict[str, Any]
    steps: dict[str, dict[str, Any]]
    meta: dict[str, Any]
    events: list[dict[str, Any]]
    members: list[Shipped]


def jobs(rehearsal: Rehearsal, cut: Cut) -> list[Job]:
    """Each part's job, taken from the committed stores (the rehearsal has begun)."""
    state = rehearsal.state or {}
    records = rehearsal.steps
    out = []
    for index, names in enumerate(cut.parts):
        mine = set(names)
        steps = {i: r for i, r in records.items() if r["cluster"] in mine}
        meta = {k: rehearsal.fleet.meta(k) for k in FLEET_KEYS}
        meta[REHEARSAL] = {**state, "order": [i for i in state.get("order", []) if i in steps]}
        meta[STEPS] = steps
        shipped = [
            pack(n, rehearsal.members[n].store.path.parent, rehearsal.members[n].store.path.name)
            for n in names
        ]
        out.append(Job(index, rehearsal.info, meta, shipped))
    return out


@contextmanager
def _opened(job: Job, where: Path) -> Iterator[Rehearsal]:
    """The part's fleet and members made in `where`, as a rehearsal to go on with."""
    with ExitStack() as stack:
        fleet = Store(where / "fleet.db")
        stack.callback(fleet.close)
        for key, value in job.meta.items():
            fleet.set_meta(key, value)
        fleet.commit()
        rehearsal = Rehearsal(fleet, opened_members(job.members, where, stack), job.info)
        rehearsal.resume()  # every member is at the fleet's tick: this loads the monitor
        yield rehearsal


def rehearse_part(job: Job) -> Result:
    """Rehearse one part to its end on its own clock (a Ray task runs this)."""
    with tempfile.TemporaryDirectory(prefix="kupgrade-part-") as tmp:
        where = Path(tmp)
        with _opened(job, where) as rehearsal:
            before = len(rehearsal.fleet.events())
            rehearsal.run()
            result = Result(
                job.index,
                rehearsal.state or {},
                rehearsal.steps,
                {k: rehearsal.fleet.meta(k) for k in ("now", "progressAt")},
                rehearsal.fleet.events()[before:],
                [],
            )
        result.members = [
            pack(s.name, where / "clusters" / s.name) for s in job.members
        ]  # after the stores closed: every commit is in the file
    return result


def all_completed(results: list[Result]) -> bool:
    return all(r.state.get("status") == "completed" for r in results)


def merge(rehearsal: Rehearsal, results: list[Result]) -> None:
    """The parts' results into the fleet's store (not committed): every step's record,
    the events in time order (at one instant, part by part), the fleet's last instant
    and its completion, as the single run records them."""
    records = rehearsal.steps
    events = []
    for result in sorted(results, key=lambda r: r.index):
        records.update(result.steps)
        events += [e for e in result.events if e["reason"] != "RehearsalCompleted"]
    now = max(float(r.meta["now"]) for r in results)
    progress = max(float(r.meta.get("progressAt") or 0.0) for r in results)
    for e in sorted(events, key=lambda e: float(e["at"])):  # sorted() is stable
        rehearsal.fleet.event(e["at"], e["kind"], e["object"], e["reason"], e["message"])
    rehearsal.fleet.set_meta(STEPS, records)
    rehearsal.fleet.set_meta("now", now)
    rehearsal.fleet.set_meta("progressAt", max(progress, float(rehearsal.fleet.meta("progressAt"))))
    state = rehearsal.state or {}
    state.update(status="completed", finishedAt=now)
    rehearsal.fleet.set_meta(REHEARSAL, state)
    rehearsal.fleet.event(
        now, "Normal", "fleet", "RehearsalCompleted", f"every cluster at {state['target']}"
    )
