"""The runlevel task graph (SPEC D1-D3): which manifests run after which, and in parallel.

Built like the version controller builds it, node for node and index for index, so a
graph printed here can be laid beside the controller's own log: Jobs split the list
(nothing is reordered across a Job); then, for an update, runlevels run in order with the
components of one runlevel in parallel and one component's files in lexicographic order
(ByNumberAndComponent); for an install every (runlevel, component) chunk runs at once
(FlattenByNumberAndComponent); for a reconcile the chunks are rotated by attempt so a
stuck manifest does not always block the same others.
"""

from __future__ import annotations

import random
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kupgrade.versions import go_quote

# SPEC D: 0000_<runlevel>_<component>_<rest>; the component is the shortest dash-joined run.
TASK_PATTERN = re.compile(r"^0000_(\d+)_([a-zA-Z0-9]+(-[a-zA-Z0-9]+)*?)_")

Mode = Literal["update", "install", "reconcile"]
MODES: tuple[Mode, ...] = ("update", "install", "reconcile")
UPDATE_WORKERS = 16
RECONCILE_WORKERS = 2
RECONCILE_STRIDE = 8


@dataclass(frozen=True)
class Task:
    """One manifest to apply; only its file name and whether it is a Job shape the graph."""

    file: str
    is_job: bool = False
    payload: Any = None  # the Manifest, for whoever applies it
    index: int = 0  # 1-based place in the payload, as the controller counts (0: unknown)
    total: int = 0

    def describe(self) -> str:
        """The task as the controller names it in errors (pkg/payload/task.go String and
        getManifestResourceId): `kind "ns/name" (i of n)`, the bare name Go-quoted."""
        ident = getattr(self.payload, "id", None)
        kind = str(getattr(ident, "kind", "")).lower()
        namespace = str(getattr(ident, "namespace", "") or "")
        name = str(getattr(ident, "name", "") or "") or self.file
        shown = f'{kind} "{namespace}/{name}"' if namespace else f"{kind} {go_quote(name)}"
        return f"{shown} ({self.index} of {self.total})"

    @property
    def runlevel_component(self) -> tuple[str, str] | None:
        """(runlevel, component) read from the file name (SPEC D1, D3), None if unnamed."""
        match = TASK_PATTERN.match(self.file)
        return (match.group(1), match.group(2)) if match else None


@dataclass
class TaskNode:
    tasks: list[Task] = field(default_factory=list)
    into: list[int] = field(default_factory=list)  # prerequisite node indexes ("in")
    out: list[int] = field(default_factory=list)

    def replace_in(self, index: int, with_: int) -> None:
        self.into = [with_ if i == index else i for i in self.into]

    def replace_out(self, index: int, with_: int) -> None:
        self.out = [with_ if i == index else i for i in self.out]

    def append_out(self, items: Sequence[int]) -> None:
        for item in items:
            if item not in self.out:
                self.out.append(item)

    def to_json(self) -> dict[str, Any]:
        return {"tasks": [t.file for t in self.tasks], "in": list(self.into), "out": list(self.out)}


Bucket = list[list[Task]]  # parallel nodes, each an ordered task list
BreakFn = Callable[[list[Task]], list[Bucket]]


def _chunks(tasks: list[Task], flatten: bool) -> list[Bucket]:
    """The shared walk of ByNumberAndComponent and FlattenByNumberAndComponent.

    Consecutive files of one runlevel with several components become one bucket of
    parallel nodes; a serial stretch between such buckets becomes one node. `flatten`
    collects every chunk into a single bucket; as in the controller, the accumulated
    bucket then makes each later serial chunk a node of its own.
    """
    if len(tasks) <= 1:
        return []
    matches = [t.runlevel_component for t in tasks]
    buckets: list[Bucket] = []
    flat: Bucket = []
    last: list[Task] | None = None
    i, count = 0, len(tasks)
    while i < count:
        base = matches[i]
        j = i + 1
        groups: Bucket = flat if flatten else []
        while j < count:
            following = matches[j]
            if base is None or following is None or base[0] != following[0]:
                break
            if base[1] != following[1]:
                groups.append(tasks[i:j])
                i = j
            base = following
            j += 1
        if groups:
            groups.append(tasks[i:j])
            i = j
            last = None
            if not flatten:
                buckets.append(groups)
            continue
        if last is None:
            last = list(tasks[i:j])
            if flatten:
                flat.append(last)
            else:
                buckets.append([last])
        else:
            last.extend(tasks[i:j])
        i = j
    return [flat] if flatten else buckets


def by_number_and_component(tasks: list[Task]) -> list[Bucket]:
    """Update order (SPEC D1-D3): runlevels in sequence, components of one in parallel."""
    return _chunks(tasks, flatten=False)


def flatten_by_number_and_component(tasks: list[Task]) -> list[Bucket]:
    """Install order: every (runlevel, component) chunk in parallel, no runlevel order."""
    return _chunks(tasks, flatten=True)


def shift_order(break_fn: BreakFn, step: int, stride: int) -> BreakFn:
    """Rotate each bucket left by step (or step*len/stride for long buckets)."""

    def shifted(tasks: list[Task]) -> list[Bucket]:
        buckets = break_fn(tasks)
        for index, bucket in enumerate(buckets):
            size = len(bucket)
            shift = step % size if size < stride else int(step * size / stride) % size
            buckets[index] = bucket[shift:] + bucket[:shift]
        return buckets

    return shifted


def permute_order(break_fn: BreakFn, rng: random.Random) -> BreakFn:
    """Shuffle each bucket (the controller uses Go's math/rand; the order is not portable)."""

    def permuted(tasks: list[Task]) -> list[Bucket]:
        buckets = break_fn(tasks)
        for bucket in buckets:
            rng.shuffle(bucket)
        return buckets

    return permuted


