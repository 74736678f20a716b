"""Cold objects packed with a dictionary trained on the cluster's own objects (issue 46:
a 20,000-node rehearsal in under 1 GB). Packing is memory's business only: every reader
gets the same dicts, and the file holds the same JSON rows, packed or not."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.sim import packing
from kupgrade.sim import store as store_module
from kupgrade.sim.packing import MAGIC, Packer, even_sample
from kupgrade.sim.store import Store
from kupgrade.sim.store_errors import StoreError


def pod(i: int, node: str = "n1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"app-{i:05d}",
            "namespace": f"team-{i % 3}",
            "labels": {"app": f"app-{i // 20}"},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "controller": True, "kind": "ReplicaSet", "name": "rs"}
            ],
        },
        "spec": {"nodeName": node},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"},
    }


def bodies(count: int) -> list[bytes]:
    return [msgspec.json.encode(pod(i, f"n{i % 9}")) for i in range(count)]


@settings(max_examples=60, deadline=None)
@given(count=st.integers(0, 5 * packing.SAMPLES))
def test_the_sample_is_even_and_bounded(count: int) -> None:
    kept, seen = even_sample([b"%d" % i for i in range(count)])
    assert seen == count
    assert len(kept) <= 2 * packing.SAMPLES
    numbers = [int(b) for b in kept]
    assert numbers[:1] == ([0] if count else [])
    strides = {b - a for a, b in itertools.pairwise(numbers)}
    assert len(strides) <= 1  # one stride over the whole run
    if count >= 2 * packing.SAMPLES:
        assert len(kept) >= packing.SAMPLES  # a full sample, not a few
        assert numbers[-1] >= count - 2 * max(strides)  # reaching the end of the run


def test_the_sample_skips_what_is_not_bytes() -> None:
    kept, seen = even_sample([b"{}", "text", None, b"[]"])
    assert (kept, seen) == ([b"{}", b"[]"], 4)


def test_too_few_objects_are_not_packed() -> None:
    assert Packer.for_bodies(bodies(packing.PACK_FROM - 1)) is None
    assert Packer.for_bodies(bodies(packing.PACK_FROM)) is not None


def test_samples_no_dictionary_can_be_trained_on_leave_objects_as_json() -> None:
    assert Packer.trained([b""] * 500) is None


json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=json_value)
def test_packing_gives_back_every_byte(value: Any) -> None:
    packer = Packer.trained(bodies(200))
    assert packer is not None
    body = msgspec.json.encode(value)
    packed = packer.pack(body)
    assert packed.startswith(MAGIC) and not body.startswith(MAGIC)
    assert packer.unpack(packed) == body


def test_pods_pack_to_a_fraction_of_their_json() -> None:
    packer = Packer.for_bodies(bodies(3000))
    assert packer is not None
    json = bodies(3000)
    packed = [packer.pack(b) for b in json]
    assert sum(map(len, packed)) * 4 < sum(map(len, json))


@pytest.fixture
def big(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.db"
    created = Store(path)
    for i in range(packing.PACK_FROM + 200):
        created.put(pod(i))
    created.put({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    created.commit()
    created.close()
    return path


def _rows(path: Path) -> dict[tuple[str, str, str], bytes]:
    db = sqlite3.connect(path)
    try:
        return {(k, n, m): b for k, n, m, b in db.execute("SELECT * FROM objects")}
    finally:
        db.close()


def test_a_big_store_holds_its_pods_packed_and_reads_them_as_written(
    big: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "COOL_EVERY", 1)
    monkeypatch.setattr(store_module, "COOL_AFTER", 0.0)
    store = Store(big)
    held = store._by_kind["Pod"]
    assert all(isinstance(v, bytes) and v.startswith(b"{") for v in held.values())
    assert store._packer is None  # a command that only reads pays nothing for packing
    store.cool()  # the first step of a run
    assert all(isinstance(v, bytes) and v.startswith(MAGIC) for v in held.values())
    assert isinstance(store._by_kind["Node"][("Node", "", "n1")], dict)  # not a cold kind
    every = [pod(i) for i in range(packing.PACK_FROM + 200)]
    by_key = sorted(every, key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))
    assert store.list("Pod") == by_key
    assert store.get("Pod", "app-00007", "team-1") == pod(7)
    assert dict(store.scan("Pod"))[("Pod", "team-1", "app-00007")] == pod(7)

    changed = store.get("Pod", "app-00004", "team-1")
    assert changed is not None
    changed["spec"]["nodeName"] = "n2"
    store.put(changed)
    del changed
    store.commit()
    for _ in range(3):  # read since, then unread: cold again, packed again
        store.cool()
    again = store._by_kind["Pod"][("Pod", "team-1", "app-00004")]
    assert isinstance(again, bytes) and again.startswith(MAGIC)
    assert store.get("Pod", "app-00004", "team-1") == pod(4, "n2")

    changes = store.keep_changes()
    store.delete("Pod", "app-00005", "team-2")
    recorded = msgspec.json.decode(changes.entries[-1][3])  # the watch cache's JSON
    assert recorded["metadata"].pop("resourceVersion")
    assert recorded == pod(5)
    store.commit()
    store.close()

    rows = _rows(big)  # SPEC X3: the file holds JSON, as without packing
    assert all(body.startswith(b"{") for body in rows.values())
    assert msgspec.json.decode(rows[("Pod", "team-1", "app-00004")]) == pod(4, "n2")
    assert ("Pod", "team-2", "app-00005") not in rows


def test_packing_writes_the_same_file_as_json(
    big: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same changes on a packed store and on one kept as JSON write the same rows."""
    plain = tmp_path / "plain.db"
    source, copy = sqlite3.connect(big), sqlite3.connect(plain)
    source.backup(copy)
    source.close()
    copy.close()
    for path, pack_from in ((big, packing.PACK_FROM), (plain, 10**9)):
        monkeypatch.setattr(packing, "PACK_FROM", pack_from)
        store = Store(path)
        store.cool()
        assert (store._packer is not None) == (path == big)
        for i in range(0, 300, 7):
            found = store.get("Pod", f"app-{i:05d}", f"team-{i % 3}")
            assert found is not None
            found["status"]["phase"] = "Succeeded"
            store.put(found)
        store.delete("Pod", "app-00001", "team-1")
        store.commit()
        store.close()
    assert _rows(big) == _rows(plain)


