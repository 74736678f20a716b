"""The simulated ReplicaSets (World._replicasets): every pod change is counted as it
happens, so an owner gets replacements for exactly the pods that stopped running, also a
pod created and evicted between two of the world's reactions (SPEC X2)."""

from __future__ import annotations

from pathlib import Path

from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.openshift.world import OpenShiftWorld
from kupgrade.sim.profile import Budget, Pool, Profile, Spec, Workload
from kupgrade.sim.store import Store
from kupgrade.sim.world import World

SPEC = Spec(
    seed=3,
    pools=[Pool("master", 3, max_unavailable=1), Pool("worker", 4, max_unavailable=1)],
    workloads=[Workload("web", "shop", 4, pdb=Budget(max_unavailable=1))],
)


def _world(tmp_path: Path) -> tuple[SimCluster, World]:
    root = create_cluster(tmp_path, "c", Profile(spec=SPEC))
    sim = SimCluster(Store(root / "cluster.db"))
    return sim, OpenShiftWorld(sim, SPEC)


def _running(sim: SimCluster) -> list[str]:
    return sorted(
        p["metadata"]["name"]
        for p in sim.list("Pod")
        if p["metadata"].get("namespace") == "shop" and not p["metadata"].get("deletionTimestamp")
    )


def test_a_pod_created_and_evicted_before_the_next_reaction_is_replaced(tmp_path: Path) -> None:
    sim, world = _world(tmp_path)
    world.react()
    first = _running(sim)
    assert len(first) == 4  # the profile's pods, nothing missing
    sim.remove("Pod", first[0], "shop")  # gone at once: the owner is one short
    world.react()
    second = _running(sim)
    (created,) = set(second) - set(first)
    # The replacement is evicted before the world reacts again (its node's drain came
    # first): the owner is short again and gets another, though the world never saw the
    # replacement running.
    sim.delete("Pod", created, "shop")
    world.react()
    third = _running(sim)
    assert len(third) == 4 and created not in third
    assert len(set(third) - set(second)) == 1


def test_ready_pods_create_nothing(tmp_path: Path) -> None:
    sim, world = _world(tmp_path)
    world.react()
    before = sorted(p["metadata"]["name"] for p in sim.list("Pod"))
    for name in _running(sim):
        world.fire(["pod-ready", "shop", name])
    world.react()
    assert sorted(p["metadata"]["name"] for p in sim.list("Pod")) == before
