"""Fleet plans for distributed-cloud clusters (SPEC G2-G4, X1).

Each management group (a management cluster and its user clusters) is planned on its own;
standalone clusters are groups of one. The management cluster's path is fixed first: one
release-line minor per step, landing on the newest available release of each minor (a
higher manager only relaxes what its users may do), with one optional first step to the
newest patch of its current minor when its users need somewhere to land. Given that
path, each user cluster is independent of the others: a breadth-first search over
(manager phase, user version) gives it the fewest hops. Node pools stay behind as long as
the rules allow (a pool may skip minors), so they roll out as rarely as possible.

The plan found is then checked pair by pair in every order its `after` lists allow
(kupgrade.plan.phases), which is what `states_checked` counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from kupgrade.plan.phases import Track, add_edges, check_pair, widen
from kupgrade.plan.steps import BlockedError, Plan, PlanStep, Refusal, number
from kupgrade.skew.fleet import Cluster, Fleet, History
from kupgrade.skew.gdc import (
    WARNINGS,
    check_fleet,
    heads,
    minor_of,
    pool_rule,
    user_ready,
    user_rules,
)
from kupgrade.skew.verdict import Violation
from kupgrade.versions import GdcVersion

Minor = tuple[int, int]


def _minor(v: GdcVersion) -> Minor:
    return (v.major, v.minor)


@dataclass(frozen=True)
class Goal:
    """Where the fleet goes and the releases it may land on (the target always)."""

    target: GdcVersion
    available: tuple[GdcVersion, ...]

    @staticmethod
    def of(target: str, available: Iterable[str], history: History) -> Goal:
        to = history.field(target, "--to")
        versions = {history.field(v, "--available") for v in available} | {to}
        return Goal(to, tuple(sorted(v for v in versions if v <= to)))

    def latest_in(self, minor: Minor) -> GdcVersion | None:
        same = [v for v in self.available if _minor(v) == minor]
        return same[-1] if same else None


class _MissingMinorError(Exception):
    """No available release of a minor a cluster must pass through."""

    def __init__(self, minor: Minor, at: GdcVersion) -> None:
        super().__init__(f"{minor}")
        self.minor, self.at = minor, at


def leader_chain(start: GdcVersion, goal: Goal, history: History) -> list[GdcVersion]:
    """One release-line minor per step, to the newest available release of each (SPEC G3),
    the target's minor landing on the target."""
    if start >= goal.target:
        return []
    line = history.line
    here, there = line.index(_minor(start)), line.index(_minor(goal.target))
    chain, at = [], start
    for minor in line.minors[here + 1 : there + 1] if there > here else [_minor(start)]:
        landing = goal.target if minor == _minor(goal.target) else goal.latest_in(minor)
        if landing is None:
            raise _MissingMinorError(minor, at)
        chain.append(landing)
        at = landing
    return chain


class UserPair:
    """SPEC G2/G3 between a management cluster along its path and one user cluster;
    answers are shared by every user of the group (they only depend on versions)."""

    def __init__(self, manager: Cluster, phases: list[GdcVersion], history: History) -> None:
        self.at = [replace(manager, version=v, pools={}) for v in phases]
        self.history = history
        self._hold: dict[tuple[GdcVersion, int], bool] = {}
        self._advance: dict[tuple[GdcVersion, int], bool] = {}

    def user(self, version: GdcVersion, name: str = "user") -> Cluster:
        return Cluster(name, "user", version, self.at[0].name)

    def holding(self, version: GdcVersion, phase: int, name: str = "user") -> list[Violation]:
        return list(user_rules(self.at[phase], self.user(version, name), self.history))

    def moving(self, version: GdcVersion, phase: int, name: str = "user") -> list[Violation]:
        """What the manager's step from `phase` breaks with this user at `version`."""
        here, there = self.at[phase], self.at[phase + 1]
        out = []
        if _minor(here.version) != _minor(there.version):
            late = user_ready(here, self.user(version, name), there.version, self.history)
            out += [late] if late else []
        return out + self.holding(version, phase + 1, name)

    def hold(self, version: GdcVersion, phase: int) -> bool:
        key = (version, phase)
        if key not in self._hold:
            self._hold[key] = not self.holding(version, phase)
        return self._hold[key]

    def advance(self, version: GdcVersion, phase: int) -> bool:
        key = (version, phase)
        if key not in self._advance:
            self._advance[key] = not self.moving(version, phase)
        return self._advance[key]

    def hop(self, before: GdcVersion, after: GdcVersion, phase: int) -> bool:
        return (
            before < after and self.history.distance(before, after) <= 1 and self.hold(after, phase)
        )


@dataclass
class _Search:
    """A user's fewest hops behind its manager, or how far it got."""

    hops: list[tuple[int, GdcVersion]] | None  # (manager phase, version landed on)
    furthest: tuple[int, GdcVersion]