def test_bytes_the_packer_did_not_make_do_not_unpack() -> None:
    packer = Packer.trained(bodies(200))
    assert packer is not None
    with pytest.raises(ValueError, match="do not unpack"):
        packer.unpack(MAGIC + b"not a frame")


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("damage", [MAGIC + b"junk", b"{junk", b"[1, 2]", b""])
def test_a_damaged_row_is_said_when_read_not_raised_as_it_is(
    big: Path, packed: bool, damage: bytes
) -> None:
    """A cold row is decoded when first read, not when the store loads: a damaged one
    (not JSON, not an object, or bytes that look packed) is a StoreError then, one line
    that says the store is damaged and what to do, packed or not."""
    db = sqlite3.connect(big)
    db.execute(
        "UPDATE objects SET body = ? WHERE kind = 'Pod' AND namespace = ? AND name = ?",
        (damage, "team-1", "app-00001"),
    )
    db.commit()
    db.close()
    store = Store(big)
    if packed:
        store.cool()
        assert store._packer is not None
    with pytest.raises(StoreError, match="is damaged") as raised:
        store.get("Pod", "app-00001", "team-1")
    assert "\n" not in str(raised.value) and "cluster delete" in (raised.value.hint or "")
    with pytest.raises(StoreError, match="is damaged"):
        store.list("Pod")
    assert store.get("Pod", "app-00004", "team-1") == pod(4)  # the others read as written
    store.close()
