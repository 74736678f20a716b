"""Drains on the simulator run kubectl drain's filters under the pool's drain policy
(issue 18; kubectl pkg/drain/filters.go): DaemonSet pods stay, mirror pods are skipped,
bare pods and emptyDir pods follow the policy's --force and --delete-emptydir-data."""

from __future__ import annotations

from pathlib import Path

from kupgrade.cluster.drain import LOCAL_STORAGE_WARNING, UNMANAGED_FATAL, UNMANAGED_WARNING
from kupgrade.sim.profile import DrainPolicy, Pool, Spec, Workload
from kupgrade.sim.store import Store
from tests.support.sim import upgrade

WORKLOADS = [
    Workload("web", "shop", 4, termination_seconds=10),
    Workload("agent", "infra", kind="DaemonSet", pool="worker"),
    Workload("etcd-static", "infra", kind="StaticPod", pool="worker"),
    Workload("scratch", "shop", 2, kind="Deployment", empty_dir=True, termination_seconds=5),
    Workload("debug", "default", 1, kind="Pod", termination_seconds=5),
]


def _spec(policy: DrainPolicy) -> Spec:
    return Spec(
        pools=[Pool("master", 1), Pool("worker", 3, max_unavailable=1, drain=policy)],
        workloads=WORKLOADS,
    )


def _pods(store: Store, prefix: str) -> list[dict[str, object]]:
    return [p for p in store.list("Pod") if p["metadata"]["name"].startswith(prefix)]


def _events(store: Store, reason: str) -> list[str]:
    return [e["message"] for e in store.events() if e["reason"] == reason]


def test_the_machine_config_drain_policy(tmp_path: Path) -> None:
    store, outcome = upgrade(tmp_path, _spec(DrainPolicy()))
    assert outcome.reason == "completed"
    # Every worker was drained, yet its DaemonSet pod and its static pod's mirror stayed.
    for prefix in ("agent-", "etcd-static-"):
        pods = _pods(store, prefix)
        assert len(pods) == 3
        assert not any(p["metadata"].get("deletionTimestamp") for p in pods)  # type: ignore[union-attr]
    # The bare pod was deleted (--force) and nothing brought it back; the ReplicaSets did
    # replace their pods.
    assert _pods(store, "debug-") == []
    assert len(_pods(store, "web-")) == 4 and len(_pods(store, "scratch-")) == 2
    warnings = _events(store, "DrainWarning")
    assert any(w.startswith("ignoring DaemonSet-managed Pods: infra/agent-") for w in warnings)
    assert any(w.startswith(LOCAL_STORAGE_WARNING + ": shop/scratch-") for w in warnings)
    assert any(w == f"{UNMANAGED_WARNING}: default/debug-00000" for w in warnings)
    assert "Drained" in {e["reason"] for e in store.events()}


def test_a_policy_without_force_refuses_the_bare_pod(tmp_path: Path) -> None:
    policy = DrainPolicy(force=False)
    store, outcome = upgrade(tmp_path, _spec(policy), max_seconds=3 * 3600.0)
    assert outcome.reason == "stalled"  # an hour of refusals and nothing else: said as stuck
    (debug,) = _pods(store, "debug-")
    node = debug["spec"]["nodeName"]  # type: ignore[index]
    blocked = [
        e
        for e in store.events()
        if e["reason"] == "EvictionBlocked" and e["object"] == f"node/{node}"
    ]
    assert (
        blocked
        and blocked[0]["message"]
        == f"cannot delete {UNMANAGED_FATAL.removeprefix('cannot delete ')}: default/debug-00000"
    )
    # kubectl refuses the whole drain: nothing on that node was evicted.
    assert not [e for e in store.events() if e["reason"] == "Evicted" and node in e["message"]]
    assert any("drain exceeded timeout" in m for m in _events(store, "DrainFailed"))


def test_a_policy_that_keeps_daemonsets_fatal(tmp_path: Path) -> None:
    store, outcome = upgrade(
        tmp_path, _spec(DrainPolicy(ignore_daemonsets=False)), max_seconds=3600.0
    )
    assert outcome.reason == "limit"
    messages = _events(store, "EvictionBlocked")
    assert messages and messages[0].startswith(
        "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): infra/agent-"
    )
