"""Release payloads against the version controller's conformance data (SPEC B, C5, D).

Every load of payloads/expected.yaml (hash included), every inclusion case and every
task-graph case, read from ../shared at run time.
"""

from __future__ import annotations

import copy
import random
import threading
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from kupgrade.release.inclusion import Capabilities, Options, Override, exclusion_reason
from kupgrade.release.manifest import ResourceId
from kupgrade.release.metadata import ARCH_KEY, CHANNELS_KEY
from kupgrade.release.payload import LoadOptions, load_payload, read_directory
from kupgrade.release.taskgraph import (
    Task,
    TaskGraph,
    TaskNode,
    by_number_and_component,
    flatten_by_number_and_component,
    is_job,
    permute_order,
    shift_order,
)
from tests.support.caseuse import case_params, plain, unused
from tests.support.conformance import CONFORMANCE, conformance_cases, conformance_path, need_case
from tests.support.taskgraph import CancelledError, run_graph


def _doc(*parts: str) -> dict[str, Any]:
    return yaml.safe_load(conformance_path("cvo", *parts).read_text())


def _ids(*parts: str, key: str = "cases") -> list[str]:
    path = CONFORMANCE.joinpath("cvo", *parts)
    if not path.exists():
        return ["conformance-data-missing"]
    doc = yaml.safe_load(path.read_text())
    if key == "loads":
        return [load["id"] for fixture in doc["fixtures"] for load in fixture["loads"]]
    return [case["id"] for case in doc[key]]


def _capabilities(value: dict[str, list[str]] | None) -> Capabilities | None:
    return Capabilities(tuple(value["known"]), tuple(value["enabled"])) if value else None


def _gates(value: list[str] | None) -> frozenset[str] | None:
    return frozenset(value) if value is not None else None


# --- payloads/expected.yaml -------------------------------------------------------------------


def _loads() -> list[Any]:
    """One tracked param per load of every fixture (the fixture's path rides along)."""
    path = CONFORMANCE / "cvo" / "payloads" / "expected.yaml"
    if not path.exists():
        return [pytest.param(None, id="conformance-data-missing")]
    fixtures = yaml.safe_load(path.read_text())["fixtures"]
    loads = [{**load, "fixture_path": f["path"]} for f in fixtures for load in f["loads"]]
    # The fixture's path rides along; reading it here counts as read.
    return case_params(loads, where=lambda load: bool(load["fixture_path"]))


@pytest.mark.parametrize("load", _loads())
def test_payload_loads_as_the_controller_does(load: Any) -> None:
    """SPEC C5: files, order, raw bytes, exclusions with reasons, total and versionHash."""
    load = need_case(load, "cvo", "payloads", "expected.yaml")
    root = conformance_path("cvo", "payloads") / load["fixture_path"]
    # Which hashes also appear as literals in the CVO's tests: provenance, not an outcome.
    unused(load, "version_hash_check")
    o = load["options"]
    options = LoadOptions(
        o["release_image"],
        Options(
            exclude=o["exclude"],
            required_feature_set=o["required_feature_set"],
            profile=o["profile"],
            capabilities=_capabilities(o["capabilities"]),
            enabled_feature_gates=_gates(o["enabled_feature_gates"]),
        ),
    )
    payload = load_payload(read_directory(root), options)
    assert payload.release_json() == load["release"]
    assert payload.metadata.major == load["major_version"]
    got_included = [
        {
            "index": i,
            "file": m.file,
            "group": m.id.group,
            "kind": m.id.kind,
            "namespace": m.id.namespace,
            "name": m.id.name,
            "raw": m.raw.decode(),
        }
        for i, m in enumerate(payload.included, start=1)
    ]
    assert [g["raw"] for g in got_included] == [e["raw"] for e in load["included"]]
    assert got_included == plain(load["included"])
    got_excluded = [
        {
            "file": e.manifest.file,
            "group": e.manifest.id.group,
            "kind": e.manifest.id.kind,
            "namespace": e.manifest.id.namespace,
            "name": e.manifest.id.name,
            "reason": e.reason,
        }
        for e in payload.excluded
    ]
    assert got_excluded == load["excluded"]
    assert payload.ignored == load["ignored_files"]
    assert [{"file": s.file, "reason": s.reason} for s in payload.skipped] == load["skipped_files"]
    assert payload.total == load["total"]
    assert payload.version_hash == load["version_hash"]
    assert payload.version_hash != load["fnv1a_would_give"] or load["total"] == 0


