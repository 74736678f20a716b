"""Plain Kubernetes upgrades carried out kubeadm-style (SPEC H6, H7): the plan's steps in
order, apiservers one node at a time before the controller-managers and schedulers,
kubelets last, drains that honour budgets; the skew rules hold at every state the
rehearsal passes through, and a change that would break them is not made."""

from __future__ import annotations

from pathlib import Path

import pytest

from kupgrade.cluster.kubeadm import APISERVER, CONTROLLERS, image_version, kubelet_of
from kupgrade.controllers.kube.findings import LiveFindings
from kupgrade.controllers.kube.inventory import inventory
from kupgrade.controllers.kube.record import upgrade_record
from kupgrade.controllers.kube.request import request_upgrade
from kupgrade.errors import InputError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.loop import Local, Loop
from kupgrade.sim.profile import Budget, Change, Pool, Profile, Spec, Workload
from kupgrade.sim.store import Store
from kupgrade.skew.k8s import check
from kupgrade.versions import parse_kube
from tests.support.sim import runner as sim_loop

SPEC = Spec(
    platform="kubernetes",
    version="1.30.4",
    seed=3,
    pools=[
        Pool(name="control-plane", nodes=3, role="control-plane"),
        Pool(name="worker", nodes=4, zones=["a", "b"]),
    ],
    workloads=[Workload(name="web", namespace="shop", replicas=4, pdb=Budget(min_available=3))],
)


def _cluster(tmp_path: Path, spec: Spec = SPEC) -> tuple[Store, Loop[Local]]:
    root = create_cluster(tmp_path, "k", Profile(spec=spec))
    store = Store(root / "cluster.db")
    return store, sim_loop(store.path.parent, store, spec)


def _versions(sim: SimCluster, component: str) -> list[str]:
    return sorted(
        image_version(p)
        for p in sim.list("Pod")
        if (p["metadata"].get("labels") or {}).get("component") == component
    )


def test_an_upgrade_follows_the_plan_and_every_state_keeps_the_rules(tmp_path: Path) -> None:
    store, r = _cluster(tmp_path)
    state = request_upgrade(r.transport.sim, "v1.31.2", ["1.30.9"], "auto")
    assert [(s.object, s.to) for s in state.steps] == [
        ("control-plane", "1.30.9"),
        ("control-plane", "1.31.2"),
        ("nodepool/worker", "1.31.2"),
    ]
    store.commit()
    seen: list[tuple[str, ...]] = []

    def look(run: Loop[Local]) -> None:
        sim = run.transport.sim
        assert check(inventory(sim), "auto") == []  # SPEC X1: every state legal
        ready = sum(
            1
            for p in sim.list("Pod")
            if p["metadata"].get("namespace") == "shop"
            and not p["metadata"].get("deletionTimestamp")
            and any(
                c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"]
            )
        )
        assert ready >= 3  # the budget: minAvailable 3
        apis, ctrls = _versions(sim, APISERVER), _versions(sim, CONTROLLERS[0])
        kubelets = sorted(kubelet_of(n) for n in sim.list("Node"))
        seen.append((tuple(apis), tuple(ctrls), tuple(kubelets)))
        # H6: no controller-manager newer than every apiserver, no kubelet newer than one
        assert max(ctrls, key=parse_kube) in apis or parse_kube(
            max(ctrls, key=parse_kube)
        ) <= parse_kube(min(apis, key=parse_kube))
        assert parse_kube(max(kubelets, key=parse_kube)) <= parse_kube(min(apis, key=parse_kube))

    outcome = r.run(on_step=look)
    assert outcome.reason == "completed"
    assert _versions(r.transport.sim, APISERVER) == ["1.31.2"] * 3
    assert _versions(r.transport.sim, "kube-scheduler") == ["1.31.2"] * 3
    assert {kubelet_of(n) for n in r.transport.sim.list("Node")} == {"1.31.2"}
    assert all(not n["spec"].get("unschedulable") for n in r.transport.sim.list("Node"))
    # Apiservers moved one at a time: a state with a mix of apiserver versions was seen.
    assert any(len(set(apis)) > 1 for apis, _, _ in seen)
    events = [(e["object"], e["reason"]) for e in store.events()]
    order = [o for o, reason in events if reason == "Upgrade"]
    first_ctrl = next(i for i, o in enumerate(order) if "kube-controller-manager" in o)
    assert all("kube-apiserver" in o for o in order[:3])  # apiservers first
    assert first_ctrl >= 3
    assert ("node/worker-1", "EvictionBlocked") in events  # the budget held a drain
    store.close()


def test_a_done_node_changed_from_outside_is_looked_at_again(tmp_path: Path) -> None:
    """The controller remembers how far its walk of a pool got; a node behind that point
    that changes (cordoned by someone once its upgrade was done) is looked at again, as a
    walk from the first node would, and uncordoned before the step can finish."""
    # SPEC H6: kubelets drained, then schedulable again; the walk is memory only (X3)
    store, r = _cluster(tmp_path)
    request_upgrade(r.transport.sim, "v1.31.2", ["1.30.9"], "auto")
    store.commit()
    cordoned: list[float] = []

    def look(run: Loop[Local]) -> None:
        done = any(e["object"] == "node/worker-0" and e["reason"] == "Done" for e in store.events())
        if done and not cordoned:
            node = run.transport.sim.get("Node", "worker-0")
            assert node is not None and not node["spec"].get("unschedulable")
            node["spec"]["unschedulable"] = True
            run.transport.sim.write(node)
            cordoned.append(run.transport.sim.now())

    assert r.run(on_step=look).reason == "completed"
    assert cordoned
    worker = r.transport.sim.get("Node", "worker-0")
    assert worker is not None and not worker["spec"].get("unschedulable")
    assert any(
        e["object"] == "node/worker-0" and e["reason"] == "Uncordon" and e["at"] >= cordoned[0]
        for e in store.events()
    )
    store.close()


