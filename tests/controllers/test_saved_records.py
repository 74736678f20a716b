"""Controllers' records kept with the cluster (controllers/saved.py): a record written by the
kupgrade before records were typed reads back the same, one written now reads back
equal, an unchanged record writes nothing, and a damaged one is named with what to do."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cluster.fake import MemoryBackend
from kupgrade.controllers import saved
from kupgrade.controllers.gdc.request import GdcUpgrade, upgrade_record
from kupgrade.controllers.kube.record import STATE as KUBE
from kupgrade.controllers.kube.record import KubeUpgrade
from kupgrade.controllers.kube.record import upgrade_record as kube_record
from kupgrade.controllers.nodes.drains import DrainState, drain_state
from kupgrade.controllers.version.record import VersionState, version_head, version_state
from kupgrade.errors import InputError

# As the kupgrade before typed records stored them (a plan of `upgrade`'s, a fleet's
# steps, a distributed-cloud request half-way, a drain, a version controller mid-update).
OLD_PLAN = {
    "target": "1.31.2",
    "policy": "auto",
    "index": 1,
    "started": 12.0,
    "steps": [
        {"id": "s1", "object": "control-plane", "from": "1.30.4", "to": "1.30.9", "after": []},
        {"id": "s2", "object": "nodepool/worker", "from": "1.30.4", "to": "1.31.2", "after": []},
    ],
    "kubeadm": {"version": "1.31.2", "allowRCs": True},
    "phase": "nodes",
    "cleared": ["kubelet", "worker-0", "1.31.2"],
    "drain": {"node": "worker-0", "next": 40.0, "held": None},
}
OLD_FLEET = {
    "parallel": {
        "s1": {
            "step": {"id": "s1", "object": "control-plane", "from": "1.30.4", "to": "1.31.2"},
            "policy": "k8s-n2",
            "started": 3.0,
            "done": 9.0,
        },
        "s2": {
            "step": {"id": "s2", "object": "nodepool/a", "from": "1.30.4", "to": "1.31.2"},
            "policy": "k8s-n2",
            "started": 9.0,
            "blocked": "H3: the kubelet skew",
        },
    }
}
OLD_GDC = {
    "serial": 2,
    "cluster": "c",
    "namespace": "cluster-c",
    "target": "1.29.100-gke.251",
    "from": "1.28.500-gke.120",
    "bmctl": "1.29.100-gke.251",
    "pool": None,
    "leavePools": ["w2"],
    "method": "in-place",
    "requestedAt": 5.0,
    "stages": {
        "preflight": {"started": 5.0, "done": 65.0},
        "set-spec-version": {"started": 65.0, "done": None},
    },
    "fields": ["controlPlaneNodepoolStatus"],
    "wakeAt": 125.0,
}
OLD_DRAIN = {
    "for": "drain-rendered-worker-2",
    "started": 7.0,
    "next": 67.0,
    "failing": 7.0,
    "warned": ["ignoring DaemonSet-managed Pods"],
    "retry": 60.0,
    "blocked": ["pod/a/b: refused"],
}
OLD_VERSION = {
    "image": "quay.io/r@sha256:ab",
    "version": "4.14.1",
    "mode": "Updating",
    "verified": True,
    "risks": "",
    "release": {"version": "4.14.1", "image": "quay.io/r@sha256:ab"},
    "accepted": {
        "type": "ReleaseAccepted",
        "status": "True",
        "reason": "PayloadLoaded",
        "message": "m",
    },
    "versionHash": "h",
    "total": 3,
    "nodes": [[0, 1], [2]],
    "deps": [[1], []],
    "runlevels": [[["00", 2]], [["10", 1]]],
    "operators": [["10", "dns"]],
    "workers": 1,
    "cursor": [2, 0],
    "deletes": [["ConfigMap", "ns", "old"]],
    "waiting": {"dns": 30.0},
    "started": 20.0,
    "completed": False,
    "failure": None,
    "done": 2,
    "refused": {
        "image": "quay.io/r@sha256:cd",
        "condition": {"type": "ReleaseAccepted"},
        "failure": None,
        "retry_at": 400.0,
        "attempts": 2,
    },
}


def _backend(key: str, value: Any) -> MemoryBackend:
    api = MemoryBackend()
    api.set_state(key, value)
    api.changed = False
    return api


def test_a_kube_plan_stored_before_typed_records_reads_back() -> None:
    record = kube_record(_backend(KUBE, OLD_PLAN))
    assert record is not None and record.parallel is None and record.running
    assert [(s.id, s.pool, s.source, s.to) for s in record.steps] == [
        ("s1", "", "1.30.4", "1.30.9"),
        ("s2", "worker", "1.30.4", "1.31.2"),
    ]
    assert record.kubeadm is not None and record.kubeadm.allow_rcs and not record.kubeadm.force
    assert record.drain is not None and record.drain.node == "worker-0"
    assert (record.index, record.phase, record.cleared) == (1, "nodes", OLD_PLAN["cleared"])
    # Written back, it says the same, what is at its default (the policy, a step's empty
    # `after`) left out.
    steps = [{k: v for k, v in step.items() if k != "after"} for step in OLD_PLAN["steps"]]
    expected = {**{k: v for k, v in OLD_PLAN.items() if k != "policy"}, "steps": steps}
    assert msgspec.to_builtins(record) == expected
    assert msgspec.convert(expected, KubeUpgrade) == record


def test_a_fleets_steps_stored_before_typed_records_read_back() -> None:
    record = kube_record(_backend(KUBE, OLD_FLEET))
    assert record is not None and record.parallel is not None and record.running
    done, blocked = record.parallel["s1"], record.parallel["s2"]
    assert (done.done, done.policy, blocked.done, blocked.blocked) == (
        9.0,
        "k8s-n2",
        None,
        "H3: the kubelet skew",
    )
    assert blocked.step.pool == "a"
    record.parallel["s2"].done = 20.0
    assert not record.running


def test_a_distributed_cloud_request_and_a_drain_read_back() -> None:
    gdc = upgrade_record(_backend("gdc", OLD_GDC))
    assert gdc is not None and gdc.running and gdc.source == "1.28.500-gke.120"
    assert gdc.leave_pools == ["w2"] and gdc.wake_at == 125.0 and not gdc.pivoted
    assert gdc.stages["preflight"].done == 65.0 and gdc.stages["set-spec-version"].done is None
    drain = drain_state(_backend("drain:worker-2", OLD_DRAIN), "worker-2")
    assert drain is not None and drain.request == "drain-rendered-worker-2"
    assert (drain.failing, drain.retry, drain.threshold, drain.timeout) == (7.0, 60.0, False, False)


def test_the_version_controllers_record_and_its_head() -> None:
    api = _backend("version", OLD_VERSION)
    state, head = version_state(api), version_head(api)
    assert state.updating and head.updating and head.image == state.image
    assert state.deletes == [("ConfigMap", "ns", "old")] and state.runlevels == [
        [("00", 2)],
        [("10", 1)],
    ]
    assert head.refusal is not None and head.refusal.attempts == 2
    assert version_state(MemoryBackend()).image == "" and not version_head(MemoryBackend()).updating


@pytest.mark.parametrize(
    ("key", "value", "kind"),
    [
        ("gdc", OLD_GDC, GdcUpgrade),
        (KUBE, OLD_PLAN, KubeUpgrade),
        (KUBE, OLD_FLEET, KubeUpgrade),
        ("d", OLD_DRAIN, DrainState),
        ("version", OLD_VERSION, VersionState),
    ],
)
def test_an_unchanged_record_writes_nothing(key: str, value: Any, kind: type[Any]) -> None:
    # Stored as a backend gives it back: JSON (a served cluster's ConfigMap), where the
    # record's pairs are lists; a save that handed over tuples would write every pass.
    api = _backend(key, json.loads(msgspec.json.encode(msgspec.convert(value, kind))))
    record = saved.load(api, key, kind)
    saved.save(api, key, record)
    assert not api.changed
    saved.save(api, key, None)
    assert api.changed and saved.load(api, key, kind) is None


RECORDS: list[tuple[dict[str, Any], type[msgspec.Struct]]] = [
    (OLD_GDC, GdcUpgrade),
    (OLD_PLAN, KubeUpgrade),
    (OLD_FLEET, KubeUpgrade),
    (OLD_DRAIN, DrainState),
    (OLD_VERSION, VersionState),
]


@given(
    st.sampled_from(RECORDS),
    st.sampled_from(["serial", "steps", "parallel", "started", "nodes", "stages", "for", "x"]),
    st.sampled_from(["text", -1, [1], {"a": None}, None, 1.5]),
)
def test_a_damaged_record_is_named_or_read(
    record: tuple[dict[str, Any], type[msgspec.Struct]], field: str, value: Any
) -> None:
    """Any field of any record given a value of another type: read (the type fits, or the
    field is not the record's) or refused naming the record and what to do."""
    base, kind = record
    api = _backend("k", {**base, field: value})
    try:
        saved.load(api, "k", kind)
    except InputError as exc:
        assert "upgrade state 'k' kept with the cluster is not readable" in exc.message
        assert exc.hint


def test_a_record_of_the_wrong_shape_is_refused() -> None:
    with pytest.raises(InputError, match=r"upgrade state 'gdc' .* not readable: .*serial"):
        upgrade_record(_backend("gdc", {**OLD_GDC, "serial": "two"}))
    with pytest.raises(InputError, match="not readable"):
        kube_record(_backend(KUBE, ["not", "an", "object"]))
