"""The drain the controllers ask at every retry (one cached verdict per kind of pod, read
straight off the Pod objects) decides as kubectl does when every filter runs on every
pod (tests/support/drainpods.reference), for any pods and any flags; `evictable` picks
exactly the pods it lets go; and a verdict cached for one pod is the verdict for every
pod alike.

SPEC E3 (a node is drained before its update) and G11 (drains through the Eviction API).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cluster.drain import DrainPod, Flags, drain, evictable
from kupgrade.cluster.objects import MIRROR_ANNOTATION
from kupgrade.versions.times import rfc3339
from tests.support.drainpods import NOW, as_pod, judged, reference

described = st.lists(
    st.builds(
        DrainPod,
        st.sampled_from(["p0", "p1", "p2", "p3"]),
        st.sampled_from(["a", "b"]),
        st.sampled_from(["none", "ReplicaSet", "DaemonSet", "StatefulSet", "Job"]),
        st.booleans(),
        st.sampled_from(["Running", "Pending", "Succeeded", "Failed"]),
        st.booleans(),
        st.one_of(st.none(), st.integers(0, 600)),
    ),
    max_size=12,
    unique_by=lambda p: (p.namespace, p.name),
)


@st.composite
def pods(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Pod objects as a cluster holds them, odd ones too (a non-controller owner, a
    volume that is not an object, other annotations)."""
    count = draw(st.integers(0, 12))
    out = []
    for i in range(count):
        owner = draw(st.sampled_from([None, "ReplicaSet", "DaemonSet", "StatefulSet", "Job"]))
        meta: dict[str, Any] = {"name": f"p{i}", "namespace": draw(st.sampled_from(["a", "b"]))}
        if owner is not None:
            controller = draw(st.booleans())
            meta["ownerReferences"] = [{"kind": owner, "name": "o", "controller": controller}]
        if draw(st.booleans()):
            meta["annotations"] = {MIRROR_ANNOTATION: "x"} if draw(st.booleans()) else {"k": "v"}
        if draw(st.booleans()):
            meta["deletionTimestamp"] = rfc3339(NOW - draw(st.integers(0, 600)))
        volumes = draw(
            st.lists(st.sampled_from([{"emptyDir": {}}, {"hostPath": {}}, "odd"]), max_size=2)
        )
        phase = draw(st.sampled_from(["Running", "Pending", "Succeeded", "Failed"]))
        out.append({"metadata": meta, "spec": {"volumes": volumes}, "status": {"phase": phase}})
    return out


flags = st.builds(
    Flags,
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([0, 0, 30, 300]),
)


@given(described, flags)
def test_the_drain_decides_as_every_filter_on_every_pod(found: list[DrainPod], f: Flags) -> None:
    assert judged(found, f).to_json() == reference(found, f)


@given(described, flags)
def test_evictable_picks_what_the_drain_lets_go(found: list[DrainPod], f: Flags) -> None:
    objects = [as_pod(p) for p in found]
    decision, going = drain(objects, f, NOW)
    assert evictable(objects, NOW, f) == going
    assert [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in going] == (
        decision.evicted
    )
    assert all(any(p is o for o in objects) for p in going)  # the very objects, in order


@given(pods(), flags)
def test_pods_alike_are_judged_alike(found: list[dict[str, Any]], f: Flags) -> None:
    """The same pods under other names: the same decisions, under the new names."""
    renamed = [{**p, "metadata": {**p["metadata"], "name": f"q{i}"}} for i, p in enumerate(found)]
    first = drain(found, f, NOW)[0].to_json()
    again = drain(renamed, f, NOW)[0].to_json()
    assert str(first).replace("/p", "/q") == str(again)
