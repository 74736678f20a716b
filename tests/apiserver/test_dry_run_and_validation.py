"""Writes a real API server would not keep: a dry run (`--dry-run=server`, a DeleteOptions
or an Eviction asking for one) is answered and validated but stores nothing, and an
invalid object is answered 422 Invalid with its field causes and never stored, through
real kubectl (oldest and newest here) and plain HTTP; the served cluster goes on serving
and its controllers go on reading (SPEC X6)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.apiserver.validation import int_or_percent, validate
from tests.apiserver.test_kubeapi import KUBECTLS, PROFILE, Served, needs_kubectl, served_profile

PATCH_WEB_BUDGET = ("patch", "pdb", "web", "-n", "shop", "--type", "merge", "-p")
KINDS = [
    "/api/v1/nodes",
    "/api/v1/pods",
    "/api/v1/configmaps",
    "/apis/policy/v1/poddisruptionbudgets",
    "/apis/apps/v1/deployments",
    "/apis/machineconfiguration.openshift.io/v1/machineconfigpools",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A cluster served with a stepped clock: nothing moves unless someone writes."""
    with served_profile(tmp_path_factory.mktemp("dry") / "home", PROFILE) as served:
        yield served


def _world(http: httpx.Client) -> tuple[str, dict[str, Any]]:
    """The store's change version and every object of the kinds written here."""
    version = http.get("/api/v1/nodes").json()["metadata"]["resourceVersion"]
    return version, {path: http.get(path).json()["items"] for path in KINDS}


@needs_kubectl
@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda p: p.name)
def test_every_server_dry_run_leaves_the_store_unchanged(served: Served, kubectl: Path) -> None:
    manifest = served.home.parent / "configmap.json"
    manifest.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "x", "namespace": "shop"},
                "data": {"a": "b"},
            }
        )
    )
    with served.http() as http:
        before = _world(http)
        writes = [
            ("create", "-f", str(manifest)),
            ("apply", "-f", str(manifest)),
            ("label", "node", "worker-0", "team=a"),
            ("annotate", "pdb", "web", "-n", "shop", "note=x"),
            (*PATCH_WEB_BUDGET, '{"spec":{"minAvailable":1}}'),
            ("delete", "pdb", "db", "-n", "data"),
            ("cordon", "worker-1"),
            ("drain", "master-0", "--ignore-daemonsets", "--delete-emptydir-data"),
        ]
        for write in writes:
            done = served.kubectl(kubectl, *write, "--dry-run=server")
            assert done.returncode == 0, (write, done.stderr)
            if write[0] != "patch":  # kubectl 1.27's patch does not say so
                assert "server dry run" in done.stdout, (write, done.stdout)
        # What the dry run would refuse is refused all the same.
        refused = served.kubectl(
            kubectl, *PATCH_WEB_BUDGET, '{"spec":{"minAvailable":"abc"}}', "--dry-run=server"
        )
        assert refused.returncode == 1 and "spec.minAvailable" in refused.stderr
        # An eviction asked as a dry run: allowed by the budget, the pod stays.
        evicted = http.post(
            "/api/v1/namespaces/data/pods/db-00001/eviction",
            json={
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": "db-00001", "namespace": "data"},
                "deleteOptions": {"dryRun": ["All"]},
            },
        )
        assert evicted.status_code == 201, evicted.text
        held = http.post(
            "/api/v1/namespaces/shop/pods/web-00001/eviction",
            json={"metadata": {"name": "web-00001"}, "deleteOptions": {"dryRun": ["All"]}},
        )
        assert held.status_code == 429  # the budget still answers
        assert _world(http) == before


def test_a_dry_run_value_other_than_all_is_refused_and_writes_nothing(served: Served) -> None:
    with served.http() as http:
        before = _world(http)
        for response in (
            http.patch(
                "/api/v1/nodes/worker-0",
                params={"dryRun": "all"},
                content=b'{"metadata":{"labels":{"a":"b"}}}',
                headers={"Content-Type": "application/merge-patch+json"},
            ),
            http.request(
                "DELETE",
                "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web",
                json={"kind": "DeleteOptions", "dryRun": ["Yes"]},
            ),
        ):
            assert response.status_code == 422, response.text
            status = response.json()
            assert (
                status["reason"] == "Invalid"
                and status["details"]["causes"][0]["field"] == "dryRun"
            )
            assert 'supported values: "All"' in status["message"]
        assert _world(http) == before