class TaskGraph:
    """Nodes of sequential task lists wired by in/out indexes; new nodes are appended."""

    def __init__(self, nodes: list[TaskNode] | None = None) -> None:
        self.nodes: list[TaskNode] = nodes if nodes is not None else []

    @staticmethod
    def of(tasks: list[Task]) -> TaskGraph:
        return TaskGraph([TaskNode(list(tasks))])

    def _replace_in_of(self, index: int, with_: int) -> None:
        for position in self.nodes[index].into:
            self.nodes[position].replace_out(index, with_)

    def _replace_out_of(self, index: int, with_: int) -> None:
        for position in self.nodes[index].out:
            self.nodes[position].replace_in(index, with_)

    def split(self, on: Callable[[Task], bool]) -> None:
        """Cut every node around its first task matching `on`: [a] -> [job] -> [rest]."""
        i = 0
        while i < len(self.nodes):
            node = self.nodes[i]
            tasks = node.tasks
            if len(tasks) > 1:
                for j, task in enumerate(tasks):
                    if not on(task):
                        continue
                    if j > 0:
                        following = len(self.nodes)
                        self.nodes.append(TaskNode(tasks[:j], list(node.into), [i]))
                        self._replace_in_of(i, following)
                        node.into = [following]
                    if j < len(tasks) - 1:
                        following = len(self.nodes)
                        self.nodes.append(TaskNode(tasks[j + 1 :], [i], list(node.out)))
                        self._replace_out_of(i, following)
                        node.out = [following]
                    node.tasks = tasks[j : j + 1]
                    break
            i += 1

    def bulk_add(self, nodes: list[TaskNode], into: list[int]) -> list[int]:
        """Append nodes, each depending on every node of `into`; return their indexes."""
        start = len(self.nodes)
        self.nodes.extend(nodes)
        added = list(range(start, len(self.nodes)))
        if not into:
            return added
        for k in added:
            self.nodes[k].into = list(into)
        for k in into:
            self.nodes[k].append_out(added)
        return added

    def parallelize(self, break_fn: BreakFn) -> None:
        """Replace each node's list by chains of buckets, with spacer nodes between wide ones."""
        i = 0
        while i < len(self.nodes):
            node = self.nodes[i]
            results = break_fn(node.tasks)
            if not results or (len(results) == 1 and len(results[0]) == 1):
                i += 1
                continue
            node.tasks = []
            out, node.out = node.out, []
            current = [i]
            for bucket in results:
                if not bucket:
                    continue
                if len(current) > 1 and len(bucket) > 1:
                    current = self.bulk_add([TaskNode()], current)
                current = self.bulk_add([TaskNode(list(b)) for b in bucket], current)
            if out:
                anchor = len(self.nodes)
                right = TaskNode([], [], out)
                self.nodes.append(right)
                for j in out:
                    self.nodes[j].replace_in(i, anchor)
                for j in current:
                    self.nodes[j].out = [anchor]
                    right.into.append(j)
            i += 1

    def to_json(self) -> dict[str, Any]:
        return {"nodes": [n.to_json() for n in self.nodes]}

    @property
    def task_count(self) -> int:
        return sum(len(n.tasks) for n in self.nodes)

    def steps(self) -> list[list[int]]:
        """Layers of non-empty nodes: a layer runs only after every earlier one (SPEC D1)."""
        depth: dict[int, int] = {}

        def level(index: int) -> int:
            if index not in depth:
                node = self.nodes[index]
                below = max((level(p) for p in node.into), default=-1)
                depth[index] = below + (1 if node.tasks else 0)
            return depth[index]

        layers: dict[int, list[int]] = {}
        for index, node in enumerate(self.nodes):
            if node.tasks:
                layers.setdefault(level(index), []).append(index)
        return [layers[k] for k in sorted(layers)]


def is_job(task: Task) -> bool:
    return task.is_job


def build_graph(
    tasks: list[Task], mode: Mode, attempt: int = 0, rng: random.Random | None = None
) -> TaskGraph:
    """The graph the controller runs for `mode` (SPEC D1-D3).

    For a reconcile the controller also shuffles each bucket with Go's math/rand seeded by
    attempt/8; pass `rng` to shuffle here too. Without it the order is the rotation alone,
    which is deterministic and the same everywhere.
    """
    graph = TaskGraph.of(tasks)
    graph.split(is_job)
    if mode == "update":
        graph.parallelize(by_number_and_component)
    elif mode == "install":
        graph.parallelize(flatten_by_number_and_component)
    else:
        base: BreakFn = flatten_by_number_and_component
        if rng is not None:
            base = permute_order(base, rng)
        graph.parallelize(shift_order(base, attempt % RECONCILE_STRIDE, RECONCILE_STRIDE))
    return graph


def workers(mode: Mode, graph: TaskGraph) -> int:
    """Parallel workers the controller uses per mode."""
    if mode == "install":
        return max(1, len(graph.nodes))
    return UPDATE_WORKERS if mode == "update" else RECONCILE_WORKERS


def _float32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


def percent_complete(done: int, total: int) -> int:
    """The controller's float32 arithmetic, truncated: 53 of 100 is 52% (SPEC D, status)."""
    if total <= 0:
        return 0
    return int(_float32(_float32(_float32(done) / _float32(total)) * 100.0))


def progress_text(done: int, total: int) -> str:
    """ "N of M done (P% complete)": M counts every included manifest."""
    return f"{done} of {total} done ({percent_complete(done, total)}% complete)"