def test_release_metadata_of_every_fixture() -> None:
    doc = _doc("payloads", "expected.yaml")
    root = conformance_path("cvo", "payloads")
    for fixture in doc["fixtures"]:
        payload = load_payload(read_directory(root / fixture["path"]))
        meta, expected = payload.metadata, fixture["release_metadata"]
        assert meta.version == expected["version"]
        assert list(meta.previous) == expected["previous"]
        assert list(meta.next) == expected["next"]
        assert meta.url == expected["url"]
        assert meta.channels == expected["channels_sorted"]
        assert meta.metadata.get(CHANNELS_KEY) == expected["channels_raw"]
        assert meta.metadata.get(ARCH_KEY) == expected["architecture_raw"]
        assert meta.to_json()["kind"] == expected["kind"]
        assert payload.image_references.name == fixture["image_references_name"]


# --- inclusion.yaml -----------------------------------------------------------------------------


@pytest.mark.parametrize("case", conformance_cases("cases", "cvo", "inclusion.yaml"))
def test_inclusion_case(case: Any) -> None:
    """SPEC C5: the inclusion checks in library-go's order, with its exact reasons."""
    case = need_case(case, "cvo", "inclusion.yaml")
    m, o = case["manifest"], case["options"]
    group = m["apiVersion"].rsplit("/", 1)[0] if "/" in m["apiVersion"] else ""
    overrides = o["overrides"]
    options = Options(
        exclude=o["exclude"],
        required_feature_set=o["required_feature_set"],
        profile=o["profile"],
        capabilities=_capabilities(o["capabilities"]),
        overrides=tuple(
            Override(x["kind"], x["group"], x["namespace"], x["name"], x["unmanaged"])
            for x in overrides
        )
        if overrides is not None
        else None,
        enabled_feature_gates=_gates(o["enabled_feature_gates"]),
        major_version=o["major_version"],
        allow_unknown_capabilities=o["allow_unknown_capabilities"],
    )
    reason = exclusion_reason(
        ResourceId(group, m["kind"], m["namespace"], m["name"]), plain(case["annotations"]), options
    )
    assert reason == case["expect"]["reason"]
    assert (reason is None) == case["expect"]["included"]


# --- taskgraph.yaml -----------------------------------------------------------------------------


def _task(item: str | dict[str, str]) -> Task:
    return Task(item) if isinstance(item, str) else Task(item["file"], item.get("kind") == "Job")


def _nodes(items: list[dict[str, Any]]) -> list[TaskNode]:
    return [TaskNode([_task(t) for t in n["tasks"]], list(n["in"]), list(n["out"])) for n in items]


def _buckets(buckets: list[list[list[Task]]]) -> list[list[list[str]]] | None:
    return [[[t.file for t in node] for node in bucket] for bucket in buckets] or None


BREAK_FNS = {
    "by_number_and_component": by_number_and_component,
    "flatten_by_number_and_component": flatten_by_number_and_component,
}


def _configmap_task(item: str | dict[str, str]) -> Task:
    """A task as task_graph_test.go TestRunGraph builds it: a ConfigMap in namespace
    default named after the task (index 0 of 0), so messages name it as the controller does."""
    task = _task(item)
    return replace(
        task, payload=SimpleNamespace(id=ResourceId("", "ConfigMap", "default", task.file))
    )


CALLBACKS = {
    "error",
    "cancel_then_return_context_error",
    "cancel_then_succeed",
    "return_context_error_if_cancelled",
    "must_not_run",
}


