"""A commit written behind the run (kupgrade/sim/commits.py, Store.commit behind=True)
writes exactly what a commit written row by row writes, never holds the run's thread for
SQLite's work, and reports a failure at the next commit without writing anything after
it (SPEC X3)."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.sim import commits
from kupgrade.sim.commits import Batch, packed
from kupgrade.sim.profile import Budget, Pool, Spec, Workload
from kupgrade.sim.store import SCHEMA, Store
from kupgrade.sim.store_errors import StoreError
from tests.support.sim import runner, start

# Every character SQLite's JSON might mistake: NUL, quotes, backslashes, controls,
# non-ASCII, astral characters (no lone surrogates: neither way can store those).
text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), max_codepoint=0x1F600), max_size=12
)
some_bytes = st.binary(max_size=40)
key = st.tuples(text, text, text)
at = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def batches(draw: Any) -> Batch:
    objects = draw(st.dictionaries(key, some_bytes, max_size=12))
    gone = draw(st.lists(key, max_size=6, unique=True))
    seqs = draw(st.lists(st.integers(1, 10_000), max_size=12, unique=True))
    half = len(seqs) // 2
    return Batch(
        gone=[k for k in gone if k not in objects],
        objects=[(*k, body) for k, body in objects.items()],
        meta=list(draw(st.dictionaries(text, some_bytes, max_size=6)).items()),
        unscheduled=[(s,) for s in seqs[:half]],
        scheduled=[(s, draw(at), draw(some_bytes)) for s in seqs[half:]],
        events=draw(st.lists(st.tuples(at, text, text, text, text), max_size=8)),
    )


def _database(path: Path, before: Batch) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(SCHEMA)
    db.execute("BEGIN")
    commits.write(db, before, at_once=False)
    db.execute("COMMIT")
    return db


def _tables(db: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row with every value's SQLite type: a blob stored as text would differ."""
    queries = {
        "objects": "SELECT kind, namespace, name, body, typeof(body) FROM objects",
        "meta": "SELECT key, value, typeof(value) FROM meta",
        "schedule": "SELECT seq, at, typeof(at), action, typeof(action) FROM schedule",
        "events": "SELECT seq, at, typeof(at), kind, object, reason, message FROM events",
    }
    return {name: sorted(db.execute(q).fetchall()) for name, q in queries.items()}


@settings(max_examples=150, deadline=None)
@given(before=batches(), batch=batches())
def test_both_ways_write_the_same_rows(tmp_path_factory: Any, before: Batch, batch: Batch) -> None:
    """On top of the same earlier rows (so deletes and replacements find something), the
    rows written at once equal the rows written one by one, value and type."""
    folder = tmp_path_factory.mktemp("both")
    written = {}
    for at_once in (False, True):
        db = _database(folder / f"{at_once}.db", before)
        # Deletes of rows that exist (some earlier objects, the earlier actions fired),
        # rewrites of others, and actions numbered after the earlier ones, as a store's are.
        # Each key once, as a store's dirty set gives them.
        rewritten = {r[:3]: b"again" for r in before.objects[1::2]}
        rewritten.update((r[:3], r[3]) for r in batch.objects)
        again = Batch(
            gone=[r[:3] for r in before.objects[::2] if r[:3] not in rewritten],
            objects=[(*k, body) for k, body in rewritten.items()],
            meta=batch.meta,
            unscheduled=[(r[0],) for r in before.scheduled],
            scheduled=[(seq + 20_000, when, action) for seq, when, action in batch.scheduled],
            events=batch.events,
        )
        db.execute("BEGIN")
        commits.write(db, again, at_once=at_once)
        db.execute("COMMIT")
        written[at_once] = _tables(db)
        db.close()
    assert written[True] == written[False]


def test_the_rows_travel_as_json_and_slices_of_one_blob() -> None:
    text_, blob = packed([("Pod", "ns", "a", b'{"x":1}'), ("Pod", "ns", "b", b"[]")])
    assert text_ == b'[["Pod","ns","a",1,7],["Pod","ns","b",8,2]]'
    assert blob == b'{"x":1}[].'
    assert packed([(1.5, "Normal", "pod/a", "Evicted", "m")]) == (
        b'[[1.5,"Normal","pod/a","Evicted","m"]]',
        None,
    )


def _pod(name: str, message: str = "") -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "ns"}, "status": {"m": message}}