def user_hops(pair: UserPair, start: GdcVersion, goal: Goal, last: int) -> _Search:
    """Breadth-first over (manager phase, user version): a manager step costs the user
    nothing, a hop costs one; hops try the newest release first."""
    parent: dict[tuple[int, GdcVersion], tuple[tuple[int, GdcVersion], bool] | None] = {}

    def close(states: list[tuple[int, GdcVersion]]) -> list[tuple[int, GdcVersion]]:
        out = []
        for state in states:
            out.append(state)
            phase, version = state
            while phase < last and pair.advance(version, phase):
                if (phase + 1, version) in parent:
                    break
                parent[(phase + 1, version)] = ((phase, version), False)
                phase += 1
                out.append((phase, version))
        return out

    parent[(0, start)] = None
    layer = close([(0, start)])
    goal_state = (last, goal.target)
    while goal_state not in parent and layer:
        grown = []
        for phase, version in layer:
            for after in reversed(goal.available):
                if (
                    after > version
                    and (phase, after) not in parent
                    and pair.hop(version, after, phase)
                ):
                    parent[(phase, after)] = ((phase, version), True)
                    grown.append((phase, after))
        layer = close(grown)
    if goal_state not in parent:
        return _Search(None, max(parent))
    hops = []
    state: tuple[int, GdcVersion] | None = goal_state
    while state is not None and parent[state] is not None:
        link = parent[state]
        assert link is not None
        if link[1]:
            hops.append(state)
        state = link[0]
    return _Search(hops[::-1], goal_state)


@dataclass
class _Group:
    manager: Cluster
    chain: list[GdcVersion]
    tracks: dict[str, Track[GdcVersion]]
    states: int


def _plan_group(fleet: Fleet, head: str, goal: Goal) -> _Group:
    """The group's cheapest plan; raises BlockedError when there is none."""
    manager = fleet.clusters[head]
    users = [fleet.clusters[u] for u in fleet.users.get(head, [])]
    try:
        base = leader_chain(manager.version, goal, fleet.history)
    except _MissingMinorError as missing:
        raise BlockedError(_missing_minor(manager, missing, goal)) from None
    chains = [base]
    latest = goal.latest_in(_minor(manager.version))
    if users and latest and manager.version < latest and _minor(latest) != _minor(goal.target):
        chains.append([latest, *base])
    best: _Group | None = None
    first_failure: BlockedError | None = None
    for chain in chains:
        try:
            group = _follow(fleet, manager, users, chain, goal)
        except BlockedError as blocked:
            first_failure = first_failure or blocked
            continue
        if best is None or _cost(group) < _cost(best):
            best = group
    if best is None:
        assert first_failure is not None
        raise first_failure
    return best


def _cost(group: _Group) -> int:
    return len(group.chain) + sum(len(t.windows) for t in group.tracks.values())


def _follow(
    fleet: Fleet, manager: Cluster, users: list[Cluster], chain: list[GdcVersion], goal: Goal
) -> _Group:
    phases = [manager.version, *chain]
    pair = UserPair(manager, phases, fleet.history)
    last = len(chain)
    found: dict[GdcVersion, tuple[Track[GdcVersion], int]] = {}
    tracks, states = {}, 0 if users else last + 1  # pairs cover the leader's states
    for user in users:
        if user.version not in found:
            search = user_hops(pair, user.version, goal, last)
            if search.hops is None:
                raise BlockedError(_stuck(pair, user, search.furthest, phases, goal))
            versions = [user.version, *(v for _, v in search.hops)]
            track = widen(pair, versions, [p for p, _ in search.hops], last)
            found[user.version] = (track, check_pair(pair, track, last, f"cluster/{user.name}"))
        track, checked = found[user.version]
        tracks[user.name] = track
        states += checked
    return _Group(manager, chain, tracks, states)


def _missing_minor(cluster: Cluster, missing: _MissingMinorError, goal: Goal) -> Refusal:
    """A cluster would have to skip a minor no available release lets it stop at."""
    name = f"{missing.minor[0]}.{missing.minor[1]}"
    obj = f"cluster/{cluster.name}"
    violation = Violation(
        "G3.skip-minor",
        obj,
        f"{obj} at {missing.at} cannot reach {goal.target}: no available release of {name} "
        "to stop at (one release-line minor per upgrade)",
        f"add a {name} release to the available versions (--available)",
    )
    return Refusal.of([violation], (obj, str(missing.at), str(goal.target)))