def _run_case(case: dict[str, Any]) -> None:
    nodes = case["input"]["nodes"]
    graph = TaskGraph(
        [
            TaskNode([_configmap_task(t) for t in n["tasks"]], list(n["in"]), list(n["out"]))
            for n in nodes
        ]
    )
    callbacks = plain(case["callbacks"])  # keyed by task name: looked up, not walked
    for behaviour in callbacks.values():
        assert set(behaviour) <= CALLBACKS, f"unknown callback {set(behaviour) - CALLBACKS}"
    executed: list[str] = []

    def fn(task: Task, cancel: threading.Event) -> None:
        behaviour = callbacks.get(task.file, callbacks.get("*", {}))
        assert not behaviour.get("must_not_run"), task.file
        if "error" in behaviour:
            raise RuntimeError(behaviour["error"])
        if behaviour.get("cancel_then_return_context_error"):
            cancel.set()
            raise CancelledError()
        if behaviour.get("cancel_then_succeed"):
            cancel.set()
        elif behaviour.get("return_context_error_if_cancelled") and cancel.is_set():
            raise CancelledError()
        executed.append(task.file)

    errors = sorted(str(e) for e in run_graph(graph, case["max_parallelism"], fn))
    wanted = case["expect"]["errors_sorted_contain"]
    assert len(errors) == len(wanted), errors
    assert all(w in e for e, w in zip(errors, wanted, strict=True)), errors
    for invariant in case["expect"]["invariants"]:
        ((kind, value),) = invariant.items()
        if kind == "exactly":
            assert executed == value
        elif kind == "permutation":
            assert sorted(executed) == sorted(value)
        elif kind == "at_index":
            assert executed[value["index"]] == value["task"]
        elif kind == "subsequence":
            assert any(executed[i : i + len(value)] == value for i in range(len(executed)))
        elif kind == "before" and value[0] in executed and value[1] in executed:
            assert executed.index(value[0]) < executed.index(value[1])


@pytest.mark.parametrize("case", conformance_cases("cases", "cvo", "taskgraph.yaml"))
def test_taskgraph_case(case: Any) -> None:
    """SPEC D1-D3: the controller's graph, node for node and index for index."""
    case = need_case(case, "cvo", "taskgraph.yaml")
    op, given, expect = case["op"], case["input"], case["expect"]
    if op == "split_on_jobs":
        graph = TaskGraph(_nodes(given["nodes"]))
        graph.split(is_job)
        assert graph.to_json()["nodes"] == expect["nodes"]
    elif op in BREAK_FNS:
        assert _buckets(BREAK_FNS[op]([_task(t) for t in given["tasks"]])) == expect["buckets"]
    elif op == "shift_order":
        buckets = [[[Task(t) for t in node] for node in bucket] for bucket in given["buckets"]]
        shifted = shift_order(lambda _tasks: buckets, case["step"], case["stride"])([])
        assert _buckets(shifted) == expect["buckets"]
    elif op == "permute_order":
        # Property only (Go's math/rand order is not portable): each bucket comes back as
        # a permutation of itself, every node's task list unchanged; same seed, same order.
        unused(case, "expect.property")
        buckets = [[[Task(t) for t in node] for node in bucket] for bucket in given["buckets"]]
        names = _buckets(buckets) or []
        for seed in range(5):
            once = _buckets(
                permute_order(lambda _t: copy.deepcopy(buckets), random.Random(seed))([])
            )
            again = _buckets(
                permute_order(lambda _t: copy.deepcopy(buckets), random.Random(seed))([])
            )
            assert once == again
            assert [sorted(b) for b in once or []] == [sorted(b) for b in names]
    elif op == "split_then_parallelize":
        graph = TaskGraph.of([_task(t) for t in given["tasks"]])
        graph.split(is_job)
        graph.parallelize(BREAK_FNS[case["break_fn"]])
        assert graph.to_json()["nodes"] == expect["nodes"]
        if "steps" in expect:
            layers = [
                [[t.file for t in graph.nodes[i].tasks] for i in layer] for layer in graph.steps()
            ]
            assert layers == [s["parallel_nodes"] for s in expect["steps"]]
            assert [s["step"] for s in expect["steps"]] == list(range(1, len(layers) + 1))
            order: list[str] = []
            run_graph(graph, 1, lambda task, _c: order.append(task.file))
            assert order == expect["sequential_execution_order"]
    elif op == "bulk_add":
        graph = TaskGraph(_nodes(given["nodes"]))
        added = graph.bulk_add([TaskNode([Task(t) for t in a]) for a in given["add"]], given["in"])
        assert added == expect["returns"]
        assert graph.to_json()["nodes"] == expect["nodes"]
    elif op == "run_graph":
        _run_case(case)
    else:
        raise AssertionError(f"unknown op {op}")
