"""An independent acceptance check for plans (conformance/skew README section 6): every
state reachable in any order the `after` lists allow is checked with the full rule sets,
and every step is judged from every such state. Exponential, so for small plans only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kupgrade.plan.kube import state
from kupgrade.skew.fleet import Fleet
from kupgrade.skew.gdc import WARNINGS, Request, apply_request, check_fleet, judge_request
from kupgrade.skew.k8s import check
from kupgrade.versions import SemVer, parse_kube


def ideals(steps: list[dict[str, Any]]) -> Iterator[frozenset[str]]:
    """Every set of steps closed under `after` (each is a state some order passes)."""
    seen: set[frozenset[str]] = set()
    todo = [frozenset[str]()]
    while todo:
        done = todo.pop()
        if done in seen:
            continue
        seen.add(done)
        yield done
        for s in steps:
            if s["id"] not in done and all(a in done for a in s["after"]):
                todo.append(done | {s["id"]})


def _enabled(steps: list[dict[str, Any]], done: frozenset[str]) -> list[dict[str, Any]]:
    return [s for s in steps if s["id"] not in done and all(a in done for a in s["after"])]


def _replay(
    steps: list[dict[str, Any]],
    done: frozenset[str],
    apply: Callable[[Any, dict[str, Any]], Any],
    start: Any,
) -> Any:
    """The state after `done`, applying steps in plan order (a topological order)."""
    now = start
    for s in steps:
        if s["id"] in done:
            now = apply(now, s)
    return now


def _gdc_request(fleet: Fleet, step: dict[str, Any]) -> Request:
    kind, _, rest = step["object"].partition("/")
    to = fleet.history.parse(step["to"])
    if kind == "nodepool":
        cluster, _, pool = rest.partition("/")
        return Request(cluster, to, pool=pool)
    return Request(rest, to, bmctl=to, leave_pools=tuple(step.get("leave_pools", [])))


def accept_gdc(fleet: Fleet, steps: list[dict[str, Any]], target: str, available: list[str]) -> int:
    """README section 6 for distributed cloud; returns the number of states checked."""
    ids = [s["id"] for s in steps]
    assert len(set(ids)) == len(ids)
    landing = {fleet.history.parse(v) for v in [*available, target]}
    states = 0
    for done in ideals(steps):
        now = _replay(steps, done, lambda f, s: apply_request(f, _gdc_request(f, s)), fleet)
        bad = [v for v in check_fleet(now) if v.id not in WARNINGS]
        assert not bad, (sorted(done), bad)
        for s in _enabled(steps, done):
            request = _gdc_request(now, s)
            assert request.to in landing, s
            current = now.clusters[request.cluster]
            assert s["from"] == str(
                current.pools[request.pool] if request.pool else current.version
            )
            verdict = judge_request(now, request)
            assert not verdict.rules, (sorted(done), s, verdict.findings)
        states += 1
    end = _replay(steps, frozenset(ids), lambda f, s: apply_request(f, _gdc_request(f, s)), fleet)
    goal = fleet.history.parse(target)
    for c in end.clusters.values():
        assert c.version == goal and all(p == goal for p in c.pools.values()), c
    return states


def accept_kube(
    cp: str,
    pools: dict[str, str],
    steps: list[dict[str, Any]],
    target: str,
    available: list[str],
    policy: str,
) -> int:
    """README section 6 for Kubernetes; returns the number of states checked."""
    versions = sorted(parse_kube(v) for v in [*available, target])
    to = parse_kube(target)

    def latest(of: SemVer) -> SemVer:
        same = [v for v in versions if (v.major, v.minor) == (of.major, of.minor) and v <= to]
        return max([*same, of])

    def apply(
        now: tuple[SemVer, dict[str, SemVer]], s: dict[str, Any]
    ) -> tuple[SemVer, dict[str, SemVer]]:
        plane, pools_now = now
        new = parse_kube(s["to"])
        if s["object"] == "control-plane":
            return new, pools_now
        return plane, {**pools_now, s["object"].removeprefix("nodepool/"): new}

    start = (parse_kube(cp), {k: parse_kube(v) for k, v in pools.items()})
    states = 0
    for done in ideals(steps):
        plane, now_pools = _replay(steps, done, apply, start)
        assert not check(state(plane, now_pools), policy), (sorted(done), plane, now_pools)
        for s in _enabled(steps, done):
            new = parse_kube(s["to"])
            if s["object"] == "control-plane":
                assert s["from"] == str(plane) and new > plane
                assert new == latest(new) or new == to, s
                if (new.major, new.minor) == (plane.major, plane.minor):
                    assert new == latest(plane), s
                else:
                    assert new.minor == plane.minor + 1 and plane == latest(plane), s
            else:
                name = s["object"].removeprefix("nodepool/")
                assert s["from"] == str(now_pools[name]) and new == plane, s
        states += 1
    plane, end_pools = _replay(steps, frozenset(s["id"] for s in steps), apply, start)
    assert plane == to and all(v == to for v in end_pools.values())
    return states
