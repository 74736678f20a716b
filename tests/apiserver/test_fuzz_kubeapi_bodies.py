"""Hostile bodies for what the API facade reads itself and the OLM vocabulary parses:
ClockStep bodies, the controllers' state ConfigMap, Events, install plan approvals and
every OLM kind created or patched with mutated JSON; a CSV's properties annotation; a
registryPoll interval. The property: a Status error with a 4xx code or an answer, never
a 500, a traceback or a hang; the store still serves afterwards."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.apiserver.api import KubeAPI
from kupgrade.apiserver.clock import step_target
from kupgrade.cluster.olm import PROPERTIES, max_openshift_version, upgradeable_condition
from kupgrade.sim.create import create_cluster
from kupgrade.sim.loop import Local, Loop
from kupgrade.sim.profile import Pool, Profile, Spec
from kupgrade.sim.store import Store
from kupgrade.versions.goduration import parse_go_duration
from tests.support.fuzzkit import FUZZ_SETTINGS, fuzz, mutated, swapped
from tests.support.sim import runner

TOKEN = "t0ken"
SEEDS: dict[str, dict[str, Any]] = {
    "/apis/sim.kupgrade.io/v1/clocks/virtual/step": {
        "apiVersion": "sim.kupgrade.io/v1",
        "kind": "ClockStep",
        "to": 1e9,
    },
    "/api/v1/namespaces/kupgrade/configmaps": {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kupgrade-controller-state", "namespace": "kupgrade"},
        "data": {"version": '{"image": "x"}'},
    },
    "/api/v1/namespaces/default/events": {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e.1"},
        "involvedObject": {"kind": "Node", "name": "master-0"},
        "reason": "Checked",
        "message": "m",
        "type": "Warning",
    },
    "/apis/operators.coreos.com/v1alpha1/namespaces/operators/subscriptions": {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": "etcd"},
        "spec": {
            "name": "etcd",
            "channel": "alpha",
            "source": "c",
            "sourceNamespace": "olm",
            "installPlanApproval": "Manual",
        },
    },
    "/apis/operators.coreos.com/v1alpha1/namespaces/olm/catalogsources": {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "c"},
        "spec": {
            "sourceType": "grpc",
            "image": "127.0.0.1:1/x:y",
            "priority": 3,
            "updateStrategy": {"registryPoll": {"interval": "10m"}},
        },
    },
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KubeAPI, Loop[Local]]]:
    spec = Spec(seed=1, pools=[Pool(name="master", nodes=1, max_unavailable=1)])
    root = create_cluster(tmp_path_factory.mktemp("fuzz-api"), "c", Profile(spec=spec))
    store = Store(root / "cluster.db")
    r = runner(root, store, spec)
    r.with_controllers = False  # the world alone, stepped through the API as served so
    yield (
        KubeAPI(r.transport.sim, TOKEN, clock=_Stepped(r), home=str(root)),
        r,
    )
    store.close()


class _Stepped:
    """The runner's world side in stepped mode, as `serve-api --no-controllers` gives it."""

    mode = "stepped"

    def __init__(self, r: Loop[Local]) -> None:
        self.r = r

    def now(self) -> float:
        return self.r.now()

    def next_at(self) -> float | None:
        return self.r.next_at()

    def clock_step(self, to: float | None) -> bool:
        return self.r.clock_step(to)


def _send(
    api: KubeAPI, method: str, path: str, body: bytes, content_type: str = "application/json"
) -> int:
    headers = {"authorization": f"Bearer {TOKEN}", "content-type": content_type}
    reply = api.handle(method, path, {}, headers, body)
    assert reply.status < 500, (path, body[:200], reply.body)
    return reply.status


