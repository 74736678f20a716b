"""Simulated distributed-cloud clusters for tests: made from a profile in a temporary
home, upgraded by the real controller in the real run loop, read back from events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from kupgrade.controllers.gdc.request import request_upgrade
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.loop import Outcome
from kupgrade.sim.profile import Gdc, Pool, Profile, Spec
from kupgrade.sim.store import Store
from tests.support.sim import runner as sim_loop


def gdc_spec(
    version: str, *, role: str = "standalone", pools: list[Pool] | None = None, **gdc: Any
) -> Spec:
    """A distributed-cloud profile: one control-plane node and two workers by default."""
    return Spec(
        version=version,
        platform="gdc",
        gdc=Gdc(role=role, **gdc),
        pools=pools or [Pool("control-plane", 1), Pool("worker", 2)],
    )


def make(home: Path, name: str, spec: Spec) -> Store:
    create_cluster(home, name, Profile(spec=spec))
    return Store(home / "clusters" / name / "cluster.db")


def rehearse(
    home: Path, name: str, spec: Spec, to: str, max_seconds: float = 14 * 86400.0, **request: Any
) -> tuple[Store, Outcome]:
    """Create the cluster, ask for `to` and run the controller until it is done."""
    store = make(home, name, spec)
    request_upgrade(SimCluster(store), to, bmctl=request.pop("bmctl", to), **request)
    store.commit()
    return store, sim_loop(store.path.parent, store, spec).run(max_seconds=max_seconds)


def events(store: Store, *reasons: str) -> list[dict[str, Any]]:
    return [e for e in store.events() if not reasons or e["reason"] in reasons]


def stage_times(store: Store) -> dict[str, tuple[float, float | None]]:
    """stage id -> (started, done) from the controller's events."""
    started = {e["object"][6:]: e["at"] for e in events(store, "StageStarted")}
    done = {e["object"][6:]: e["at"] for e in events(store, "StageDone")}
    return {s: (at, done.get(s)) for s, at in started.items()}


def spec_with(spec: Spec, **changes: Any) -> Spec:
    return msgspec.structs.replace(spec, **changes)