def _stuck(
    pair: UserPair,
    user: Cluster,
    furthest: tuple[int, GdcVersion],
    phases: list[GdcVersion],
    goal: Goal,
) -> Refusal:
    """Why a user cluster cannot follow its manager: the manager step it blocks, or the
    hop it cannot make."""
    phase, version = furthest
    if phase + 1 < len(phases):
        found = pair.moving(version, phase, user.name)
        step = (f"cluster/{pair.at[0].name}", str(phases[phase]), str(phases[phase + 1]))
        refusal = Refusal.of(found, step)
        line = pair.history.line.minors
        here = line.index(_minor(version))
        need = ".".join(map(str, line[here + 1])) if here + 1 < len(line) else minor_of(version)
        refusal.fix += (
            f"; no available release gets cluster/{user.name} (at {version}) there in time: "
            f"it moves one minor at a time, so add a {need} release at or below "
            f"{phases[phase]} to the available versions"
        )
        return refusal
    try:
        leader_chain(version, goal, pair.history)
        raise AssertionError("a user that can follow its chain is not stuck")
    except _MissingMinorError as missing:
        return _missing_minor(user, missing, goal)


def _pools(
    cluster: Cluster, path: list[GdcVersion], history: History
) -> tuple[list[list[str]], int, int]:
    """Which pools each of the cluster's steps leaves behind (SPEC G4: as long as the rules
    allow; the last step takes every pool to the target), with rollouts and states."""
    current = dict(cluster.pools)
    leaves, rollouts, states = [], 0, 0
    for i, version in enumerate(path):
        at = replace(cluster, version=version)
        left = []
        for name, pool in current.items():
            states += 1
            if i + 1 < len(path) and not any(pool_rule(at, name, pool, history)):
                left.append(name)
            elif pool != version:
                current[name] = version
                rollouts += 1
        leaves.append(left)
    return leaves, rollouts, states


def plan_fleet(fleet: Fleet, goal: Goal) -> Plan:
    """Every cluster to the target, each state legal in every order the plan allows."""
    problems = [v for v in check_fleet(fleet) if v.id not in WARNINGS]
    if problems:
        return Plan([], refused=Refusal.illegal_start(problems, "fleet"))
    for cluster in fleet.clusters.values():
        if cluster.version > goal.target:
            obj = f"cluster/{cluster.name}"
            refusal = Refusal.past_target("G3.downgrade", obj, cluster.version, goal.target)
            return Plan([], refused=refusal)
    keyed: list[tuple[tuple[int, ...], PlanStep]] = []
    plan = Plan([])
    for g, head in enumerate(heads(fleet)):
        try:
            group = _plan_group(fleet, head, goal)
        except BlockedError as blocked:
            plan.refused = blocked.refusal
            return plan
        keyed += _steps(fleet, group, g, plan)
    plan.steps = number(keyed)
    return plan


def _steps(
    fleet: Fleet, group: _Group, g: int, plan: Plan
) -> list[tuple[tuple[int, ...], PlanStep]]:
    manager = group.manager
    out: list[tuple[tuple[int, ...], PlanStep]] = []
    plan.states_checked += group.states
    leader = [f"{manager.name}#{i}" for i in range(1, len(group.chain) + 1)]
    after: dict[str, list[str]] = {}
    for u, (name, track) in enumerate(group.tracks.items()):
        hops = [f"{name}#{j}" for j in range(1, len(track.windows) + 1)]
        add_edges(after, track, leader, hops)
        path = list(track.versions[1:])
        out += _catch_up(fleet.clusters[name], path, (g, 0, 2, u), plan)
        leaves, rollouts, states = _pools(fleet.clusters[name], path, fleet.history)
        plan.pool_rollouts += rollouts
        plan.states_checked += states
        for j, (window, leave) in enumerate(zip(track.windows, leaves, strict=True)):
            step = PlanStep(
                hops[j],
                f"cluster/{name}",
                str(track.versions[j]),
                str(track.versions[j + 1]),
                after.get(hops[j], []),
                leave,
            )
            out.append(((g, window.lo, 1, u, j), step))
    out += _catch_up(manager, group.chain, (g, 0, 2, -1), plan)
    leaves, rollouts, states = _pools(manager, group.chain, fleet.history)
    plan.pool_rollouts += rollouts
    plan.states_checked += states
    versions = [manager.version, *group.chain]
    for i, leave in enumerate(leaves):
        step = PlanStep(
            leader[i],
            f"cluster/{manager.name}",
            str(versions[i]),
            str(versions[i + 1]),
            [*([leader[i - 1]] if i else []), *after.get(leader[i], [])],
            leave,
        )
        out.append(((g, i + 1, 0, 0, 0), step))
    return out


def _catch_up(
    cluster: Cluster, path: list[GdcVersion], key: tuple[int, ...], plan: Plan
) -> list[tuple[tuple[int, ...], PlanStep]]:
    """A cluster already at the target still brings its lagging pools there, one
    node-pool step each (nothing else depends on them)."""
    if path:
        return []
    out = []
    for i, (pool, version) in enumerate(cluster.pools.items()):
        if version != cluster.version:
            obj = f"nodepool/{cluster.name}/{pool}"
            out.append(((*key, i), PlanStep(obj, obj, str(version), str(cluster.version))))
            plan.pool_rollouts += 1
            plan.states_checked += 1
    return out
