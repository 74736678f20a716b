"""The store's one writer (sim/inbox.py; SPEC X3): a process that is not the writer hands
over field changes, which land on the object as it is by then, never over it."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cluster import fieldops
from kupgrade.cluster.objects import copied
from kupgrade.sim import inbox
from kupgrade.sim.lock import LOCK_NAME
from kupgrade.sim.store import Store

KEYS = st.sampled_from(["a", "b", "c", "labels", "spec"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)
OBJECTS = st.dictionaries(KEYS, JSON, max_size=5)


@given(OBJECTS, OBJECTS)
def test_the_ops_of_a_change_make_the_new_value_from_the_old(old: Any, new: Any) -> None:
    assert fieldops.applied(old, fieldops.field_ops(old, new)) == new


@given(OBJECTS, OBJECTS, OBJECTS)
def test_a_change_keeps_what_another_writer_changed_in_other_fields(
    base: Any, mine: Any, theirs: Any
) -> None:
    ours = fieldops.field_ops(base, mine)
    landed = fieldops.applied(theirs, ours)
    touched = {tuple(op.path[:1]) for op in ours}
    for key, value in theirs.items():
        if (key,) not in touched:
            assert landed[key] == value  # a field this change left alone is theirs
    for op in ours:
        found: Any = landed
        for part in op.path:
            found = found.get(part) if isinstance(found, dict) else None
        assert found == (None if op.remove else op.value)


def _node(name: str) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name, "labels": {}}, "spec": {}}


def _made(path: Path) -> Path:
    store = Store(path)
    store.put(_node("n1"))
    store.commit()
    store.close()
    return path


def test_with_no_writer_a_command_writes_onto_the_rows_as_they_are(tmp_path: Path) -> None:
    path = _made(tmp_path / "cluster.db")
    command = Store(path, shared=True)  # reads, then another process writes
    other = Store(path)
    changed = copied(other.get("Node", "n1") or {})
    changed["spec"]["unschedulable"] = True
    other.put(changed)
    other.commit()
    other.close()
    mine = copied(command.get("Node", "n1") or {})
    mine["metadata"]["labels"]["team"] = "a"
    command.put(mine)
    command.set_meta("note", {"x": 1})
    command.commit()
    command.close()
    after = Store(path)
    node = after.get("Node", "n1") or {}
    assert node["spec"]["unschedulable"] is True and node["metadata"]["labels"] == {"team": "a"}
    assert after.meta("note") == {"x": 1}
    after.close()


def test_with_a_writer_a_command_hands_its_change_over(tmp_path: Path) -> None:
    path = _made(tmp_path / "cluster.db")
    holder = subprocess.Popen(["flock", str(tmp_path / LOCK_NAME), "sleep", "60"])
    try:
        for _ in range(100):  # until the other process holds the lock
            if (tmp_path / LOCK_NAME).exists():
                break
            time.sleep(0.05)
        time.sleep(0.2)
        writer = Store(path)
        command = Store(path, shared=True)
        mine = copied(command.get("Node", "n1") or {})
        mine["metadata"]["labels"]["team"] = "a"
        command.put(mine)
        command.event(1.0, "Normal", "node/n1", "Labelled", "by a command")
        command.commit()
        command.close()
        # The writer's memory moved on meanwhile; the file was not written by the command.
        own = copied(writer.get("Node", "n1") or {})
        own["spec"]["unschedulable"] = True
        writer.put(own)
        assert (Store(path).get("Node", "n1") or {})["metadata"]["labels"] == {}
        assert writer.take_inbox() and not writer.take_inbox()
        node = writer.get("Node", "n1") or {}
        assert node["metadata"]["labels"] == {"team": "a"} and node["spec"]["unschedulable"]
        writer.commit()
        assert [e["reason"] for e in writer.events()] == ["Labelled"]
        writer.close()
        reread = Store(path)
        assert not inbox.pending(reread._db, 0)  # taken entries go with the commit
        assert (reread.get("Node", "n1") or {})["metadata"]["labels"] == {"team": "a"}
        reread.close()
    finally:
        holder.kill()
        holder.wait()
