"""Manifests that delete (release.openshift.io/delete) and create-only manifests, as the
version controller applies them (cluster-version-operator lib/resourcedelete,
lib/resourcebuilder): a deletion held up by finalizers holds back minor updates with
Upgradeable=False ResourceDeletesInProgress until the object is gone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kupgrade.cluster.conditions import find
from kupgrade.controllers.version import upgradeable
from kupgrade.controllers.version.controller import VersionController
from kupgrade.controllers.version.record import (
    VersionState,
    save_version_state,
    version_state,
)
from kupgrade.release.manifest import Manifest, ResourceId
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.openshift.wiring import wiring_for
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.store import Store


def manifest(name: str, annotations: dict[str, str], data: str = "new") -> Manifest:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "openshift-x", "annotations": annotations},
        "data": {"k": data},
    }
    return Manifest(
        f"release-manifests/0000_50_x_{name}.yaml",
        obj,
        b"",
        ResourceId("", "ConfigMap", "openshift-x", name),
    )


def controller(tmp_path: Path) -> tuple[VersionController, SimCluster]:
    spec = Spec(pools=[])
    root = create_cluster(tmp_path, "c", Profile(spec=spec))
    store = Store(root / "cluster.db")
    wiring = wiring_for(root, spec)
    api = SimCluster(store)
    return VersionController(api, wiring), api


def test_a_deletion_held_by_a_finalizer_is_in_progress(tmp_path: Path) -> None:
    version, api = controller(tmp_path)
    api.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "old", "namespace": "openshift-x", "finalizers": ["x.io/hold"]},
        }
    )
    api.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "plain", "namespace": "openshift-x"},
        }
    )
    state = VersionState()
    delete = {"release.openshift.io/delete": "true"}
    assert version._apply_one(manifest("old", delete), state) is None
    assert version._apply_one(manifest("plain", delete), state) is None
    assert version._apply_one(manifest("never-there", delete), state) is None
    held = api.get("ConfigMap", "old", "openshift-x")
    assert held is not None and held["metadata"]["deletionTimestamp"]
    assert api.get("ConfigMap", "plain", "openshift-x") is None
    in_progress = version._deletes_in_progress(state)
    assert in_progress == [("ConfigMap", "openshift-x", "old")]
    got = upgradeable.condition(upgradeable.reasons(deletes=in_progress))
    assert got is not None and got["reason"] == "ResourceDeletesInProgress"
    assert got["message"].endswith('resources=ConfigMap "openshift-x/old"')
    # Asked once: a second pass does not touch the deletion timestamp.
    version._apply_one(manifest("old", delete), state)
    assert api.get("ConfigMap", "old", "openshift-x") == held
    # The finalizer goes; the deletion is done.
    api.store.delete("ConfigMap", "old", "openshift-x")
    assert version._deletes_in_progress(state) == []


def test_create_only_is_created_when_missing_and_never_updated(tmp_path: Path) -> None:
    version, api = controller(tmp_path)
    only = {"release.openshift.io/create-only": "true"}
    version._apply_one(manifest("seed", only, data="first"), VersionState())
    version._apply_one(manifest("seed", only, data="second"), VersionState())
    found = api.get("ConfigMap", "seed", "openshift-x")
    assert found is not None and found["data"] == {"k": "first"}


def test_the_controller_reports_deletes_in_progress_in_upgradeable(tmp_path: Path) -> None:
    version, api = controller(tmp_path)
    api.apply(
        {
            "apiVersion": "v1",
            "kind": "ClusterRole",
            "metadata": {"name": "gone-soon", "finalizers": ["x.io/hold"]},
        }
    )
    state = version_state(api)
    state.deletes = [("ClusterRole", "", "gone-soon")]
    save_version_state(api, state)
    cv = api.get("ClusterVersion", "version")
    assert cv is not None
    version._write_status(cv, state, [])
    written = api.get("ClusterVersion", "version")
    assert written is not None
    up = find(written["status"]["conditions"], "Upgradeable")
    assert up is not None and up["reason"] == "ResourceDeletesInProgress"
    assert 'resources=ClusterRole "gone-soon"' in up["message"]


def test_admin_gates_hold_back_until_acknowledged(tmp_path: Path) -> None:
    """upgradeable.go clusterAdminAcksCompletedUpgradeable on the simulated cluster: a gate
    of the current minor in openshift-config-managed/admin-gates needs "true" in
    openshift-config/admin-acks."""
    version, api = controller(tmp_path)
    gate = "ack-4.13-kube-1.27-api-removals-in-4.14"
    text = "Kubernetes 1.27 and therefore OpenShift 4.14 remove several APIs."

    def upgradeable_now() -> dict[str, Any] | None:
        cv = api.get("ClusterVersion", "version")
        assert cv is not None
        version._write_status(cv, version_state(api), [])
        written = api.get("ClusterVersion", "version")
        assert written is not None
        return find(written["status"]["conditions"], "Upgradeable")

    api.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "admin-gates", "namespace": "openshift-config-managed"},
            "data": {gate: text},
        }
    )
    up = upgradeable_now()
    assert up is not None and (up["reason"], up["message"]) == (
        "UnableToAccessAdminAcksConfigMap",
        "admin-acks configmap not found.",
    )
    api.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "admin-acks", "namespace": "openshift-config"},
            "data": {},
        }
    )
    up = upgradeable_now()
    assert up is not None and (up["reason"], up["message"]) == ("AdminAckRequired", text)
    api.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "admin-acks", "namespace": "openshift-config"},
            "data": {gate: "true"},
        }
    )
    assert upgradeable_now() is None
