"""Properties of the runlevel task graph on generated payloads (SPEC D1-D3)."""

from __future__ import annotations

import random
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.release.taskgraph import (
    Task,
    TaskGraph,
    build_graph,
    percent_complete,
    progress_text,
)
from tests.support.taskgraph import run_graph

components = st.sampled_from(["etcd", "kube-apiserver", "olm", "machine-config", "a-b", "x"])
runlevels = st.sampled_from(["00", "03", "05", "10", "20", "50", "90"])
names = st.text(alphabet="abcdefghij0123456789-", min_size=1, max_size=6)


@st.composite
def payloads(draw: st.DrawFn) -> list[Task]:
    files = draw(
        st.lists(
            st.one_of(
                st.builds(lambda r, c, n: f"0000_{r}_{c}_{n}.yaml", runlevels, components, names),
                st.builds(lambda n: f"{n}.yaml", names),  # names the controller cannot parse
            ),
            min_size=0,
            max_size=40,
            unique=True,
        )
    )
    jobs = draw(st.sets(st.sampled_from(files), max_size=3)) if files else set()
    return [Task(f, f in jobs) for f in sorted(files)]


def _ancestors(graph: TaskGraph) -> dict[int, set[int]]:
    memo: dict[int, set[int]] = {}

    def up(index: int) -> set[int]:
        if index not in memo:
            found: set[int] = set()
            for parent in graph.nodes[index].into:
                found |= {parent} | up(parent)
            memo[index] = found
        return memo[index]

    return {i: up(i) for i in range(len(graph.nodes))}


def _placement(graph: TaskGraph) -> dict[str, tuple[int, int]]:
    return {t.file: (n, i) for n, node in enumerate(graph.nodes) for i, t in enumerate(node.tasks)}


def _before(graph: TaskGraph, ancestors: dict[int, set[int]], a: str, b: str) -> bool:
    """a surely runs before b: same node and earlier, or a's node is an ancestor of b's."""
    where = _placement(graph)
    (na, ia), (nb, ib) = where[a], where[b]
    return ia < ib if na == nb else na in ancestors[nb]


@settings(max_examples=150, deadline=None)
@given(payloads())
def test_update_graph_keeps_every_task_once_and_orders_runlevels(tasks: list[Task]) -> None:
    graph = build_graph(tasks, "update")
    placed = [t.file for node in graph.nodes for t in node.tasks]
    assert sorted(placed) == sorted(t.file for t in tasks)
    ancestors = _ancestors(graph)
    for node, found in ancestors.items():
        assert node not in found, "the graph has a cycle"
    # SPEC D1 and D3, between tasks that are neither Jobs nor separated by one
    files = [t.file for t in tasks]
    for i, a in enumerate(tasks):
        for b in tasks[i + 1 :]:
            ra, rb = a.runlevel_component, b.runlevel_component
            job_between = any(
                t.is_job for t in tasks[files.index(a.file) : files.index(b.file) + 1]
            )
            if job_between:
                assert _before(graph, ancestors, a.file, b.file)  # nothing crosses a Job
            elif ra and rb and ra[0] != rb[0]:
                assert _before(graph, ancestors, a.file, b.file)  # D1
            elif ra and rb and ra == rb:
                assert _before(graph, ancestors, a.file, b.file)  # D3
            elif ra and rb and ra[0] == rb[0]:
                # D2: other components of the same runlevel may run at the same time
                assert not _before(graph, ancestors, a.file, b.file)


@settings(max_examples=100, deadline=None)
@given(payloads(), st.integers(min_value=0, max_value=40))
def test_install_and_reconcile_keep_every_task_once(tasks: list[Task], attempt: int) -> None:
    for graph in (
        build_graph(tasks, "install"),
        build_graph(tasks, "reconcile", attempt),
        build_graph(tasks, "reconcile", attempt, random.Random(attempt // 8)),
    ):
        assert sorted(t.file for n in graph.nodes for t in n.tasks) == sorted(t.file for t in tasks)


def test_permute_keeps_every_node() -> None:
    tasks = [Task(f"0000_10_c{i}_x.yaml") for i in range(6)]
    plain = build_graph(tasks, "reconcile", 8)
    shuffled = build_graph(tasks, "reconcile", 8, random.Random(1))
    assert len(plain.nodes) == len(shuffled.nodes)
    assert [t.file for t in plain.nodes[1].tasks] != [t.file for t in plain.nodes[2].tasks]
    assert sorted(t.file for n in shuffled.nodes for t in n.tasks) == sorted(t.file for t in tasks)


@settings(max_examples=60, deadline=None)
@given(payloads(), st.integers(min_value=1, max_value=8), st.data())
def test_a_failed_node_blocks_only_its_dependents(
    tasks: list[Task], parallel: int, data: st.DataObject
) -> None:
    graph = build_graph(tasks, "update")
    if not tasks:
        return
    failing = data.draw(st.sampled_from([t.file for t in tasks]))
    ran: list[str] = []

    def fn(task: Task, _cancel: threading.Event) -> None:
        if task.file == failing:
            raise RuntimeError("boom")
        ran.append(task.file)

    errors = run_graph(graph, parallel, fn)
    assert [str(e) for e in errors] == ["boom"]
    ancestors = _ancestors(graph)
    where = _placement(graph)
    failed_node = where[failing][0]
    for task in tasks:
        node, index = where[task.file]
        blocked = failed_node in ancestors[node] or (
            node == failed_node and index >= where[failing][1]
        )
        assert (task.file in ran) != blocked, task.file


def test_progress_is_truncated_in_float32() -> None:
    assert percent_complete(53, 100) == 52
    assert percent_complete(2, 3) == 66
    assert percent_complete(863, 863) == 100
    assert percent_complete(0, 0) == 0
    assert progress_text(334, 1000) == "334 of 1000 done (33% complete)"
