"""The drain's two ways in agree: `evictable` (what the node-draining controllers call, one
cached verdict per kind of pod) picks exactly the pods `drain` (kubectl's whole decision,
with every pod named) lets go, for any pods and any flags; and a verdict cached for one
pod is the verdict for every pod alike."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.cluster.drain import Flags, drain, drain_pod, evictable
from kupgrade.cluster.objects import MIRROR_ANNOTATION
from kupgrade.versions.times import rfc3339

NOW = 1_700_000_000.0


@st.composite
def pods(draw: st.DrawFn) -> list[dict[str, Any]]:
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


@given(pods(), flags)
def test_evictable_picks_what_the_whole_drain_lets_go(
    found: list[dict[str, Any]], f: Flags
) -> None:
    decision = drain([drain_pod(p, NOW) for p in found], f)
    picked = evictable(found, NOW, f)
    if decision.errors:
        assert picked == []
    else:
        keys = [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in picked]
        assert keys == decision.evicted


@given(pods(), flags)
def test_pods_alike_are_judged_alike(found: list[dict[str, Any]], f: Flags) -> None:
    """The same pods under other names: the same decisions, under the new names."""
    renamed = [{**p, "metadata": {**p["metadata"], "name": f"q{i}"}} for i, p in enumerate(found)]
    first = drain([drain_pod(p, NOW) for p in found], f).to_json()
    again = drain([drain_pod(p, NOW) for p in renamed], f).to_json()
    assert str(first).replace("/p", "/q") == str(again)
