"""Pool rules against ../shared/conformance/mco/rollout.yaml (SPEC E1-E6)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.controllers.nodes import pool as mcp
from kupgrade.controllers.nodes.tracker import PoolTracker
from kupgrade.errors import InputError
from tests.support.caseuse import case_params
from tests.support.conformance import conformance_cases, need_case
from tests.support.mcokit import node_of

FILE = ("mco", "rollout.yaml")


def cases(section: str) -> list[Any]:
    return conformance_cases(section, *FILE) + case_params(OWN.get(section, []))


# Documented inputs no public case uses yet, as cases of our own (README section 2): the
# arbiter pool, image-mode annotations, NetworkUnavailable and DiskPressure, zones among
# unlabelled nodes, another pool's name and a render failure beside a degraded node.
OWN: dict[str, list[dict[str, Any]]] = {
    "max_unavailable": [
        {
            "id": "own/max-unavailable/arbiter",
            "input": {"max_unavailable": 3, "nodes_in_pool": 3, "pool": "arbiter"},
            "expect": {"value": 1, "error": False},
        }
    ],
    "unavailable_nodes": [
        {
            "id": "own/unavailable/image-mode",
            "input": {
                "nodes": [
                    {
                        "name": "same-image",
                        "currentConfig": "r1",
                        "desiredConfig": "r1",
                        "state": "Done",
                        "currentImage": "img-1",
                        "desiredImage": "img-1",
                        "conditions": {"Ready": "True"},
                    },
                    {
                        "name": "new-image",
                        "currentConfig": "r1",
                        "desiredConfig": "r1",
                        "state": "Done",
                        "currentImage": "img-1",
                        "desiredImage": "img-2",
                        "conditions": {"Ready": "True"},
                    },
                    {
                        "name": "failing",
                        "currentConfig": "r0",
                        "desiredConfig": "r1",
                        "state": "Unreconcilable",
                        "reason": "cannot apply in place",
                        "conditions": {"Ready": "True"},
                    },
                    {
                        "name": "no-network",
                        "currentConfig": "r1",
                        "desiredConfig": "r1",
                        "state": "Done",
                        "conditions": {"Ready": "True", "NetworkUnavailable": "True"},
                    },
                ]
            },
            "expect": {"unavailable": ["new-image", "no-network"]},
        }
    ],
    "candidates": [
        {
            "id": "own/candidates/image-and-zones",
            "input": {
                "pool_target": "r2",
                "max_unavailable": 3,
                "nodes": [
                    {
                        "name": "n1",
                        "currentConfig": "r1",
                        "desiredConfig": "r1",
                        "state": "Done",
                        "conditions": {"Ready": "True"},
                        "created": "2024-01-02T00:00:00Z",
                    },
                    {
                        # at the target but still carrying a desiredImage: not done, and a
                        # candidate again in a non-layered pool
                        "name": "n2",
                        "currentConfig": "r2",
                        "desiredConfig": "r2",
                        "state": "Done",
                        "desiredImage": "img",
                        "conditions": {"Ready": "True"},
                        "created": "2024-01-01T00:00:00Z",
                    },
                    {
                        "name": "n3",
                        "currentConfig": "r1",
                        "desiredConfig": "r1",
                        "state": "Done",
                        "conditions": {
                            "Ready": "True",
                            "DiskPressure": "False",
                            "NetworkUnavailable": "True",
                        },
                        "created": "2024-01-01T00:00:00Z",
                    },
                    {
                        "name": "n4",
                        "currentConfig": "r1",
                        "desiredConfig": "r1",
                        "state": "Done",
                        "conditions": {"Ready": "True"},
                        "zone": "a",
                        "created": "2024-01-03T00:00:00Z",
                    },
                ],
            },
            # n2 and n3 are unavailable: 3 - 2 = 1 slot; zone "a" first, then the oldest.
            "expect": {"capacity": 1, "targeted": ["n4"], "other_candidates": ["n2", "n1"]},
        }
    ],
    "get_mcp": [
        {
            "id": "own/get-mcp/infra-render-and-node-degraded",
            "input": {
                "pool": "infra",
                "pool_target": "rendered-infra-2",
                "status_configuration_before": "rendered-infra-1",
                "paused": False,
                "render_degraded": True,
                "nodes": [
                    {
                        "name": "infra-0",
                        "currentConfig": "rendered-infra-2",
                        "desiredConfig": "rendered-infra-2",
                        "state": "Done",
                        "conditions": {"Ready": "True"},
                    },
                    {
                        "name": "infra-1",
                        "currentConfig": "rendered-infra-1",
                        "desiredConfig": "rendered-infra-2",
                        "state": "Unreconcilable",
                        "reason": "kernel arguments cannot change in place",
                        "conditions": {"Ready": "True"},
                    },
                    {
                        "name": "infra-2",
                        "currentConfig": "rendered-infra-1",
                        "desiredConfig": "rendered-infra-1",
                        "state": "Done",
                        "conditions": {"Ready": "True", "NetworkUnavailable": "True"},
                    },
                ],
            },
            "expect": {
                "columns": {
                    "CONFIG": "rendered-infra-1",
                    "UPDATED": "False",
                    "UPDATING": "True",
                    "DEGRADED": "True",
                    "MACHINECOUNT": 3,
                    "READYMACHINECOUNT": 1,
                    "UPDATEDMACHINECOUNT": 1,
                    "DEGRADEDMACHINECOUNT": 1,
                },
                "unavailableMachineCount": 1,
                "conditions": {
                    "Updated": {"status": "False", "reason": "", "message": ""},
                    "Updating": {
                        "status": "True",
                        "reason": "",
                        "message": "All nodes are updating to MachineConfig rendered-infra-2",
                    },
                    "NodeDegraded": {
                        "status": "True",
                        "reason": "1 nodes are reporting degraded status on sync",
                        "message": 'Node infra-1 is reporting: "kernel arguments cannot change '
                        'in place"',
                    },
                    # The render failure adds no text: only the nodes' reasons are carried.
                    "Degraded": {
                        "status": "True",
                        "reason": "",
                        "message": 'Node infra-1 is reporting: "kernel arguments cannot change '
                        'in place"',
                    },
                },
            },
        }
    ],
}


def need(case: Any) -> dict[str, Any]:
    return need_case(case, *FILE)


@pytest.mark.parametrize("case", cases("max_unavailable"))
def test_max_unavailable(case: Any) -> None:
    case = need(case)
    i, expect = case["input"], case["expect"]
    if expect["error"]:
        assert expect["value"] is None  # an error gives no value
        with pytest.raises(InputError):
            mcp.max_unavailable(i["max_unavailable"], i["nodes_in_pool"], i["pool"])
    else:
        assert (
            mcp.max_unavailable(i["max_unavailable"], i["nodes_in_pool"], i["pool"])
            == expect["value"]
        )


@given(st.integers(0, 100), st.integers(1, 500))
def test_max_unavailable_percent_is_floor_at_least_one(percent: int, nodes: int) -> None:
    got = mcp.max_unavailable(f"{percent}%", nodes)
    assert got == max(1, percent * nodes // 100)
    assert 1 <= got <= max(1, nodes)


@pytest.mark.parametrize("case", cases("node_ready"))
def test_node_ready(case: Any) -> None:
    case = need(case)
    nodes = [node_of(n) for n in case["input"]["nodes"]]
    assert [mcp.name_of(n) for n in nodes if mcp.is_ready(n)] == case["expect"]["ready"]


@pytest.mark.parametrize("case", cases("unavailable_nodes"))
def test_unavailable_nodes(case: Any) -> None:
    case = need(case)
    nodes = [node_of(n) for n in case["input"]["nodes"]]
    assert [mcp.name_of(n) for n in nodes if mcp.is_unavailable(n)] == case["expect"]["unavailable"]


@pytest.mark.parametrize("case", cases("candidates"))
def test_candidates(case: Any) -> None:
    case = need(case)
    i = case["input"]
    got = mcp.candidates([node_of(n) for n in i["nodes"]], i["pool_target"], i["max_unavailable"])
    assert got.to_json() == case["expect"]


@pytest.mark.parametrize("case", cases("zone_sort"))
def test_zone_sort(case: Any) -> None:
    case = need(case)
    nodes = [node_of(n) for n in case["input"]["nodes"]]
    assert [mcp.name_of(n) for n in mcp.zone_order(nodes)] == case["expect"]["order"]


def test_control_plane_defers_the_operator_node() -> None:
    nodes = [
        node_of(
            {"name": f"master-{i}", "currentConfig": "a", "desiredConfig": "a", "state": "Done"}
        )
        for i in range(3)
    ]
    got = mcp.candidates(nodes, "b", 1, defer="master-0")
    assert got.targeted == ["master-1"] and got.others == ["master-2", "master-0"]


@pytest.mark.parametrize("case", cases("get_mcp"))
def test_get_mcp(case: Any) -> None:
    case = need(case)
    i, expect = case["input"], case["expect"]
    got = mcp.pool_status(
        [node_of(n) for n in i["nodes"]],
        i["pool_target"],
        i["status_configuration_before"],
        paused=i["paused"],
        # render_controller.go syncFailingStatus words RenderDegraded this way.
        render_degraded=f"Failed to render configuration for pool {i.get('pool', 'worker')}: "
        "could not generate rendered MachineConfig"
        if i["render_degraded"]
        else None,
    )
    assert got.columns() == expect["columns"]
    assert got.unavailable == expect["unavailableMachineCount"]
    assert got.conditions == expect["conditions"]


_node_specs = st.fixed_dictionaries(
    {
        "currentConfig": st.sampled_from(["old", "new", None]),
        "desiredConfig": st.sampled_from(["old", "new", "other", None]),
        "state": st.sampled_from(["Done", "Working", "Degraded", "Unreconcilable", None]),
        "reason": st.sampled_from(["", "disk full", None]),
        "desiredImage": st.sampled_from([None, "img"]),
        "zone": st.sampled_from([None, "a", "b"]),
        "created": st.sampled_from(["2024-01-01T00:00:01Z", "2024-01-01T00:00:01.5Z", None]),
        "unschedulable": st.booleans(),
        "conditions": st.sampled_from(
            [None, {"Ready": "True"}, {"Ready": "False"}, {"Ready": "True", "DiskPressure": "True"}]
        ),
    }
)


@given(
    st.lists(st.tuples(st.integers(0, 7), _node_specs), min_size=1, max_size=40),
    st.sampled_from(["new", "old"]),
    st.integers(1, 6),
    st.sampled_from([None, "n3"]),
    st.booleans(),
)
def test_tracker_agrees_with_the_rules_after_every_change(
    changes: list[tuple[int, dict[str, Any]]],
    target: str,
    limit: int,
    defer: str | None,
    paused: bool,
) -> None:
    """The incremental PoolTracker gives what candidates()/pool_status() give, change by change."""

    tracker = PoolTracker("old")
    tracker.retarget(target)
    nodes: dict[str, dict[str, Any]] = {}
    for i, (which, spec) in enumerate(changes):
        name = f"n{which}"
        if i % 11 == 10:
            nodes.pop(name, None)
            tracker.remove(name)
        else:
            nodes[name] = node_of({**spec, "name": name})
            tracker.put(nodes[name])
        ordered = [nodes[n] for n in sorted(nodes)]
        expected = mcp.candidates(ordered, target, limit, defer)
        assert tracker.candidates(limit, defer) == expected.targeted
        assert tracker.status("old", paused=paused) == mcp.pool_status(
            ordered, target, "old", paused=paused
        )


def test_render_failure_degrades_the_pool_without_a_node_message() -> None:
    """status.go (dc7fd14f7^): Degraded = NodeDegraded or RenderDegraded, and only the
    nodes' reasons are carried into its message."""
    done = node_of({"name": "w-0", "currentConfig": "r1", "desiredConfig": "r1", "state": "Done"})
    got = mcp.pool_status([done], "r1", "r1", render_degraded="Failed to render configuration")
    assert got.conditions["Degraded"] == {"status": "True", "reason": "", "message": ""}
    assert got.conditions["NodeDegraded"]["status"] == "False"
    assert got.columns()["DEGRADED"] == "True"


def test_node_reasons_are_go_quoted() -> None:
    broken = node_of(
        {
            "name": "w-1",
            "currentConfig": "r0",
            "desiredConfig": "r1",
            "state": "Degraded",
            "reason": 'open "/etc/x": no such file\nretrying',
        }
    )
    got = mcp.pool_status([broken], "r1", "r0", render_degraded="render failed")
    assert got.conditions["Degraded"]["message"] == (
        'Node w-1 is reporting: "open \\"/etc/x\\": no such file\\nretrying"'
    )
