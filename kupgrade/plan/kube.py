"""Upgrade plans for one Kubernetes cluster: the control plane and its node pools
(SPEC H3-H7, X1).

The control plane goes to the newest available patch of its current minor first, then
one minor per step onto the newest available patch of each (SPEC H7); the target's minor
lands on the target. A node pool moves only to the control plane's current version, and
only when staying would break a skew rule at the control plane's next step: a pool may
skip minors while skew holds, so it rolls out as rarely as possible. Moving as late as
possible and as far as possible is optimal for each pool, and pools do not constrain
one another.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kupgrade.plan.phases import Track, add_edges, check_pair, widen
from kupgrade.plan.steps import BlockedError, Plan, PlanStep, Refusal, number
from kupgrade.skew.inventory import Instance, Inventory, InventoryNode
from kupgrade.skew.k8s import check, resolve_policy
from kupgrade.skew.verdict import Violation
from kupgrade.versions import SemVer

CONTROL_PLANE = "control-plane"


@dataclass(frozen=True)
class KubeCluster:
    control_plane: SemVer
    pools: dict[str, SemVer]


def state(cp: SemVer, pools: dict[str, SemVer]) -> Inventory:
    """The inventory of a cluster whose control-plane components all run `cp` and whose
    pools' nodes run their pool's version for kubelet and kube-proxy."""
    text = str(cp)
    plane = [Instance("cp", text)]
    return Inventory(
        apiservers=plane,
        kube_controller_manager=plane,
        kube_scheduler=plane,
        nodes=[InventoryNode(name, str(v), str(v)) for name, v in pools.items()],
    )


class PoolPair:
    """SPEC H3/H6 between the control plane along its path and one node pool."""

    def __init__(self, phases: list[SemVer], policy: str) -> None:
        self.phases = phases
        self.policy = policy
        self._hold: dict[tuple[SemVer, int], list[Violation]] = {}

    def holding(self, version: SemVer, phase: int) -> list[Violation]:
        key = (version, phase)
        if key not in self._hold:
            self._hold[key] = check(state(self.phases[phase], {"pool": version}), self.policy)
        return self._hold[key]

    def hold(self, version: SemVer, phase: int) -> bool:
        return not self.holding(version, phase)

    def advance(self, version: SemVer, phase: int) -> bool:
        return self.hold(version, phase + 1)

    def hop(self, before: SemVer, after: SemVer, phase: int) -> bool:
        """Pools are replaced by drained nodes at the control plane's current version."""
        return before < after == self.phases[phase] and self.hold(after, phase)


def control_plane_chain(start: SemVer, target: SemVer, available: list[SemVer]) -> list[SemVer]:
    """SPEC H6/H7: newest patch of the current minor, then each next minor's newest."""

    def latest(of: SemVer) -> SemVer | None:
        same = [v for v in available if (v.major, v.minor) == (of.major, of.minor) and v <= target]
        return max(same) if same else None

    if start >= target:
        return []
    if (start.major, start.minor) == (target.major, target.minor):
        return [target]
    chain = []
    first = latest(start)
    if first is not None and first > start:
        chain.append(first)
    for m in range(start.minor + 1, target.minor + 1):
        stop = target if m == target.minor else latest(SemVer(start.major, m, 0))
        if stop is None:
            at = chain[-1] if chain else start
            raise BlockedError(
                Refusal.of(
                    [
                        Violation(
                            "H6.no-minor-skip",
                            CONTROL_PLANE,
                            f"the control plane at {at} cannot reach {target}: no available release of "
                            f"{start.major}.{m} to stop at (one minor per upgrade)",
                            f"add a {start.major}.{m} release to the available versions (--available)",
                        )
                    ],
                    (CONTROL_PLANE, str(at), str(target)),
                )
            )
        chain.append(stop)
    return chain


def pool_hops(pair: PoolPair, start: SemVer, last: int) -> list[int]:
    """The phases at which the pool must move (to the control plane's version then)."""
    phases, version = [], start
    for p in range(last):
        if not pair.advance(version, p) and version != pair.phases[p]:
            phases.append(p)
            version = pair.phases[p]
    if version != pair.phases[last]:
        phases.append(last)
    return phases


def plan_cluster(
    cluster: KubeCluster, target: SemVer, available: Iterable[SemVer], policy: str
) -> Plan:
    """Control plane and pools to the target, each state legal in every allowed order."""
    start = state(cluster.control_plane, cluster.pools)
    resolve_policy(policy, start)  # a bad policy name is the user's mistake, said first
    problems = check(start, policy)
    if problems:
        return Plan([], refused=Refusal.illegal_start(problems, "cluster"))
    past = [
        (n, v)
        for n, v in [(CONTROL_PLANE, cluster.control_plane), *cluster.pools.items()]
        if v > target
    ]
    if past:
        name, version = past[0]
        obj = name if name == CONTROL_PLANE else f"nodepool/{name}"
        return Plan([], refused=Refusal.past_target("H6.order", obj, version, target))
    try:
        chain = control_plane_chain(cluster.control_plane, target, sorted(set(available)))
    except BlockedError as blocked:
        return Plan([], refused=blocked.refusal)
    return _assemble(cluster, chain, policy)


def _assemble(cluster: KubeCluster, chain: list[SemVer], policy: str) -> Plan:
    phases = [cluster.control_plane, *chain]
    last = len(chain)
    pair = PoolPair(phases, policy)
    leader = [f"cp#{i}" for i in range(1, last + 1)]
    after: dict[str, list[str]] = {s: [leader[i - 1]] if i else [] for i, s in enumerate(leader)}
    keyed: list[tuple[tuple[int, ...], PlanStep]] = []
    plan = Plan([], states_checked=last + 1)
    tracks: list[tuple[str, Track[SemVer]]] = []
    for name, version in cluster.pools.items():
        moves = pool_hops(pair, version, last)
        versions = [version, *(phases[p] for p in moves)]
        track = widen(pair, versions, moves, last)
        plan.states_checked += check_pair(pair, track, last, f"nodepool/{name}")
        plan.pool_rollouts += len(moves)
        hops = [f"{name}#{j}" for j in range(1, len(moves) + 1)]
        add_edges(after, track, leader, hops)
        tracks.append((name, track))
    for u, (name, track) in enumerate(tracks):
        for j, window in enumerate(track.windows):
            step = PlanStep(
                f"{name}#{j + 1}",
                f"nodepool/{name}",
                str(track.versions[j]),
                str(track.versions[j + 1]),
                after.get(f"{name}#{j + 1}", []),
            )
            keyed.append(((window.lo, 1, u, j), step))
    for i, step_id in enumerate(leader):
        step = PlanStep(step_id, CONTROL_PLANE, str(phases[i]), str(phases[i + 1]), after[step_id])
        keyed.append(((i + 1, 0, 0, 0), step))
    plan.steps = number(keyed)
    return plan
