"""OLM on a simulated cluster (SPEC F, C6): every resolver.yaml case replayed as a
subscription ends at the same CSV through the same walk, one install plan per step;
Manual plans wait for `olm approve` (a stale one is refused); CSVs go through their
phases and the replaced one is deleted; an operator whose pod never starts fails its CSV
with the reason; an installed CSV capped by olm.maxOpenShiftVersion blocks the next
minor cluster upgrade, not a patch one, until the subscription moves past it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kupgrade.cluster.conditions import find
from kupgrade.cluster.olm import csv_object
from kupgrade.controllers.olm.controller import resolution_reason
from kupgrade.errors import InputError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.loop import Local, Loop
from kupgrade.sim.openshift.olm import add_source, approve, subscribe
from kupgrade.sim.profile import Fault, Olm, Pool, Profile, Spec
from kupgrade.sim.store import Store
from kupgrade.versions.times import rfc3339
from tests.support.conformance import conformance_cases, conformance_path, need_case
from tests.support.olmkit import compact_blobs, write_blobs
from tests.support.sim import runner

RESOLVER = ("olm", "resolver.yaml")
SMALL = [Pool(name="master", nodes=1, max_unavailable=1), Pool(name="worker", nodes=1)]


def _cluster(tmp_path: Path, spec: Spec) -> tuple[Path, Store, Loop[Local]]:
    root = create_cluster(tmp_path, "c", Profile(spec=spec))
    store = Store(root / "cluster.db")
    return root, store, runner(root, store, spec)


def _plans(sim: SimCluster, sub: str, namespace: str) -> list[dict[str, Any]]:
    plans = [
        p
        for p in sim.list("InstallPlan")
        if p["metadata"]["namespace"] == namespace
        and p["metadata"]["labels"]["operators.coreos.com/subscription"] == sub
    ]
    return sorted(plans, key=lambda p: p["spec"]["generation"])


def _sources(tmp_path: Path, case: dict[str, Any]) -> list[tuple[dict[str, Any], Path]]:
    out = []
    for i, source in enumerate(case["sources"]):
        if "path" in source:
            out.append((source, conformance_path("olm", source["path"])))
        else:
            out.append((source, write_blobs(tmp_path / f"catalog-{i}", compact_blobs(source))))
    return out


@pytest.mark.parametrize("case", conformance_cases("cases", *RESOLVER))
def test_a_resolver_case_replayed_on_the_cluster(tmp_path: Path, case: Any) -> None:
    case = need_case(case, *RESOLVER)
    spec = Spec(
        seed=1,
        pools=SMALL,
        olm=Olm(policy=case["policy"], global_namespace=case.get("globalNamespace", "olm")),
    )
    _, store, r = _cluster(tmp_path, spec)
    sim = r.transport.sim
    for source, path in _sources(tmp_path, case):
        add_source(
            sim,
            source["name"],
            str(path),
            namespace=source["namespace"],
            priority=int(source.get("priority", 0)),
        )
    want = case["subscription"]
    approval = want.get("installPlanApproval", "Automatic")
    sub = subscribe(
        sim,
        package=want["package"],
        source=want["source"],
        source_namespace=want["sourceNamespace"],
        namespace=want["namespace"],
        channel=want.get("channel", ""),
        approval=approval,
        starting_csv=want.get("startingCSV", ""),
    )
    installed = case.get("installed")
    if installed:  # installed before: a Succeeded CSV the subscription reports
        csv = csv_object(
            installed["name"],
            want["namespace"],
            package=want["package"],
            version=installed["version"],
            replaces="",
            skips=[],
            properties=[],
            image="",
            created=rfc3339(sim.now()),
        )
        csv["status"] = {"phase": "Succeeded", "reason": "InstallSucceeded", "message": ""}
        sim.write(csv)
        sub["status"] = {
            "installedCSV": installed["name"],
            "currentCSV": installed["name"],
            "state": "AtLatestKnown",
        }
        sim.write(sub)
    store.commit()
    changes = store.keep_changes()  # every object as written, to see the first step

    def first_step() -> dict[str, Any]:
        """The first resolution as the cluster showed it: its install plan as created and
        the subscription's state written with it."""
        plan: dict[str, Any] | None = None
        for _, _, kind, encoded in changes.since(changes.oldest) or []:
            obj = json.loads(encoded)
            if kind == "InstallPlan" and plan is None:
                plan = obj
            elif kind == "Subscription" and plan is not None:
                spec = plan["spec"]
                return {
                    "next": spec["clusterServiceVersionNames"][0],
                    "state": obj["status"]["state"],
                    "install_plan": {
                        "approval": spec["approval"],
                        "approved": spec["approved"],
                        "phase": plan["status"]["phase"],
                    },
                }
        return {}

    outcome = r.run(until="idle", max_seconds=6 * 3600)
    first = first_step()
    for _ in range(20):  # Manual: approve each plan as it comes, as an admin would
        waiting = [
            p
            for p in _plans(sim, want["package"], want["namespace"])
            if p["status"]["phase"] == "RequiresApproval"
        ]
        if not waiting:
            break
        approve(sim, waiting[0]["metadata"]["name"])
        store.commit()
        outcome = r.run(until="idle", max_seconds=6 * 3600)
    assert outcome.reason == "idle"
    expect = case["expect"]
    sub = sim.get("Subscription", want["package"], want["namespace"])
    assert sub is not None
    status = sub["status"]
    plans = _plans(sim, want["package"], want["namespace"])
    if "error" in expect or "error_class" in expect:
        failed = find(status.get("conditions"), "ResolutionFailed")
        assert failed is not None and failed["status"] == "True", status
        if "error" in expect:
            assert failed["message"].startswith(expect["error"])
        if "error_class" in expect:
            assert failed["reason"] == resolution_reason(expect["error_class"])
        assert plans == []
        return
    if expect["next"] is None:
        assert (plans, status["state"]) == ([], expect["state"])
    else:
        assert (first["next"], first["state"]) == (expect["next"], expect["state"])
        if "install_plan" in expect:
            assert first["install_plan"] == expect["install_plan"]
    # One install plan per step, each naming one CSV, in the walk's order.
    assert [p["spec"]["clusterServiceVersionNames"] for p in plans] == [[c] for c in expect["walk"]]
    assert all(p["status"]["phase"] == "Complete" for p in plans)
    if expect["walk"]:
        first = plans[0]["status"]["bundleLookups"][0]["catalogSourceRef"]
        assert f"{first['namespace']}/{first['name']}" == expect["source"]
    end = expect["walk"][-1] if expect["walk"] else (installed or {}).get("name")
    assert status.get("installedCSV") == end
    csvs = {c["metadata"]["name"]: c["status"]["phase"] for c in sim.list("ClusterServiceVersion")}
    if end:
        assert csvs == {end: "Succeeded"}  # every replaced CSV was deleted
    if expect.get("walk_error"):
        cycle = find(status["conditions"], "ResolutionFailed")
        assert cycle is not None and cycle["message"].startswith(expect["walk_error"])
    else:
        assert status["state"] == "AtLatestKnown"
        assert find(status["conditions"], "ResolutionFailed") is None