def test_fuzz_bodies_the_api_reads_itself(cluster: tuple[KubeAPI, Loop[Local]]) -> None:
    api, _ = cluster
    seeds = [json.dumps(doc).encode() for doc in SEEDS.values()]
    paths = list(SEEDS)

    @FUZZ_SETTINGS
    @given(st.sampled_from(paths), mutated(seeds))
    def post(path: str, body: bytes) -> None:
        _send(api, "POST", path, body)

    post()
    # Found by the fuzzer: an Event whose body leaves kind to the path is echoed with it.
    event = (
        b'{"apiVersion": "v1", "metadata": {"name": "e.1"}, "type": "Warning", '
        b'"involvedObject": {"kind": "Node", "name": "master-0"}, "reason": "Checked"}'
    )
    assert _send(api, "POST", "/api/v1/namespaces/default/events", event) == 201

    @FUZZ_SETTINGS
    @given(swapped(list(SEEDS.values())))
    def merge_state(doc: Any) -> None:
        _send(
            api,
            "PATCH",
            "/api/v1/namespaces/kupgrade/configmaps/kupgrade-controller-state",
            json.dumps(doc, default=str).encode(),
            "application/merge-patch+json",
        )

    merge_state()
    # Still serving: the clock answers and the state reads back as a ConfigMap.
    assert _send(api, "GET", "/apis/sim.kupgrade.io/v1/clocks/virtual", b"") == 200
    assert (
        _send(api, "GET", "/api/v1/namespaces/kupgrade/configmaps/kupgrade-controller-state", b"")
        == 200
    )


def test_fuzz_step_targets() -> None:
    fuzz(
        "clockstep",
        swapped([SEEDS["/apis/sim.kupgrade.io/v1/clocks/virtual/step"]]),
        step_target,
        (ValueError,),
        0.02,
    )


def test_fuzz_csv_properties() -> None:
    seed = json.dumps(
        {
            "properties": [
                {"type": "olm.maxOpenShiftVersion", "value": "4.13"},
                {"type": "olm.package", "value": {"packageName": "p", "version": "1.0.0"}},
            ]
        }
    )

    def read(data: bytes) -> None:
        csv = {
            "metadata": {
                "name": "c",
                "namespace": "n",
                "annotations": {PROPERTIES: data.decode("utf-8", "replace")},
            }
        }
        max_openshift_version(csv)
        condition = upgradeable_condition([csv], "4.13.2")
        assert condition["status"] in ("True", "False")

    fuzz("csv-properties", mutated([seed.encode()]), read, (), 0.02)


@given(st.text(max_size=30))
def test_an_interval_parses_or_is_none(text: str) -> None:
    seconds = parse_go_duration(text)
    assert seconds >= 0
    if text in ("10m", "1h30m", "45s"):
        assert seconds == {"10m": 600, "1h30m": 5400, "45s": 45}[text]


def test_max_openshift_version_follows_olm() -> None:
    def csv(*values: Any) -> dict[str, Any]:
        props = [{"type": "olm.maxOpenShiftVersion", "value": v} for v in values]
        return {
            "metadata": {
                "name": "c",
                "annotations": {PROPERTIES: json.dumps({"properties": props})},
            }
        }

    assert max_openshift_version(csv("4.13")) == ((4, 13), "")
    assert max_openshift_version(csv('"4.13"')) == ((4, 13), "")
    assert max_openshift_version(csv("4.13.0")) == ((4, 13), "")
    assert "only <major>.<minor>" in max_openshift_version(csv("4.13.1"))[1]
    assert "only <major>.<minor>" in max_openshift_version(csv("4.13.0-rc.1"))[1]
    assert "more than one" in max_openshift_version(csv("4.13", "4.14"))[1]
    assert 'cannot be ""' in max_openshift_version(csv(""))[1]
    assert max_openshift_version({"metadata": {"name": "c"}}) == (None, "")
    bad = upgradeable_condition([csv("4.13.1")], "4.13.2")
    assert (
        bad["status"] == "False"
        and "has invalid olm.maxOpenShiftVersion properties" in bad["message"]
    )
    assert upgradeable_condition([csv("4.14")], "4.13.2")["status"] == "True"