def _kubelet_at(minutes: float, node: str, version: str) -> Change:
    info = {"kubeletVersion": f"v{version}", "kubeProxyVersion": f"v{version}"}
    return Change(at_minutes=minutes, kind="Node", name=node, patch={"status": {"nodeInfo": info}})


LIVE = {
    "the plan": (SPEC, "auto", None),
    "a node held back from the start": (
        Spec(
            platform="kubernetes",
            version="1.30.4",
            seed=4,
            pools=[
                Pool(name="control-plane", nodes=1, role="control-plane"),
                Pool(name="worker", nodes=2),
            ],
            changes=[_kubelet_at(0, "worker-1", "1.28.0")],
        ),
        "k8s-n2",
        4 * 3600.0,
    ),
    "a node falls behind mid-run, then catches up": (
        Spec(
            platform="kubernetes",
            version="1.30.4",
            seed=5,
            pools=[
                Pool(name="control-plane", nodes=3, role="control-plane"),
                Pool(name="worker", nodes=4, zones=["a", "b"]),
            ],
            changes=[
                _kubelet_at(20, "worker-3", "1.28.0"),
                _kubelet_at(200, "worker-3", "1.30.4"),
                _kubelet_at(260, "worker-0", "1.29.1"),
            ],
        ),
        "k8s-n2",
        2 * 86400.0,
    ),
}


@pytest.mark.parametrize("name", sorted(LIVE))
def test_kept_findings_answer_as_a_full_check_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Before each change the controller asks its kept findings (not a check of every
    node) what would break; at every such question of these runs, the answer is what
    `check(inventory(api, change))` gives: the same first violation, or none."""
    # SPEC H1, H3, H6: the rules; X1: no change that breaks one is made
    spec, policy, limit = LIVE[name]
    answers: list[object] = []
    kept = LiveFindings.first

    def first(self: LiveFindings, change: tuple[str, str, str], asked: str) -> object:
        got = kept(self, change, asked)
        full = check(inventory(self.api, change), asked)
        assert got == (full[0] if full else None), (change, got, full[:1])
        answers.append(got)
        return got

    monkeypatch.setattr(LiveFindings, "first", first)
    store, r = _cluster(tmp_path, spec)
    request_upgrade(r.transport.sim, "1.31.2", ["1.30.9"] if policy == "auto" else [], policy)
    store.commit()
    r.run(max_seconds=limit) if limit else r.run()
    refused = [a for a in answers if a is not None]
    expected = {
        "the plan": (True, False),
        "a node held back from the start": (False, True),
        "a node falls behind mid-run, then catches up": (True, True),
    }[name]
    assert (len(answers) > len(refused), bool(refused)) == expected, answers
    store.close()


def test_a_change_that_would_break_the_rules_is_not_made(tmp_path: Path) -> None:
    # A worker node comes back at v1.28 as the upgrade starts: under n2, apiservers at 1.31 would be
    # three minors ahead of it, so that step waits and says why.
    spec = Spec(
        platform="kubernetes",
        version="1.30.4",
        seed=4,
        pools=[
            Pool(name="control-plane", nodes=1, role="control-plane"),
            Pool(name="worker", nodes=2),
        ],
        changes=[
            Change(
                at_minutes=0,
                kind="Node",
                name="worker-1",
                patch={
                    "status": {
                        "nodeInfo": {"kubeletVersion": "v1.28.0", "kubeProxyVersion": "v1.28.0"}
                    }
                },
            )
        ],
    )
    store, r = _cluster(tmp_path, spec)
    request_upgrade(r.transport.sim, "1.31.2", [], "k8s-n2")
    store.commit()
    outcome = r.run(max_seconds=4 * 3600)
    assert outcome.reason in ("idle", "limit")
    state = upgrade_record(r.transport.sim)
    assert state is not None and not state.completed and state.blocked is not None
    assert state.blocked.startswith("H3")  # the kubelet skew rule, named
    assert "worker-1" in state.blocked or "1.28" in state.blocked
    assert r.failing() == state.blocked
    assert _versions(r.transport.sim, APISERVER) == ["1.30.4"]  # the change was not made
    store.close()


def test_a_request_no_plan_can_carry_out_is_refused(tmp_path: Path) -> None:
    store, r = _cluster(tmp_path)
    with pytest.raises(InputError, match="no upgrade path"):
        request_upgrade(r.transport.sim, "1.32.1", [], "auto")  # no 1.31 release to land on
    request_upgrade(r.transport.sim, "1.30.9", [], "auto")
    with pytest.raises(InputError, match="already in progress"):
        request_upgrade(r.transport.sim, "1.30.9", [], "auto")
    store.close()
