"""How a task names itself in the controller's errors (SPEC D2), as in
cluster-version-operator pkg/payload/task.go String / getManifestResourceId and
task_graph.go RunGraph — branches no public case pins."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from kupgrade.release.manifest import ResourceId
from kupgrade.release.taskgraph import Task, TaskGraph, TaskNode
from tests.support.taskgraph import run_graph


def task(file: str, kind: str, namespace: str, name: str, index: int = 0, total: int = 0) -> Task:
    return Task(
        file,
        payload=SimpleNamespace(id=ResourceId("", kind, namespace, name)),
        index=index,
        total=total,
    )


def test_namespaced_cluster_scoped_and_unnamed_tasks() -> None:
    assert task("f", "ConfigMap", "default", "b").describe() == 'configmap "default/b" (0 of 0)'
    assert (
        task("f", "ClusterOperator", "", "dns", 7, 900).describe()
        == 'clusteroperator "dns" (7 of 900)'
    )
    # No name: the file it came from; cluster-scoped names are Go-quoted.
    assert task('0000_50_a"b.yaml', "Namespace", "", "").describe() == (
        'namespace "0000_50_a\\"b.yaml" (0 of 0)'
    )


def test_cancellation_without_task_errors_is_reported() -> None:
    """task_graph_test.go TestRunGraph "cancellation without task errors is reported"."""
    graph = TaskGraph(
        [
            TaskNode([task("a", "ConfigMap", "default", "a")], [], [1]),
            TaskNode([task("b", "ConfigMap", "default", "b")], [0], []),
        ]
    )
    ran: list[str] = []

    def fn(task: Task, cancel: threading.Event) -> None:
        assert task.file == "a", "b must never run"
        ran.append("a")
        cancel.set()

    errors = sorted(str(e) for e in run_graph(graph, 1, fn))
    assert ran == ["a"]
    assert errors == [
        '1 incomplete task nodes, beginning with configmap "default/b" (0 of 0)',
        "context canceled",
    ]
