"""A simulated cluster asked to update and run to the end, as the sim tests do it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kupgrade.cluster.clusterversion import request_update
from kupgrade.controllers.version.controller import Wiring
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster, model_image, release_source
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.runner import Outcome, Runner, workdir
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


def runner(root: Path, store: Store, spec: Spec) -> Runner:
    return Runner(
        store, spec, Wiring(workdir(store), lambda i, v: release_source(spec, root, i, v))
    )


def upgrade(tmp_path: Path, spec: Spec, **kw: Any) -> tuple[Store, Outcome]:
    root, store = start(tmp_path, spec)
    return store, runner(root, store, spec).run(**kw)
