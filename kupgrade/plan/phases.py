"""A leader moving through phases and a follower hopping behind it (SPEC X1).

Every plan kupgrade makes has this shape: a management cluster (or a control plane)
takes its steps one after another, and each of its user clusters (or node pools) takes
its own hops in between. The rules only ever relate the leader to one follower at a
time, so a plan is legal in *every* order its `after` lists allow exactly when, for each
leader/follower pair, every point of the grid (leader steps done, follower hops done)
that the order can reach is a legal state and every move between such points is
allowed. Checking pairs instead of whole-fleet orderings keeps the check linear in the
fleet and exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

V = TypeVar("V")
V_contra = TypeVar("V_contra", contravariant=True)


class Pair(Protocol[V_contra]):
    """The rules between a leader at phase p (after its p-th step) and one follower."""

    def hold(self, version: V_contra, phase: int) -> bool:
        """May the follower sit at `version` while the leader is at `phase`?"""
        ...

    def advance(self, version: V_contra, phase: int) -> bool:
        """May the leader take its step from `phase` to `phase + 1` with the follower at
        `version` (its own rules, and the state it leaves)?"""
        ...

    def hop(self, before: V_contra, after: V_contra, phase: int) -> bool:
        """May the follower hop from `before` to `after` while the leader is at `phase`?"""
        ...


@dataclass(frozen=True)
class Window:
    """A follower hop may run after the leader's step `lo` and before its step `hi + 1`."""

    lo: int
    hi: int


@dataclass(frozen=True)
class Track(Generic[V]):
    """A follower's versions (the start first) and, per hop, its window."""

    versions: Sequence[V]
    windows: Sequence[Window]


def widen(pair: Pair[V], versions: Sequence[V], phases: Sequence[int], last: int) -> Track[V]:
    """Start from hops pinned to the phases a sequential plan gave them and let each one
    move earlier and later as far as the rules allow, so unrelated work runs in parallel.

    Holding version i spans [lo of hop i, hi of hop i+1]; each extension below checks
    exactly the phases and leader steps it adds to such a span.
    """
    n = len(phases)
    lo, hi = list(phases), list(phases)
    for i in range(n):
        floor = lo[i - 1] if i else 0
        before, after = versions[i], versions[i + 1]
        while (
            lo[i] > floor and pair.hop(before, after, lo[i] - 1) and pair.advance(after, lo[i] - 1)
        ):
            lo[i] -= 1
    for i in reversed(range(n)):
        ceiling = hi[i + 1] if i + 1 < n else last
        before, after = versions[i], versions[i + 1]
        while (
            hi[i] < ceiling and pair.advance(before, hi[i]) and pair.hop(before, after, hi[i] + 1)
        ):
            hi[i] += 1
    return Track(versions, [Window(a, b) for a, b in zip(lo, hi, strict=True)])


class PlanBugError(RuntimeError):
    """A plan failed its own check: a bug in a planner, never a user's mistake."""


def check_pair(pair: Pair[V], track: Track[V], last: int, what: str) -> int:
    """Check every state and move the order allows; return how many states were checked."""
    n = len(track.windows)
    need_leader = [0] * (n + 1)  # leader steps a follower at j hops must have seen
    for j, window in enumerate(track.windows, start=1):
        need_leader[j] = max(need_leader[j - 1], window.lo)
    need_follower = [0] * (last + 1)  # follower hops the leader at phase i must have seen
    for j, window in enumerate(track.windows, start=1):
        if window.hi + 1 <= last:
            need_follower[window.hi + 1] = max(need_follower[window.hi + 1], j)
    for i in range(1, last + 1):
        need_follower[i] = max(need_follower[i], need_follower[i - 1])

    def reachable(i: int, j: int) -> bool:
        return i <= last and j <= n and i >= need_leader[j] and j >= need_follower[i]

    states = 0
    for i in range(last + 1):
        for j in range(n + 1):
            if not reachable(i, j):
                continue
            states += 1
            version = track.versions[j]
            if not pair.hold(version, i):
                raise PlanBugError(f"{what}: illegal state at leader phase {i}, follower {version}")
            if reachable(i + 1, j) and not pair.advance(version, i):
                raise PlanBugError(
                    f"{what}: leader step {i + 1} refused with follower at {version}"
                )
            if reachable(i, j + 1) and not pair.hop(version, track.versions[j + 1], i):
                raise PlanBugError(f"{what}: follower hop {j + 1} refused at leader phase {i}")
    return states


def add_edges(
    out: dict[str, list[str]], track: Track[V], leader: Sequence[str], hops: Sequence[str]
) -> None:
    """Add to `out` the `after` entries this pair needs, for the follower's hops and the
    leader's steps (leader[i - 1] is the leader's step into phase i)."""
    windows = track.windows
    for j, (step, window) in enumerate(zip(hops, windows, strict=True)):
        needs = out.setdefault(step, [])
        if j:
            needs.append(hops[j - 1])
        if window.lo >= 1 and (j == 0 or window.lo > windows[j - 1].lo):
            needs.append(leader[window.lo - 1])
        nxt = window.hi + 1
        if nxt <= len(leader) and (j + 1 == len(windows) or windows[j + 1].hi > window.hi):
            out.setdefault(leader[nxt - 1], []).append(step)
