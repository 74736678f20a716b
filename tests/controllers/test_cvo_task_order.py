"""The version controller applies a release's task graph in the order the task-graph
conformance cases expect (SPEC D1-D3): for every case that gives a sequential order, the
controller with one worker, pass after pass, applies the case's manifests in exactly that
order, through the scheduler the cases themselves drive (release/schedule.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kupgrade.controllers.version.controller import VersionController
from kupgrade.controllers.version.record import VersionState
from kupgrade.release.manifest import Manifest, ResourceId
from kupgrade.release.taskgraph import (
    Task,
    TaskGraph,
    by_number_and_component,
    flatten_by_number_and_component,
    is_job,
)
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.openshift.wiring import wiring_for
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.store import Store
from tests.support.caseuse import unused
from tests.support.conformance import conformance_cases, need_case

BREAK_FNS = {
    "by_number_and_component": by_number_and_component,
    "flatten_by_number_and_component": flatten_by_number_and_component,
}
TASKGRAPH = ("cvo", "taskgraph.yaml")


def _task(item: str | dict[str, str]) -> Task:
    return Task(item) if isinstance(item, str) else Task(item["file"], item.get("kind") == "Job")


def _manifest(file: str) -> Manifest:
    """The task as a ConfigMap named after it: its order is what is checked."""
    name = file.lower().replace("_", "-").replace(".", "-")
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "openshift-x"},
    }
    return Manifest(file, obj, b"", ResourceId("", "ConfigMap", "openshift-x", name))


@pytest.mark.parametrize(
    "case",
    conformance_cases(
        "cases",
        *TASKGRAPH,
        where=lambda c: (
            c["op"] == "split_then_parallelize" and "sequential_execution_order" in c["expect"]
        ),
    ),
)
def test_the_controller_applies_in_the_cases_order(
    case: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = need_case(case, *TASKGRAPH)
    unused(case, "expect.nodes", "expect.steps")  # the graph itself: test_release_conformance
    tasks = [_task(t) for t in case["input"]["tasks"]]
    graph = TaskGraph.of(tasks)
    graph.split(is_job)
    graph.parallelize(BREAK_FNS[case["break_fn"]])
    index = {t.file: i for i, t in enumerate(tasks)}
    state = VersionState(
        version="4.14.0",
        mode="Updating",
        workers=1,
        nodes=[[index[t.file] for t in node.tasks] for node in graph.nodes],
        deps=[list(node.into) for node in graph.nodes],
        cursor=[0] * len(graph.nodes),
    )
    spec = Spec(pools=[])
    root = create_cluster(tmp_path, "c", Profile(spec=spec))
    api = SimCluster(Store(root / "cluster.db"))
    controller = VersionController(api, wiring_for(root, spec))
    payload = SimpleNamespace(included=[_manifest(t.file) for t in tasks])
    monkeypatch.setattr(controller, "_payload_for", lambda _state: payload)
    applied: list[str] = []
    apply = api.apply
    monkeypatch.setattr(
        api, "apply", lambda obj: applied.append(obj["metadata"]["name"]) or apply(obj)
    )
    for _ in range(len(graph.nodes) + 1):
        if state.completed:
            break
        controller._apply(state)
    assert state.completed
    names = {m.obj["metadata"]["name"]: m.file for m in payload.included}
    assert [names[n] for n in applied] == case["expect"]["sequential_execution_order"]
