"""The one task-graph scheduler (SPEC D1-D3): which nodes of the runlevel graph run now,
step by step, as cluster-version-operator pkg/payload/task_graph.go RunGraph chooses them
but without its goroutines, so that a controller killed between two steps resumes where
it was.

A step starts the nodes that may start (not finished, every prerequisite finished),
lowest index first, at most `workers` of them, and applies each one's tasks in order
from where it stopped: a task that fails stops its node (and so everything that depends
on it) but not the others; a task after which the process hands over to its new version
(SPEC C9) stops the step. Which nodes a step starts is decided when it begins: a node
finished during the step unblocks its dependents at the next one. The version controller
takes one step per pass; the task-graph conformance cases run steps until nothing more
can start, as RunGraph does within one sync.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

from kupgrade.release.taskgraph import Task, TaskGraph

T = TypeVar("T")  # a task
E = TypeVar("E")  # what a task that failed gives back (an exception, a SyncError, ...)


class Applied(Enum):
    """A task applied; STOP: and nothing more starts (the process hands over)."""

    DONE = "done"
    STOP = "stop"


@dataclass
class Step(Generic[E]):
    """What one step did."""

    started: list[int] = field(default_factory=list)  # nodes it started, in order
    failed: list[int] = field(default_factory=list)  # nodes a task of which failed
    errors: list[E] = field(default_factory=list)  # their failures, in order
    stopped: bool = False  # a task asked to stop


@dataclass(frozen=True)
class Schedule(Generic[T, E]):
    """A task graph's nodes (each a list of tasks), their prerequisites, and how many
    nodes run at once (0 or less: one)."""

    nodes: Sequence[Sequence[T]]
    deps: Sequence[Sequence[int]]
    workers: int

    @staticmethod
    def of(graph: TaskGraph, workers: int) -> Schedule[Task, Exception]:
        return Schedule([n.tasks for n in graph.nodes], [n.into for n in graph.nodes], workers)

    def finished(self, cursor: Sequence[int]) -> set[int]:
        """Nodes whose every task is applied (`cursor[i]`: tasks of node i applied). A node
        without tasks (a Job's split leaves some) is finished once its prerequisites are,
        as RunGraph runs it: not before, or what follows it would not wait for them."""
        done = {i for i, tasks in enumerate(self.nodes) if tasks and cursor[i] >= len(tasks)}
        empty = [i for i, tasks in enumerate(self.nodes) if not tasks]
        grew = True
        while grew:
            grew = False
            for i in empty:
                if i not in done and all(d in done for d in self.deps[i]):
                    done.add(i)
                    grew = True
        return done

    def startable(self, cursor: Sequence[int], skip: Collection[int] = ()) -> list[int]:
        """The nodes a step starts now: lowest index first, at most `workers`."""
        done = self.finished(cursor)
        ready = [
            i
            for i in range(len(self.nodes))
            if i not in done and i not in skip and all(d in done for d in self.deps[i])
        ]
        return ready[: max(1, self.workers)]

    def step(
        self,
        cursor: list[int],
        apply: Callable[[T], Applied | E],
        *,
        skip: Collection[int] = (),
        cancelled: Callable[[], bool] = lambda: False,
    ) -> Step[E]:
        """Start what may start and apply it, advancing `cursor` task by task (`apply`
        gives back Applied, or what failed); `skip`: nodes not to start (given up on),
        `cancelled`: checked before each node starts."""
        done: Step[E] = Step()
        for i in self.startable(cursor, skip):
            if cancelled():
                break
            done.started.append(i)
            tasks = self.nodes[i]
            while cursor[i] < len(tasks):
                outcome = apply(tasks[cursor[i]])
                if not isinstance(outcome, Applied):
                    done.failed.append(i)
                    done.errors.append(outcome)
                    break
                cursor[i] += 1
                if outcome is Applied.STOP:
                    done.stopped = True
                    return done
        return done
