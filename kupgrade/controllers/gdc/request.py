"""What `kupgrade upgrade` asks of a distributed-cloud cluster, as `bmctl upgrade
cluster` (or a node pool's selective upgrade) would: the target, the tool's version, the
pools left behind and how a self-managed cluster upgrades (SPEC G3, G4, G10).

The skew rules are checked before this is written (SPEC X4); from here on the upgrade
controller carries it out, step by step, from what is stored.
"""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.gdc import namespace_of
from kupgrade.errors import InputError

STATE = "gdc"


def the_cluster(api: Backend) -> dict[str, Any]:
    """The Cluster object of this distributed-cloud cluster."""
    found = api.list("Cluster")
    if not found:
        raise InputError(
            "this cluster has no distributed-cloud Cluster object",
            hint="create it with `kupgrade cluster create NAME --platform gdc`",
        )
    return found[0]


def in_progress(api: Backend) -> dict[str, Any] | None:
    state = api.state(STATE)
    if state and not state.get("completed") and not state.get("failed"):
        return dict(state)
    return None


def request_upgrade(
    api: Backend,
    to: str,
    *,
    bmctl: str,
    pool: str | None = None,
    leave_pools: list[str] | None = None,
    method: str = "in-place",
) -> dict[str, Any]:
    """Record the upgrade for the controller; refused while another one runs."""
    running = in_progress(api)
    if running is not None:
        raise InputError(
            f"an upgrade to {running['target']} is in progress",
            field="--to",
            hint="wait for it with `kupgrade controller run`",
        )
    cluster = the_cluster(api)
    name = cluster["metadata"]["name"]
    serial = int((api.state(STATE) or {}).get("serial", 0)) + 1
    request = {
        "serial": serial,
        "cluster": name,
        "namespace": namespace_of(name),
        "target": to,
        "from": cluster["status"].get("anthosBareMetalVersion", ""),
        "bmctl": bmctl,
        "pool": pool,
        "leavePools": sorted(leave_pools or []),
        "method": method,
        "requestedAt": api.now(),
        "stages": {},
        "fields": [],
    }
    api.set_state(STATE, request)
    api.record(
        f"cluster/{name}",
        "UpgradeRequested",
        f"upgrade {'node pool ' + pool if pool else 'cluster'} to {to} with bmctl {bmctl}",
    )
    return request
