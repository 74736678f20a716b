"""A simulated cluster asked to update and run to the end, as the sim tests do it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kupgrade.cluster.clusterversion import request_update
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.loop import Local, Loop, Outcome
from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.platforms import platform_of
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.store import Store

TARGET = "4.14.27"


def start(tmp_path: Path, spec: Spec) -> tuple[Path, Store]:
    root = create_cluster(tmp_path, "c", Profile(spec=spec))
    store = Store(root / "cluster.db")
    ask_for_target(root, store, spec)
    return root, store


def ask_for_target(root: Path, store: Store, spec: Spec) -> None:
    """`oc adm upgrade --to-image` the model release of TARGET, committed."""
    request_update(
        SimCluster(store), {"version": TARGET, "image": model_image(spec, TARGET, root)}, False
    )
    store.commit()


def runner(root: Path, store: Store, spec: Spec) -> Loop[Local]:
    """The cluster's loop in this process, without the update service's periodic check
    (the tests ask for their target by image): the world and the controllers alone."""
    platform = platform_of(spec)
    world = platform.world(SimCluster(store), spec)
    return Loop(Local(store, world), platform, spec, root)


def upgrade(tmp_path: Path, spec: Spec, **kw: Any) -> tuple[Store, Outcome]:
    root, store = start(tmp_path, spec)
    return store, runner(root, store, spec).run(**kw)
