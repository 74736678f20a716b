"""What `kupgrade upgrade` asks of a distributed-cloud cluster, as `bmctl upgrade
cluster` (or a node pool's selective upgrade) would: the target, the tool's version, the
pools left behind and how a self-managed cluster upgrades (SPEC G3, G4, G10).

The skew rules are checked before this is written (SPEC X4); from here on the upgrade
controller carries it out, step by step, from what is stored.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.gdc import namespace_of
from kupgrade.controllers import saved
from kupgrade.errors import InputError

STATE = "gdc"


class StageRecord(msgspec.Struct):
    """When a stage started and, once it has, finished (virtual clock seconds)."""

    started: float
    done: float | None = None


class GdcUpgrade(msgspec.Struct, kw_only=True, rename="camel"):
    """One upgrade as `kupgrade upgrade` asked for it and the controller carries it out:
    the request (serial to completed_at's left) and how far it has come."""

    serial: int
    cluster: str
    namespace: str
    target: str
    source: str = msgspec.field(name="from", default="")  # the version it started from
    bmctl: str
    pool: str | None = None  # a node pool's selective upgrade; None for the cluster
    leave_pools: list[str] = msgspec.field(default_factory=list)
    method: str = "in-place"  # or "bootstrap"
    requested_at: float
    stages: dict[str, StageRecord] = msgspec.field(default_factory=dict)
    fields: list[str] = msgspec.field(default_factory=list)  # status fields written (G9)
    wake_at: float | None = None  # the wake the controller has queued
    pivoted: bool = False  # the bootstrap cluster holds the resources (G10)
    failed: str = ""  # why the upgrade stopped
    completed: bool = False
    completed_at: float | None = None

    @property
    def running(self) -> bool:
        return not self.completed and not self.failed


def upgrade_record(api: Backend) -> GdcUpgrade | None:
    """The upgrade under way or last carried out, if any."""
    return saved.load(api, STATE, GdcUpgrade)


def the_cluster(api: Backend) -> dict[str, Any]:
    """The Cluster object of this distributed-cloud cluster."""
    found = api.list("Cluster")
    if not found:
        raise InputError(
            "this cluster has no distributed-cloud Cluster object",
            hint="create it with `kupgrade cluster create NAME --platform gdc`",
        )
    return found[0]


def in_progress(api: Backend) -> GdcUpgrade | None:
    """The upgrade under way, if one is."""
    found = upgrade_record(api)
    return found if found is not None and found.running else None


def request_upgrade(
    api: Backend,
    to: str,
    *,
    bmctl: str,
    pool: str | None = None,
    leave_pools: list[str] | None = None,
    method: str = "in-place",
) -> GdcUpgrade:
    """Record the upgrade for the controller; refused while another one runs."""
    running = in_progress(api)
    if running is not None:
        raise InputError(
            f"an upgrade to {running.target} is in progress",
            field="--to",
            hint="wait for it with `kupgrade controller run`",
        )
    cluster = the_cluster(api)
    name = cluster["metadata"]["name"]
    last = upgrade_record(api)
    request = GdcUpgrade(
        serial=(last.serial if last is not None else 0) + 1,
        cluster=name,
        namespace=namespace_of(name),
        target=to,
        source=cluster["status"].get("anthosBareMetalVersion", ""),
        bmctl=bmctl,
        pool=pool,
        leave_pools=sorted(leave_pools or []),
        method=method,
        requested_at=api.now(),
    )
    saved.save(api, STATE, request)
    api.record(
        f"cluster/{name}",
        "UpgradeRequested",
        f"upgrade {'node pool ' + pool if pool else 'cluster'} to {to} with bmctl {bmctl}",
    )
    return request