def test_a_properties_annotation_nested_past_any_parser_is_an_error_not_a_crash() -> None:
    """Found by the fuzzer: JSON nested deeper than the parser's recursion raised out of
    max_openshift_version; it is now the error Go's encoding/json gives."""
    csv = {"metadata": {"name": "c", "namespace": "n", "annotations": {PROPERTIES: "[" * 100_000}}}
    assert max_openshift_version(csv) == (None, "exceeded max depth")
    assert upgradeable_condition([csv], "4.13.2")["status"] == "False"


# Objects the server validates (kube-apiserver's rules: names, labels, int-or-percent,
# booleans, replicas), written as kubectl writes them, with and without a dry run.
VALIDATED: dict[str, dict[str, Any]] = {
    "/apis/policy/v1/namespaces/shop/poddisruptionbudgets": {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
    },
    "/apis/apps/v1/namespaces/shop/deployments": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "annotations": {"a": "b"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}},
    },
    "/api/v1/nodes": {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "extra", "labels": {"node-role.kubernetes.io/worker": ""}},
        "spec": {"unschedulable": True, "taints": [{"key": "k", "effect": "NoSchedule"}]},
    },
}


def test_fuzz_validated_writes(cluster: tuple[KubeAPI, Loop[Local]]) -> None:
    api, _ = cluster
    seeds = [json.dumps(doc).encode() for doc in VALIDATED.values()]

    @FUZZ_SETTINGS
    @given(st.sampled_from(list(VALIDATED)), mutated(seeds), st.sampled_from(["", "All", "x"]))
    def create(path: str, body: bytes, dry: str) -> None:
        headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
        reply = api.handle("POST", path, {"dryRun": dry} if dry else {}, headers, body)
        assert reply.status < 500, (path, body[:200], reply.body)

    create()

    @FUZZ_SETTINGS
    @given(swapped(list(VALIDATED.values())))
    def patch_node(doc: Any) -> None:
        _send(
            api,
            "PATCH",
            "/api/v1/nodes/master-0",
            json.dumps(doc, default=str).encode(),
            "application/merge-patch+json",
        )

    patch_node()
    node = api.handle(
        "GET", "/api/v1/nodes/master-0", {}, {"authorization": f"Bearer {TOKEN}"}, b""
    )
    assert node.status == 200
    # Whatever was taken is valid: the node's spec still reads as the controllers read it.
    spec = node.body.get("spec") or {}
    assert isinstance(spec.get("unschedulable", False), bool)


def test_a_patch_that_removes_kind_keeps_the_paths_kind(
    cluster: tuple[KubeAPI, Loop[Local]],
) -> None:
    """Found by the fuzzing above: a merge patch's null for kind and apiVersion made an
    object without a kind, which the store could not key (a 500)."""
    api, _ = cluster
    headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/merge-patch+json"}
    body = b'{"kind": null, "apiVersion": null, "metadata": {"labels": {"k": "v"}}}'
    reply = api.handle("PATCH", "/api/v1/nodes/master-0", {}, headers, body)
    assert reply.status == 200, reply.body
    assert reply.body["kind"] == "Node" and reply.body["apiVersion"] == "v1"


def test_a_body_nested_past_the_decoder_is_a_bad_request(
    cluster: tuple[KubeAPI, Loop[Local]],
) -> None:
    """Found by make test's fuzzing: a body of 100,000 open brackets was a 500."""
    api, _ = cluster
    path = "/apis/policy/v1/namespaces/shop/poddisruptionbudgets"
    headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
    for dry in ("", "All"):
        reply = api.handle("POST", path, {"dryRun": dry} if dry else {}, headers, b"[" * 100_000)
        assert reply.status == 400, reply.body
        assert "nested too deeply" in reply.body["message"]
