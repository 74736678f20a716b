"""How long a fleet plan's step is forecast to take on its cluster (SPEC X2, X9), from the
cluster's profile: the nodes the step moves, each taking its slowest update and reboot
and a drain allowance, as many at once as its pool lets (a pool's maxUnavailable or a
distributed-cloud pool's concurrentNodes), plus the cluster's own checks. The forecast
leans long on purpose: a step is started only where its forecast fits a window."""

from __future__ import annotations

import math

from kupgrade.sim.profile import Pool, Spec

DRAIN_ALLOWANCE = 120.0  # seconds a node's pods take to leave, when nothing holds them
CHECKS = 600.0  # preflight checks and control-plane components, once per step
CONTROL_PLANE = ("control-plane", "master")


def _per_node(spec: Spec) -> float:
    return spec.node_phases.update[1] + spec.node_phases.reboot[1] + DRAIN_ALLOWANCE


def _size(pool: Pool) -> int:
    return pool.nodes or len(pool.machines)


def _at_once(pool: Pool, gdc: bool) -> int:
    nodes = max(1, _size(pool))
    if gdc:
        return max(1, min(pool.concurrent_nodes, nodes - pool.minimum_available))
    given = pool.max_unavailable
    if isinstance(given, str) and given.endswith("%"):
        try:
            return max(1, math.floor(nodes * float(given[:-1]) / 100))
        except ValueError:
            return 1
    return max(1, int(given or 1))


def _is_plane(pool: Pool) -> bool:
    return (pool.role or pool.name) in CONTROL_PLANE


def _pool_seconds(spec: Spec, pool: Pool) -> float:
    gdc = spec.gdc is not None
    return math.ceil(_size(pool) / _at_once(pool, gdc)) * _per_node(spec)


def step_seconds(spec: Spec, kind: str, pool: str | None, leave: list[str]) -> float:
    """The forecast of one step: `kind` cluster (every pool but `leave`), control-plane, or
    pool (the named one)."""
    pools = [p for p in spec.pools if (p.role or "worker") != "load-balancer"]
    planes = [p for p in pools if _is_plane(p)]
    workers = [p for p in pools if not _is_plane(p)]
    if kind == "pool":
        chosen = [p for p in workers if p.name == pool]
        return CHECKS + sum(_pool_seconds(spec, p) for p in chosen)
    plane = sum(_pool_seconds(spec, p) for p in planes)
    if kind == "control-plane":
        return CHECKS + plane
    moving = [_pool_seconds(spec, p) for p in workers if p.name not in leave]
    together = spec.gdc is not None and spec.gdc.concurrent_node_pools == 1
    return CHECKS + plane + (max(moving, default=0.0) if together else sum(moving))
