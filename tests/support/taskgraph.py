"""cluster-version-operator task_graph.go RunGraph, as its own tests and the task-graph
conformance cases see it, run on the product's step-wise scheduler
(kupgrade/release/schedule.py): steps until nothing more can start, a node whose task
failed given up on for the rest of the run, nothing started once the run is cancelled.

What RunGraph adds around the steps is here, because kupgrade's controller has no run of
its own (it takes one step per pass, and a newer request is seen at the next pass, not by
cancelling one): its errors when nodes are left over although none failed ("N incomplete
task nodes, beginning with T", and "context canceled" when the run was cancelled).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from kupgrade.release.schedule import Applied, Schedule
from kupgrade.release.taskgraph import Task, TaskGraph


class CancelledError(Exception):
    """The run was cancelled; Go's text is "context canceled"."""

    def __init__(self) -> None:
        super().__init__("context canceled")


TaskFn = Callable[[Task, threading.Event], None]


def run_graph(
    graph: TaskGraph, workers: int, fn: TaskFn, cancel: threading.Event | None = None
) -> list[Exception]:
    """Every node once its prerequisites are done, `fn` called task by task; the errors
    RunGraph returns."""
    cancel = cancel or threading.Event()
    schedule = Schedule.of(graph, workers)
    cursor = [0] * len(graph.nodes)
    failed: set[int] = set()
    errors: list[Exception] = []

    def apply(task: Task) -> Applied | Exception:
        try:
            fn(task, cancel)
        except Exception as exc:
            return exc
        return Applied.DONE

    while True:
        step = schedule.step(cursor, apply, skip=failed, cancelled=cancel.is_set)
        failed.update(step.failed)
        errors += step.errors
        if not step.started:
            break
    done = schedule.finished(cursor)
    unfinished = [i for i in range(len(graph.nodes)) if i not in done and i not in failed]
    first = next((i for i in unfinished if graph.nodes[i].tasks), None)
    if not errors and first is not None:
        task = graph.nodes[first].tasks[0].describe()  # task_graph.go RunGraph
        errors.append(
            RuntimeError(f"{len(unfinished)} incomplete task nodes, beginning with {task}")
        )
        if cancel.is_set():
            errors.append(CancelledError())
    return errors