INVALID = [
    (
        "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web",
        {"spec": {"minAvailable": "abc"}},
        "spec.minAvailable",
    ),
    (
        "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web",
        {"spec": {"minAvailable": "150%"}},
        "spec.minAvailable",
    ),
    (
        "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web",
        {"spec": {"maxUnavailable": 1}},
        "spec",
    ),
    (
        "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web",
        {"spec": {"minAvailable": -2}},
        "spec.minAvailable",
    ),
    ("/api/v1/nodes/worker-0", {"spec": {"unschedulable": "yes"}}, "spec.unschedulable"),
    (
        "/api/v1/nodes/worker-0",
        {"spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}},
        "spec.taints[0].effect",
    ),
    (
        "/api/v1/nodes/worker-0",
        {"metadata": {"labels": {"big": "x" * 1_000_000}}},
        "metadata.labels",
    ),
    ("/api/v1/nodes/worker-0", {"metadata": {"labels": {"-bad-": "x"}}}, "metadata.labels"),
    (
        "/api/v1/nodes/worker-0",
        {"metadata": {"annotations": {"a": "x" * 300_000}}},
        "metadata.annotations",
    ),
    (
        "/apis/machineconfiguration.openshift.io/v1/machineconfigpools/worker",
        {"spec": {"maxUnavailable": "x"}},
        "spec.maxUnavailable",
    ),
    (
        "/apis/machineconfiguration.openshift.io/v1/machineconfigpools/worker",
        {"spec": {"paused": "no"}},
        "spec.paused",
    ),
]


def test_invalid_writes_are_refused_with_their_causes_and_never_stored(served: Served) -> None:
    with served.http() as http:
        before = _world(http)
        for path, patch, field in INVALID:
            response = http.patch(
                path,
                content=json.dumps(patch).encode(),
                headers={"Content-Type": "application/merge-patch+json"},
            )
            assert response.status_code == 422, (path, patch, response.text[:300])
            status = response.json()
            assert status["reason"] == "Invalid" and "is invalid: " in status["message"]
            assert field in [c["field"] for c in status["details"]["causes"]], status
            assert len(response.content) < 10_000  # a bad value is shown cut, not echoed whole
        # 1e999999 is a number JSON allows and no int32 holds.
        huge = http.patch(
            "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web",
            content=b'{"spec": {"minAvailable": 1e999999}}',
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert huge.status_code == 422, huge.text
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "api", "namespace": "shop"},
            "spec": {"replicas": -1, "selector": {"matchLabels": {"app": "api"}}},
        }
        created = http.post("/apis/apps/v1/namespaces/shop/deployments", json=deployment)
        assert created.status_code == 422 and "spec.replicas" in created.text
        named = http.post(
            "/api/v1/namespaces/shop/configmaps", json={"metadata": {"name": "Not_A_Name"}}
        )
        assert named.status_code == 422 and "metadata.name" in named.text
        assert _world(http) == before
        # The valid write after them all is taken.
        fine = http.patch(
            "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web",
            content=b'{"spec": {"minAvailable": "50%"}}',
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert fine.status_code == 200 and fine.json()["spec"]["minAvailable"] == "50%"
    assert served.process.poll() is None  # still serving


@needs_kubectl
def test_kubectl_says_what_is_invalid(served: Served) -> None:
    done = served.kubectl(
        KUBECTLS[-1], "patch", "node", "worker-2", "-p", '{"spec":{"unschedulable":"yes"}}'
    )
    assert done.returncode == 1
    assert 'Node "worker-2" is invalid: spec.unschedulable: Invalid value' in done.stderr


@given(st.text(max_size=8))
def test_an_int_or_percent_string_is_taken_only_as_a_percent_of_at_most_100(text: str) -> None:
    errors = list(int_or_percent("f", text))
    digits = text[:-1]
    good = text.endswith("%") and digits.isascii() and digits.isdigit() and int(digits) <= 100
    assert (not errors) == good


@given(st.integers(min_value=-(2**40), max_value=2**40) | st.floats(allow_nan=True))
def test_an_int_or_percent_number_is_a_whole_int32_of_at_least_zero(value: float) -> None:
    errors = list(int_or_percent("f", value))
    whole = isinstance(value, int) or (
        value == value and abs(value) != float("inf") and value.is_integer()
    )
    assert (not errors) == (whole and 0 <= value <= 2**31 - 1)


@given(
    st.dictionaries(
        st.text(alphabet="abcAB09-_./", min_size=0, max_size=70),
        st.text(alphabet="abcAB09-_.", max_size=70),
        max_size=3,
    )
)
def test_labels_are_judged_without_failing(labels: dict[str, str]) -> None:
    errors = validate("Node", {"metadata": {"name": "n", "labels": labels}})
    assert all(
        e.field == "metadata.labels" and str(e).startswith("metadata.labels: ") for e in errors
    )
