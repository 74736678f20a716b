"""Objects held as their encoded bytes while nobody reads them (issue 46: a 20,000-node
rehearsal in under 1 GB). What every reader sees must not change: a pod read twice is one
dict, a change made in place and put is kept, a dict someone still holds is never swapped
for a fresh one behind their back, and the file holds what a plain dict store would.
The golden runs (tests/sim/test_golden_runs.py) hold whole rehearsals byte for byte."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kupgrade.sim import packing
from kupgrade.sim import store as store_module
from kupgrade.sim.store import COLD_KINDS, Store

COOL_EVERY = 4  # steps between two coolings here (the product's is larger: a tuning)


@pytest.fixture(autouse=True, params=["json", "packed"])
def mode(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> str:
    """Every test twice: cold objects kept as their JSON (a small cluster's), and packed
    with a dictionary trained at a run's first step (a big one's, sim/packing.py; trained
    here on pods like these, as a few pods are too few to train on)."""
    monkeypatch.setattr(store_module, "COOL_EVERY", COOL_EVERY)
    monkeypatch.setattr(store_module, "COOL_AFTER", 0.0)
    if request.param == "packed":
        corpus = [msgspec.json.encode(pod(f"c{i}", node=f"n{i % 5}")) for i in range(200)]
        trained = packing.Packer.trained(corpus)
        monkeypatch.setattr(packing.Packer, "for_bodies", classmethod(lambda cls, _: trained))
    return str(request.param)


def pod(name: str, ready: str = "True", node: str = "n1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "labels": {"app": "a"}},
        "spec": {"nodeName": node},
        "status": {"conditions": [{"type": "Ready", "status": ready}]},
    }


def between_steps(store: Store) -> None:
    """Steps enough for an object read before them and not since to go cold: two
    coolings (the first only clears its mark of having been read)."""
    for _ in range(2 * COOL_EVERY):
        store.cool()


def is_cold(store: Store, name: str) -> bool:
    held = store._by_kind["Pod"][("Pod", "ns", name)]
    if isinstance(held, bytes) and store._packer is not None:
        assert held.startswith(packing.MAGIC)  # packed whenever cold
    return isinstance(held, bytes)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    created = Store(tmp_path / "cluster.db")
    for i in range(3):
        created.put(pod(f"p{i}"))
    created.commit()
    created.close()
    return Store(tmp_path / "cluster.db")


def test_pods_load_as_bytes_and_read_as_one_dict_until_cooled(store: Store, mode: str) -> None:
    assert "Pod" in COLD_KINDS
    store.cool()  # a run's first step packs what is cold when there is enough of it
    assert (store._packer is not None) == (mode == "packed")
    assert all(is_cold(store, f"p{i}") for i in range(3))
    first = store.get("Pod", "p0", "ns")
    assert first == pod("p0") and store.get("Pod", "p0", "ns") is first
    store.index("Pod", "node", lambda p: [p["spec"]["nodeName"]])  # built from the bytes
    assert is_cold(store, "p1")
    assert store.lookup("Pod", "node", "n1")[0] is first
    del first
    between_steps(store)
    assert is_cold(store, "p0")
    assert store.get("Pod", "p0", "ns") == pod("p0")


def test_a_dict_someone_holds_stays_the_one_every_reader_gets(store: Store) -> None:
    held = store.get("Pod", "p1", "ns")
    assert held is not None
    between_steps(store)
    between_steps(store)
    assert not is_cold(store, "p1")
    held["status"]["conditions"][0]["status"] = "False"
    store.put(held)
    assert store.get("Pod", "p1", "ns") is held


def test_a_part_held_within_a_step_keeps_its_pod_a_dict(store: Store) -> None:
    """Within a step (the limit on warm objects reached) a reader holding only the
    conditions of a pod still finds them in the pod every other reader gets."""
    found = store.get("Pod", "p2", "ns")
    assert found is not None
    conditions = found["status"]["conditions"]
    del found
    store._cool(store_module._held, recent=False)
    assert not is_cold(store, "p2")
    conditions[0]["status"] = "False"
    assert store.get("Pod", "p2", "ns")["status"]["conditions"][0]["status"] == "False"  # type: ignore[index]


def test_a_change_not_yet_committed_is_never_cooled_away(store: Store, tmp_path: Path) -> None:
    changed = store.get("Pod", "p0", "ns")
    assert changed is not None
    changed["spec"]["nodeName"] = "n2"
    store.put(changed)
    del changed
    between_steps(store)
    assert store.get("Pod", "p0", "ns")["spec"]["nodeName"] == "n2"  # type: ignore[index]
    store.commit()
    between_steps(store)
    assert is_cold(store, "p0")  # the bytes of the commit that wrote the change
    assert store.get("Pod", "p0", "ns")["spec"]["nodeName"] == "n2"  # type: ignore[index]
    store.close()
    assert Store(tmp_path / "cluster.db").get("Pod", "p0", "ns") == pod("p0", node="n2")


def test_scan_reads_without_warming(store: Store) -> None:
    assert [key[2] for key, _ in store.scan("Pod")] == ["p0", "p1", "p2"]
    assert all(is_cold(store, f"p{i}") for i in range(3))
    assert not store._warm


def test_reading_more_than_the_limit_keeps_few_dicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "WARM_LIMIT", 8)
    created = Store(tmp_path / "big.db")
    for i in range(1000):
        created.put(pod(f"p{i:03d}"))
    created.commit()
    created.close()
    big = Store(tmp_path / "big.db")
    most = 0
    for i in range(1000):
        assert big.get("Pod", f"p{i:03d}", "ns") == pod(f"p{i:03d}")
        most = max(most, len(big._warm))
    assert most <= 100  # one look at every pod, a few dozen dicts at a time
    every = big.list("Pod")  # all held by the caller's list: none may be cooled away
    assert [p["metadata"]["name"] for p in every] == [f"p{i:03d}" for i in range(1000)]
    assert all(big.get("Pod", p["metadata"]["name"], "ns") is p for p in every)


def test_a_deleted_cold_pod_is_reported_to_a_watch_cache(store: Store) -> None:
    changes = store.keep_changes()
    store.delete("Pod", "p1", "ns")
    assert store.get("Pod", "p1", "ns") is None
    _, what, kind, body = changes.entries[-1]
    assert (what, kind) == ("DELETED", "Pod") and b'"p1"' in body


# --- a property: the store with cold objects is a plain dict store ----------------------

NAMES = [f"p{i}" for i in range(4)]
op = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(NAMES), st.sampled_from(["True", "False"])),
    st.tuples(st.just("edit"), st.sampled_from(NAMES), st.sampled_from(["n1", "n2", "n3"])),
    st.tuples(st.just("hold"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("drop"), st.just(""), st.just("")),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("step"), st.just(""), st.just("")),
    st.tuples(st.just("commit"), st.just(""), st.just("")),
    st.tuples(st.just("reopen"), st.just(""), st.just("")),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(op, max_size=40))
def test_cold_objects_change_nothing_a_reader_sees(tmp_path: Path, ops: list[Any]) -> None:
    # SPEC X2, X3: the same objects whatever is kept as bytes; the file as committed.
    path = tmp_path / f"model-{len(list(tmp_path.iterdir()))}.db"
    store = Store(path)
    model: dict[str, dict[str, Any]] = {}  # what every reader must see
    committed: dict[str, dict[str, Any]] = {}
    held: dict[str, dict[str, Any]] = {}  # dicts a reader keeps between steps
    for what, name, value in ops:
        if what == "put":
            store.put(pod(name, ready=value))
            model[name] = pod(name, ready=value)
            held.pop(name, None)  # a new dict is the object now
        elif what == "edit" and name in model:
            found = held.get(name) or store.get("Pod", name, "ns")
            assert found is not None
            found["spec"]["nodeName"] = value
            store.put(found)
            model[name]["spec"]["nodeName"] = value
        elif what == "hold" and name in model:
            held[name] = store.get("Pod", name, "ns")  # type: ignore[assignment]
        elif what == "drop":
            held.clear()
        elif what == "delete":
            store.delete("Pod", name, "ns")
            model.pop(name, None)
            held.pop(name, None)
        elif what == "step":
            between_steps(store)
        elif what == "commit":
            store.commit()
            committed = copy.deepcopy(model)
        elif what == "reopen":
            store.close()
            store = Store(path)
            model, held = copy.deepcopy(committed), {}
        for holder, kept in held.items():  # a held dict is what every reader gets
            assert store.get("Pod", holder, "ns") is kept
        assert {p["metadata"]["name"]: p for p in store.list("Pod")} == model
    store.close()


def test_a_pod_read_at_every_step_is_decoded_once(store: Store) -> None:
    first = id(store.get("Pod", "p0", "ns"))
    for _ in range(3 * COOL_EVERY):
        store.cool()
        assert id(store.get("Pod", "p0", "ns")) == first  # the same dict, not a new one
    assert not is_cold(store, "p0") and is_cold(store, "p1")


def test_cooling_waits_for_simulated_time_as_well_as_steps(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC X2: a pod read once a simulated minute (a draining node's, at every retry) stays a dict
    however many steps a minute takes; one unread for COOL_AFTER simulated seconds goes
    back to bytes at the next cooling."""
    monkeypatch.setattr(store_module, "COOL_AFTER", 120.0)
    now = 1_000.0
    for minute in range(6):  # 60 steps a simulated minute, the pod read at each retry
        assert store.get("Pod", "p0", "ns") is not None
        for _ in range(60):
            now += 1.0
            store.set_meta("now", now)
            store.cool()
        assert not is_cold(store, "p0"), minute
    for _ in range(4 * 60):  # unread for four minutes: two coolings, cold after them
        now += 1.0
        store.set_meta("now", now)
        store.cool()
    assert is_cold(store, "p0")
