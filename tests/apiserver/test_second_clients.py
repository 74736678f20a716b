"""Clients nobody here wrote against the simulated API (SPEC X6): the official Python client
(`kubernetes`, generated from the Kubernetes OpenAPI and strict about its models) and
lightkube list, read, watch and patch a served cluster, and get the API's errors as the
Status objects they parse (409 on a stale update, 422 on an invalid patch)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch
from kubernetes.client.rest import ApiException
from lightkube import ApiError, Client, KubeConfig
from lightkube.resources.apps_v1 import DaemonSet, Deployment
from lightkube.resources.core_v1 import Node, Pod
from lightkube.resources.policy_v1 import PodDisruptionBudget

from tests.apiserver.test_openapi_and_workloads import PROFILE
from tests.support.cli import run_cli
from tests.support.processes import served_api


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("clients") / "home"
    profile = home.parent / "profile.yaml"
    profile.write_text(PROFILE)
    created = run_cli(["cluster", "create", "demo", "--profile", str(profile)], home)
    assert created.exit_code == 0, created.stderr
    with served_api(home, "demo", "--no-controllers") as (_, info):
        yield Path(info["kubeconfig"])


@pytest.fixture
def api(kubeconfig: Path) -> k8s.ApiClient:
    return k8s_config.new_client_from_config(config_file=str(kubeconfig))


def test_the_official_client_lists_reads_and_watches(api: k8s.ApiClient) -> None:
    core, apps = k8s.CoreV1Api(api), k8s.AppsV1Api(api)
    nodes = core.list_node()
    assert sorted(n.metadata.name for n in nodes.items) == [
        "master-0",
        "master-1",
        "master-2",
        "worker-0",
        "worker-1",
        "worker-2",
    ]
    assert all(n.status.node_info.kubelet_version for n in nodes.items)
    web = apps.read_namespaced_deployment("web", "shop")
    assert web.spec.replicas == 3 and web.status.ready_replicas == 3
    agent = apps.read_namespaced_daemon_set("agent", "mon")
    assert agent.status.number_ready == agent.status.desired_number_scheduled == 3
    pods = core.list_namespaced_pod("shop", label_selector="app=web")
    assert {p.metadata.owner_references[0].uid for p in pods.items} == {
        apps.read_namespaced_replica_set("web", "shop").metadata.uid
    }
    seen = [
        (e["type"], e["object"].metadata.name)
        for e in itertools.islice(
            k8s_watch.Watch().stream(core.list_namespaced_pod, "shop", timeout_seconds=5), 3
        )
    ]
    assert sorted(seen) == [("ADDED", f"web-0000{i}") for i in range(3)]


def test_the_official_client_patches_and_gets_conflicts_and_invalid_answers(
    api: k8s.ApiClient,
) -> None:
    core, policy = k8s.CoreV1Api(api), k8s.PolicyV1Api(api)
    patched = core.patch_node("worker-1", {"metadata": {"labels": {"team": "blue"}}})
    assert patched.metadata.labels["team"] == "blue"
    assert core.read_node("worker-1").metadata.labels["team"] == "blue"
    budget = policy.read_namespaced_pod_disruption_budget("web", "shop")
    policy.patch_namespaced_pod_disruption_budget(
        "web", "shop", {"metadata": {"annotations": {"seen": "1"}}}
    )
    with pytest.raises(ApiException) as stale:
        policy.replace_namespaced_pod_disruption_budget("web", "shop", budget)
    assert stale.value.status == 409 and "has been modified" in str(stale.value.body)
    with pytest.raises(ApiException) as invalid:
        policy.patch_namespaced_pod_disruption_budget(
            "web", "shop", {"spec": {"minAvailable": "abc"}}
        )
    assert invalid.value.status == 422 and "spec.minAvailable" in str(invalid.value.body)


def test_lightkube_lists_watches_and_patches(kubeconfig: Path) -> None:
    lk = Client(KubeConfig.from_file(kubeconfig))
    assert len(list(lk.list(Node))) == 6
    deploy = lk.get(Deployment, "web", namespace="shop")
    assert deploy.status is not None and deploy.status.availableReplicas == 3
    assert lk.get(DaemonSet, "agent", namespace="mon").status.numberReady == 3
    events = itertools.islice(lk.watch(Pod, namespace="mon", server_timeout=5), 3)
    assert sorted(obj.metadata.name for _, obj in events) == [f"agent-0000{i}" for i in range(3)]
    lk.patch(Node, "worker-2", {"metadata": {"labels": {"zone": "b"}}})
    assert lk.get(Node, "worker-2").metadata.labels["zone"] == "b"
    with pytest.raises(ApiError) as invalid:
        lk.patch(PodDisruptionBudget, "web", {"spec": {"maxUnavailable": -1}}, namespace="shop")
    assert invalid.value.status.code == 422


def test_a_lease_is_taken_renewed_and_guarded_by_its_resource_version(
    api: k8s.ApiClient,
) -> None:
    """Leader election as client-go's leaderelection does it: create the Lease, renew it
    with an update carrying the version read, and lose a race with a 409."""
    leases = k8s.CoordinationV1Api(api)
    lease = k8s.V1Lease(
        metadata=k8s.V1ObjectMeta(name="kupgrade-controllers", namespace="kupgrade"),
        spec=k8s.V1LeaseSpec(
            holder_identity="replica-a", lease_duration_seconds=15, lease_transitions=0
        ),
    )
    made = leases.create_namespaced_lease("kupgrade", lease)
    assert made.spec.holder_identity == "replica-a"
    read = leases.read_namespaced_lease("kupgrade-controllers", "kupgrade")
    read.spec.holder_identity = "replica-b"
    read.spec.lease_transitions = 1
    taken = leases.replace_namespaced_lease("kupgrade-controllers", "kupgrade", read)
    assert taken.spec.holder_identity == "replica-b"
    assert taken.metadata.resource_version != read.metadata.resource_version
    read.spec.holder_identity = "replica-c"  # from the version replica-b has replaced
    with pytest.raises(ApiException) as lost:
        leases.replace_namespaced_lease("kupgrade-controllers", "kupgrade", read)
    assert lost.value.status == 409
    listed = leases.list_lease_for_all_namespaces()
    assert [item.spec.holder_identity for item in listed.items] == ["replica-b"]
    with pytest.raises(ApiException) as invalid:
        leases.patch_namespaced_lease(
            "kupgrade-controllers", "kupgrade", {"spec": {"leaseDurationSeconds": 0}}
        )
    assert invalid.value.status == 422 and "must be greater than 0" in str(invalid.value.body)