CAPPED = [
    {"schema": "olm.package", "name": "etcd", "defaultChannel": "alpha"},
    {
        "schema": "olm.channel",
        "package": "etcd",
        "name": "alpha",
        "entries": [{"name": "etcd.v1"}, {"name": "etcd.v2", "replaces": "etcd.v1"}],
    },
    {
        "schema": "olm.bundle",
        "package": "etcd",
        "name": "etcd.v1",
        "image": "quay.io/e/etcd:1",
        "properties": [
            {"type": "olm.package", "value": {"packageName": "etcd", "version": "1.0.0"}},
            {"type": "olm.maxOpenShiftVersion", "value": "4.13"},
        ],
    },
    {
        "schema": "olm.bundle",
        "package": "etcd",
        "name": "etcd.v2",
        "image": "quay.io/e/etcd:2",
        "properties": [
            {"type": "olm.package", "value": {"packageName": "etcd", "version": "2.0.0"}}
        ],
    },
]


def _manual(tmp_path: Path, spec: Spec) -> tuple[Store, Loop[Local]]:
    _, store, r = _cluster(tmp_path, spec)
    add_source(
        r.transport.sim,
        "community",
        str(write_blobs(tmp_path / "catalog", CAPPED)),
        namespace="olm",
    )
    subscribe(
        r.transport.sim,
        package="etcd",
        source="community",
        source_namespace="olm",
        namespace="operators",
        approval="Manual",
        starting_csv="etcd.v1",
    )
    store.commit()
    return store, r


