"""The budget ledger (kept as pods change) against a recount from scratch, and the store's
file against its memory across commits, on drawn sequences of what a rehearsal does to
pods and budgets (property tests). SPEC E3, G11: the budgets an eviction honours; X3:
the file holds what memory held at the last commit."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kupgrade.cluster.disruption import budget_status
from kupgrade.cluster.objects import is_ready_pod, pdb, pod
from kupgrade.cluster.selectors import matches
from kupgrade.sim.budgets import ledger
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.loop import COMMIT_EVERY, COMMIT_SHARE, CommitPace
from kupgrade.sim.store import Store

NAMESPACES = ["a", "b"]
APPS = ["web", "db", "cache"]


def recount(store: Store, budget: dict[str, Any]) -> dict[str, int]:
    """A budget's status from every pod it selects now: what the ledger must equal
    (the way the simulator computed it before the ledger)."""
    namespace = budget["metadata"].get("namespace", "")
    pods = [
        p
        for p in store.list("Pod")
        if p["metadata"].get("namespace", "") == namespace
        and matches(budget["spec"].get("selector") or {}, p["metadata"].get("labels") or {})
    ]
    owners = {o["name"] for p in pods for o in p["metadata"].get("ownerReferences") or []}
    expected = sum(int(store.meta(f"replicas:{namespace}/{o}") or 0) for o in owners)
    healthy = sum(1 for p in pods if is_ready_pod(p))
    return budget_status(budget["spec"], expected or len(pods), healthy)


pod_names = st.integers(0, 7).map(lambda i: f"p{i}")
labels = st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(APPS), max_size=2)
operations = st.one_of(
    st.tuples(
        st.just("create"),
        st.sampled_from(NAMESPACES),
        pod_names,
        labels,
        st.sampled_from([None, *APPS]),
    ),
    st.tuples(st.just("ready"), st.sampled_from(NAMESPACES), pod_names),
    st.tuples(st.just("terminate"), st.sampled_from(NAMESPACES), pod_names),
    st.tuples(st.just("remove"), st.sampled_from(NAMESPACES), pod_names),
    st.tuples(st.just("relabel"), st.sampled_from(NAMESPACES), pod_names, labels),
    st.tuples(
        st.just("budget"),
        st.sampled_from(NAMESPACES),
        st.sampled_from(APPS),
        st.one_of(st.just({}), st.sampled_from(APPS).map(lambda a: {"app": a})),
        st.integers(0, 3),
    ),
    st.tuples(st.just("drop-budget"), st.sampled_from(NAMESPACES), st.sampled_from(APPS)),
    st.tuples(
        st.just("patch-budget"),
        st.sampled_from(NAMESPACES),
        st.sampled_from(APPS),
        st.integers(0, 3),
    ),
    st.tuples(
        st.just("replicas"), st.sampled_from(NAMESPACES), st.sampled_from(APPS), st.integers(0, 5)
    ),
    st.tuples(st.just("commit")),
)


def apply(sim: SimCluster, op: tuple[Any, ...]) -> None:
    store = sim.store
    kind = op[0]
    if kind == "create":
        _, namespace, name, wanted, owner = op
        sim.write(
            pod(
                name,
                namespace,
                owner=owner or "",
                labels=wanted,
                node_name="n",
                created="2024-05-04T10:00:00Z",
                owner_kind="ReplicaSet" if owner else None,
            )
        )
    elif kind in ("ready", "terminate", "relabel"):
        found = store.get("Pod", op[2], op[1])
        if found is None:
            return
        if kind == "ready":
            found["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        elif kind == "terminate":
            found["metadata"]["deletionTimestamp"] = "2024-05-04T10:01:00Z"
        else:
            found["metadata"]["labels"] = op[3]
        sim.write(found)
    elif kind == "remove":
        sim.remove("Pod", op[2], op[1])
    elif kind == "budget":
        _, namespace, name, wanted, least = op
        sim.write(pdb(name, namespace, wanted, {"minAvailable": least}))
    elif kind == "patch-budget":  # changed in place and written, as `kubectl edit` does
        found = store.get("PodDisruptionBudget", op[2], op[1])
        if found is not None:
            found["spec"]["minAvailable"] = op[3]
            sim.write(found)
    elif kind == "drop-budget":
        sim.remove("PodDisruptionBudget", op[2], op[1])
    elif kind == "replicas":
        store.set_meta(f"replicas:{op[1]}/{op[2]}", op[3])
    else:
        store.commit()


WEB_BUDGET = ("budget", "a", "web", {"app": "web"}, 1)
WEB_POD = ("create", "a", "p0", {"app": "web"}, "web")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operations, max_size=40))
# only the healthy count changes: an eviction's kept status must not survive it
@example([WEB_BUDGET, WEB_POD, ("ready", "a", "p0"), ("terminate", "a", "p0")])
@example([WEB_BUDGET, WEB_POD, ("patch-budget", "a", "web", 0), ("ready", "a", "p0")])
def test_the_ledger_equals_a_recount_after_every_change(ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "cluster.db")
        sim = SimCluster(store)
        for op in ops:
            apply(sim, op)
            for budget in store.list("PodDisruptionBudget"):
                assert sim.budget(budget) == recount(store, budget), op
            for found in store.list("Pod"):
                expected = [
                    b
                    for b in store.list("PodDisruptionBudget")
                    if b["metadata"]["namespace"] == found["metadata"]["namespace"]
                    and matches(
                        b["spec"].get("selector") or {}, found["metadata"].get("labels") or {}
                    )
                ]
                assert sim.budgets_for(found) == expected
                # what an eviction weighs, kept between changes, is what a recount gives
                weighed = [(b["metadata"]["name"], b["spec"], recount(store, b)) for b in expected]
                assert sim.budgets.weighed(found) == weighed, op
        store.close()


CREATE = ("create", "a", "p0", {"app": "web"}, "web")
REMOVE = ("remove", "a", "p0")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operations, max_size=40))
@example([CREATE, ("commit",), REMOVE, CREATE, REMOVE, ("commit",)])
@example([CREATE, REMOVE, ("commit",), CREATE, ("commit",), REMOVE, CREATE, ("commit",)])
def test_the_file_holds_what_memory_held_at_the_last_commit(ops: list[tuple[Any, ...]]) -> None:
    """Objects created and removed between two commits, removed and created again, or
    changed after a commit: reopened, the store has exactly what it had committed."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.db"
        store = Store(path)
        sim = SimCluster(store)
        committed: dict[str, list[Any]] = {"Pod": [], "PodDisruptionBudget": []}
        for op in ops:
            apply(sim, op)
            if op[0] == "commit":
                committed = {k: copy.deepcopy(store.list(k)) for k in committed}
        store.close()
        again = Store(path)
        assert {k: again.list(k) for k in committed} == committed
        again.close()


def test_one_ledger_per_store_however_many_views() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "cluster.db")
        assert SimCluster(store).budgets is SimCluster(store).budgets is ledger(store)
        store.close()


def test_the_commit_pace_keeps_commits_a_small_share(monkeypatch: Any) -> None:
    clock = [100.0]
    monkeypatch.setattr("kupgrade.sim.loop.time.monotonic", lambda: clock[0])
    pace = CommitPace()
    assert not pace.due()
    clock[0] += COMMIT_EVERY
    assert pace.due()
    with pace.committing():  # a quick commit: the next is due COMMIT_EVERY later
        clock[0] += 0.01
    clock[0] += COMMIT_EVERY - 0.001
    assert not pace.due()
    clock[0] += 0.001
    assert pace.due()
    with pace.committing():  # a slow one: the next waits COMMIT_SHARE times as long
        clock[0] += 2.0
    clock[0] += COMMIT_SHARE * 2.0 - 0.001
    assert not pace.due()
    clock[0] += 0.001
    assert pace.due()
