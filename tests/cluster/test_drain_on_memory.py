"""The one drain (cluster/drain.py) and a controller's published progress, on a cluster
held in memory (cluster/fake.py): no store, no world, only the objects put in and what the
code under test writes."""

from __future__ import annotations

from typing import Any

from kupgrade.cluster import mco
from kupgrade.cluster.drain import cordoned, evict_round, evictable, uncordoned
from kupgrade.cluster.fake import MemoryBackend
from kupgrade.cluster.objects import key_of, machine_config, pdb, pod
from kupgrade.controllers.nodes.controller import pool_progress
from kupgrade.controllers.protocol import Progress

STAMP = "2024-05-04T10:00:00Z"


def _pod(name: str, *, owner_kind: str | None = "ReplicaSet", ready: bool = True) -> Any:
    made = pod(
        name,
        "app",
        owner="web",
        labels={"app": "web"},
        node_name="w-0",
        created=STAMP,
        owner_kind=owner_kind,
    )
    made["status"]["conditions"][0]["status"] = "True" if ready else "False"
    return made


def test_an_eviction_round_lets_pods_go_until_the_budget_says_no() -> None:
    pods = [_pod(f"web-{i}") for i in range(3)]
    api = MemoryBackend([*pods, pdb("web", "app", {"app": "web"}, {"minAvailable": 2})])
    done = evict_round(api, pods)
    assert done.left == 3 and not done.terminating
    assert [str(b) for b in done.blocked] == [
        "pod/app/web-1: Cannot evict pod as it would violate the pod's disruption budget. "
        "The disruption budget web needs 2 healthy pods and has 2 currently",
        "pod/app/web-2: Cannot evict pod as it would violate the pod's disruption budget. "
        "The disruption budget web needs 2 healthy pods and has 2 currently",
    ]
    assert [p["metadata"]["name"] for p in api.list("Pod")] == ["web-1", "web-2"]
    assert [e["reason"] for e in api.events] == ["Evicted"]


def test_without_budgets_a_round_deletes_and_waits_for_what_is_terminating() -> None:
    going = _pod("web-0")
    going["metadata"]["deletionTimestamp"] = STAMP
    kept = _pod("web-1")
    api = MemoryBackend([going, kept, pdb("web", "app", {"app": "web"}, {"minAvailable": 2})])
    done = evict_round(api, [going, kept], budgets=False)
    assert [key_of(p) for p in done.terminating] == ["pod/app/web-0"] and not done.blocked
    assert api.get("Pod", "web-1", "app") is None  # deleted outright: the budget is not asked


def test_a_drain_takes_every_pod_but_daemonsets_and_mirrors() -> None:
    pods = [
        _pod("web-0"),
        _pod("agent-0", owner_kind="DaemonSet"),
        _pod("bare", owner_kind=None),
        _pod("static", owner_kind="Node"),
    ]
    pods[-1]["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    assert [p["metadata"]["name"] for p in evictable(pods, 0.0)] == ["web-0", "bare"]


def test_cordon_and_uncordon_write_copies() -> None:
    node = {"kind": "Node", "metadata": {"name": "w-0"}, "spec": {}}
    off = cordoned(node)
    assert off["spec"]["unschedulable"] is True and "unschedulable" not in node["spec"]
    assert uncordoned(off)["spec"]["unschedulable"] is False and off["spec"]["unschedulable"]


def test_a_pool_counts_towards_the_release_its_config_was_rendered_from() -> None:
    """The node controller's progress: a pool whose wanted config was rendered from an
    older release shows none of its nodes at the release being applied."""
    pool = {
        "kind": "MachineConfigPool",
        "metadata": {"name": "worker"},
        "spec": {"configuration": {"name": "rendered-old"}},
        "status": {"machineCount": 3, "updatedMachineCount": 3},
    }
    cv = {
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "status": {"desired": {"version": "4.14.27"}},
    }
    api = MemoryBackend([pool, cv, machine_config("rendered-old", "4.13.40", STAMP)])
    assert pool_progress(api) == [Progress("pool worker", 0, 3)]
    api.write(machine_config("rendered-new", "4.14.27", STAMP))
    pool["spec"]["configuration"]["name"] = "rendered-new"
    pool["status"]["updatedMachineCount"] = 1
    api.write(pool)
    assert pool_progress(api) == [Progress("pool worker", 1, 3)]
    assert (
        mco.RELEASE_IMAGE_VERSION
        in api.get("MachineConfig", "rendered-new")["metadata"]["annotations"]
    )


def test_a_memory_cluster_keeps_finalizers_watches_and_timers() -> None:
    held = {"kind": "ConfigMap", "metadata": {"name": "x", "namespace": "n", "finalizers": ["f"]}}
    api = MemoryBackend([held], now=100.0)
    changes = api.watch("ConfigMap")
    assert changes.drain() == [("ConfigMap", "n", "x")]
    api.delete("ConfigMap", "x", "n")
    assert api.get("ConfigMap", "x", "n")["metadata"]["deletionTimestamp"] == "1970-01-01T00:01:40Z"
    assert changes.drain() == [("ConfigMap", "n", "x")]
    api.requeue_at(160.0, "ConfigMap", "x", "n")
    api.advance(150.0)
    assert not changes
    api.advance(170.0)
    assert changes.drain() == [("ConfigMap", "n", "x")] and api.now() == 170.0
    api.set_state("k", {"a": 1})
    assert api.state("k") == {"a": 1} and api.changed