def test_manual_plans_wait_for_approval_and_a_stale_one_is_refused(tmp_path: Path) -> None:
    store, r = _manual(tmp_path, Spec(seed=2, pools=SMALL))
    sim = r.transport.sim
    r.run(until="idle")
    (plan,) = _plans(sim, "etcd", "operators")
    assert (plan["spec"]["approved"], plan["status"]["phase"]) == (False, "RequiresApproval")
    assert sim.list("ClusterServiceVersion") == []  # nothing before approval
    pending = find(
        sim.get("Subscription", "etcd", "operators")["status"]["conditions"], "InstallPlanPending"
    )  # type: ignore[index]
    assert pending is not None and "kupgrade olm approve" in pending["message"]
    approve(sim, plan["metadata"]["name"], "operators")
    store.commit()
    r.run(until="idle")
    first, second = _plans(sim, "etcd", "operators")
    assert first["status"]["phase"] == "Complete"
    assert second["spec"]["clusterServiceVersionNames"] == ["etcd.v2"]
    assert second["status"]["phase"] == "RequiresApproval"
    with pytest.raises(InputError, match="already approved"):
        approve(sim, first["metadata"]["name"])
    # A plan the subscription no longer waits on is stale: it names the one to approve.
    sub = sim.get("Subscription", "etcd", "operators")
    assert sub is not None
    sub["status"]["installPlanRef"]["name"] = "install-other"
    with pytest.raises(InputError, match=r"stale.*install-other"):
        approve(sim, second["metadata"]["name"])


def test_an_operator_that_never_starts_fails_its_csv(tmp_path: Path) -> None:
    spec = Spec(
        seed=3, pools=SMALL, faults=[Fault(csv="etcd.v1")], olm=Olm(install_timeout_seconds=120)
    )
    _, store, r = _cluster(tmp_path, spec)
    add_source(
        r.transport.sim,
        "community",
        str(write_blobs(tmp_path / "catalog", CAPPED)),
        namespace="olm",
    )
    subscribe(
        r.transport.sim,
        package="etcd",
        source="community",
        source_namespace="olm",
        namespace="operators",
        starting_csv="etcd.v1",
    )
    store.commit()
    r.run(until="idle")
    csv = r.transport.sim.get("ClusterServiceVersion", "etcd.v1", "operators")
    assert csv is not None
    assert (csv["status"]["phase"], csv["status"]["reason"], csv["status"]["message"]) == (
        "Failed",
        "InstallCheckFailed",
        "install timeout",
    )
    phases = [c["phase"] for c in csv["status"]["conditions"]]
    assert phases == ["InstallReady", "Installing", "Failed"]
    failed = find(
        r.transport.sim.get("Subscription", "etcd", "operators")["status"]["conditions"],
        "InstallPlanFailed",
    )  # type: ignore[index]
    assert failed is not None and "etcd.v1 failed: install timeout" in failed["message"]


def _upgradeable(sim: SimCluster) -> dict[str, Any]:
    co = sim.get("ClusterOperator", "operator-lifecycle-manager")
    assert co is not None
    found = find(co["status"]["conditions"], "Upgradeable")
    assert found is not None
    return found


def test_a_capped_operator_blocks_the_minor_upgrade_until_it_moves_on(tmp_path: Path) -> None:
    from kupgrade.cluster.clusterversion import request_update  # noqa: PLC0415
    from kupgrade.sim.openshift.releases import model_image  # noqa: PLC0415

    store, r = _manual(tmp_path, Spec(seed=4, pools=SMALL))
    sim = r.transport.sim
    r.run(until="idle")
    approve(sim, _plans(sim, "etcd", "operators")[0]["metadata"]["name"])
    store.commit()
    r.run(until="idle")
    blocked = _upgradeable(sim)
    assert blocked["status"] == "False" and blocked["reason"] == "IncompatibleOperatorsInstalled"
    assert blocked["message"] == (
        "ClusterServiceVersions blocking minor version upgrades to 4.14.0 "
        "or higher:\n- maximum supported OCP version for operators/etcd.v1 is 4.13"
    )
    root = store.path.parent
    minor = {"version": "4.14.27", "image": model_image(Spec(), "4.14.27", root), "force": False}
    request_update(sim, minor, False)
    store.commit()
    outcome = r.run(max_seconds=3600)
    assert outcome.reason == "failing"
    assert "IncompatibleOperatorsInstalled" in (r.failing() or "")
    # A patch update goes on: Upgradeable=False holds back minor updates only (SPEC C6).
    patch = {"version": "4.13.41", "image": model_image(Spec(), "4.13.41", root), "force": False}
    request_update(sim, patch, False)
    store.commit()
    assert r.run(max_seconds=6 * 3600).reason == "completed"
    # The subscription moves to the uncapped bundle: the minor update is allowed.
    approve(sim, _plans(sim, "etcd", "operators")[-1]["metadata"]["name"])
    store.commit()
    r.run(until="idle", max_seconds=3600)
    assert _upgradeable(sim)["status"] == "True"
    request_update(sim, minor, False)
    store.commit()
    assert r.run(max_seconds=6 * 3600).reason == "completed"
    cv = sim.get("ClusterVersion", "version")
    assert cv is not None and cv["status"]["history"][0]["version"] == "4.14.27"