def test_a_commit_behind_is_on_disk_once_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = Store(path)
    for i in range(500):
        store.put(_pod(f"p{i}", "nul \x00 inside" if i == 7 else "é"))
    store.set_meta("now", 12.5)
    store.schedule(60.0, ["wake", "Pod", "ns", "p1"])
    store.event(1.0, "Normal", "pod/ns/p1", "Created", 'a \x00 NUL, quotes " and \\')
    store.commit(behind=True)
    # What the run changes after the commit is not in it (it was encoded at once) ...
    changed = store.get("Pod", "p1", "ns")
    assert changed is not None
    changed["status"]["m"] = "changed after"
    store.put(changed)
    store.delete("Pod", "p2", "ns")
    store.wait()
    assert not store.writing()
    again = Store(path)
    assert len(again.list("Pod")) == 500
    assert again.get("Pod", "p1", "ns")["status"]["m"] == "é"  # type: ignore[index]
    assert again.get("Pod", "p7", "ns")["status"]["m"] == "nul \x00 inside"  # type: ignore[index]
    assert again.meta("now") == 12.5 and again.pending() == 1
    assert [e["message"] for e in again.events()] == ['a \x00 NUL, quotes " and \\']
    again.close()
    # ... and is in the next.
    store.commit()
    store.close()
    again = Store(path)
    assert len(again.list("Pod")) == 499
    assert again.get("Pod", "p1", "ns")["status"]["m"] == "changed after"  # type: ignore[index]
    again.close()


def test_events_and_close_wait_for_the_commit_behind(tmp_path: Path, monkeypatch: Any) -> None:
    store = Store(tmp_path / "c.db")
    store.event(1.0, "Normal", "pod/a", "Created", "m")
    release = threading.Event()
    write = commits.write

    def slow(db: sqlite3.Connection, batch: Batch, *, at_once: bool) -> None:
        release.wait(10)
        write(db, batch, at_once=at_once)

    monkeypatch.setattr(commits, "write", slow)
    store.commit(behind=True)
    assert store.writing()
    threading.Timer(0.2, release.set).start()
    assert [e["reason"] for e in store.events()] == ["Created"]  # read after it is written
    assert not store.writing()
    store.close()


def test_a_failed_commit_behind_is_raised_and_nothing_is_written_after_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    store = Store(path)
    store.put(_pod("first"))
    store.commit()
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count={pages}")  # as full as a full disk
    for i in range(2000):
        store.put(_pod(f"p{i}", "y" * 100))
    store.commit(behind=True)  # returns at once; the writing fails
    with pytest.raises(StoreError) as full:
        store.wait()
    assert "no space left on the device" in str(full.value)
    store._db.execute("PRAGMA max_page_count=1000000")
    store.put(_pod("later"))
    with pytest.raises(StoreError):  # the lost commit's changes would be missing
        store.commit()
    store.close()
    again = Store(path)
    assert [p["metadata"]["name"] for p in again.list("Pod")] == ["first"]
    again.close()


def test_the_run_commits_behind_and_ends_written(tmp_path: Path, monkeypatch: Any) -> None:
    """A rehearsal's commits in the loop are written behind, one at a time, and the run
    returns with everything on disk: a new process reads what the run ended with."""
    overlapping: list[bool] = []
    behinds: list[bool] = []
    commit = Store.commit

    def spy(self: Store, *, behind: bool = False) -> None:
        overlapping.append(self.writing())
        behinds.append(behind)
        commit(self, behind=behind)

    monkeypatch.setattr("kupgrade.sim.loop.COMMIT_EVERY", 0.0)  # due whenever written
    monkeypatch.setattr("kupgrade.sim.loop.COMMIT_SHARE", 0.0)
    spec = Spec(
        pools=[Pool("master", 3, max_unavailable=1), Pool("worker", 6, max_unavailable=2)],
        workloads=[Workload("web", "shop", 12, pdb=Budget(max_unavailable=1))],
    )
    root, store = start(tmp_path, spec)
    monkeypatch.setattr(Store, "commit", spy)
    outcome = runner(root, store, spec).run()
    assert outcome.reason == "completed"
    assert behinds.count(True) >= 2 and behinds[-1] is False
    # The loop starts a commit only once the last one is written.
    assert not any(o for o, b in zip(overlapping, behinds, strict=True) if b)
    assert not store.writing()
    events, pods = store.events(), store.list("Node")
    store.close()
    again = Store(root / "cluster.db")
    assert again.events() == events and again.list("Node") == pods
    again.close()


@pytest.mark.parametrize("behind", [False, True])
def test_the_schedule_on_disk_is_the_schedule_in_memory(tmp_path: Path, behind: bool) -> None:
    """An action fired before any commit saw it is never written; one the file holds is
    deleted when fired; the rest are pending after a restart, in order."""
    path = tmp_path / "c.db"
    store = Store(path)
    store.schedule(10.0, ["wake", "Node", "", "kept"])
    store.schedule(5.0, ["wake", "Node", "", "fired-after-commit"])
    store.commit(behind=behind)
    store.schedule(1.0, ["wake", "Node", "", "fired-before-commit"])
    store.schedule(20.0, ["wake", "Node", "", "new"])
    assert [a[-1] for a in store.pop_due(6.0)] == ["fired-before-commit", "fired-after-commit"]
    store.commit(behind=behind)
    store.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT seq FROM schedule ORDER BY seq").fetchall() == [(1,), (4,)]
    again = Store(path)
    assert again.pending() == 2
    assert [a[-1] for a in again.pop_due(100.0)] == ["kept", "new"]
    again.close()