def test_subscriptions_print_as_oc_get_and_list_as_kubernetes_lists(tmp_path: Path) -> None:
    from tests.support.cli import kupgrade  # noqa: PLC0415

    home = tmp_path / "home"
    catalog = write_blobs(tmp_path / "catalog", CAPPED)
    env = {"KUPGRADE_HOME": str(home)}
    assert kupgrade("cluster", "create", "demo", env=env).returncode == 0
    done = kupgrade(
        "olm",
        "subscribe",
        "--cluster",
        "demo",
        "--source",
        f"community={catalog}",
        "-o",
        "json",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["spec"] == {
        "name": "etcd",
        "channel": "",
        "source": "community",
        "sourceNamespace": "olm",
        "installPlanApproval": "Automatic",
    }
    assert (
        kupgrade("controller", "run", "--cluster", "demo", "--until", "idle", env=env).returncode
        == 0
    )
    subs = kupgrade("get", "subscriptions", "--cluster", "demo", "-A", env=env).stdout.splitlines()
    assert subs[0].split() == ["NAMESPACE", "NAME", "PACKAGE", "SOURCE", "CHANNEL"]
    assert subs[1].split() == ["operators", "etcd", "etcd", "community"]
    csvs = json.loads(
        kupgrade("get", "csv", "--cluster", "demo", "-A", "-o", "json", env=env).stdout
    )
    assert csvs["kind"] == "List" and [c["metadata"]["name"] for c in csvs["items"]] == ["etcd.v2"]
    assert csvs["items"][0]["status"]["phase"] == "Succeeded"
    plans = kupgrade(
        "get", "ip", "--cluster", "demo", "-n", "operators", env=env
    ).stdout.splitlines()
    assert plans[0].split() == ["NAMESPACE", "NAME", "CSV", "APPROVAL", "APPROVED"]
    assert [line.split()[2:] for line in plans[1:]] == [["etcd.v2", "Automatic", "true"]]
    again = kupgrade(
        "olm", "subscribe", "--cluster", "demo", "--source", f"community={catalog}", env=env
    )
    assert again.returncode != 0 and "already exists" in again.stderr


def test_an_approved_plan_installs_its_csv_after_the_catalog_moved_on(tmp_path: Path) -> None:
    """OLM does not resolve again while a plan waits (operator.go nothingToUpdate): the
    waiting plan keeps its bundle, and approving it installs that CSV even when the
    catalog no longer has it; the next resolution starts from there."""
    store, r = _manual(tmp_path, Spec(seed=6, pools=SMALL))
    sim = r.transport.sim
    r.run(until="idle")
    (plan,) = _plans(sim, "etcd", "operators")
    moved = [b for b in CAPPED if b.get("name") != "etcd.v1"]
    moved[1] = {**moved[1], "entries": [{"name": "etcd.v2", "skipRange": "<2.0.0"}]}
    write_blobs(tmp_path / "catalog", moved)
    r.run(until="idle", max_seconds=3600)
    assert _plans(sim, "etcd", "operators") == [plan]  # still the one plan, still waiting
    approve(sim, plan["metadata"]["name"])
    store.commit()
    r.run(until="idle", max_seconds=3600)
    first, second = _plans(sim, "etcd", "operators")
    assert first["status"]["phase"] == "Complete"
    assert sim.get("ClusterServiceVersion", "etcd.v1", "operators") is not None  # installed
    assert second["spec"]["clusterServiceVersionNames"] == ["etcd.v2"]


def test_olm_is_refused_on_clusters_that_do_not_run_it(tmp_path: Path) -> None:
    from tests.support.cli import kupgrade  # noqa: PLC0415

    env = {"KUPGRADE_HOME": str(tmp_path / "home")}
    catalog = write_blobs(tmp_path / "catalog", CAPPED)
    made = kupgrade(
        "cluster", "create", "k", "--platform", "kubernetes", "--version", "v1.30.4", env=env
    )
    assert made.returncode == 0, made.stderr
    refused = kupgrade("olm", "subscribe", "--cluster", "k", "--source", f"c={catalog}", env=env)
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: cluster k is a Kubernetes cluster")
    assert len(refused.stderr.strip().splitlines()) == 1
