"""Removed Kubernetes APIs and who still uses them (SPEC X8): the table against the facts
of the upstream deprecation guide, the Kubernetes minor of each platform's versions, the
three readers on realistic dumps, and properties of the range and of hostile input."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.errors import VersionError
from kupgrade.risks.promql import Vector, evaluate, parse_snapshot
from kupgrade.skew.removed_apis import (
    METRIC,
    TABLE,
    Removal,
    Replacement,
    Use,
    findings,
    kubernetes_minor,
    removed_between,
    uses_in_metrics,
    uses_in_objects,
    uses_in_request_counts,
)
from tests.support.fuzzkit import WEIRD_VALUES, fuzz, swapped


def _row(api_version: str, kind: str) -> Removal:
    group, _, version = api_version.rpartition("/")
    (row,) = [r for r in TABLE if (r.group, r.version, r.kind) == (group, version, kind)]
    return row


# --- the table: facts of kubernetes/website deprecation-guide.md -------------------------


# Facts of the guide, one a line: removed API, kind, release, first replacement, since (- none).
GUIDE_FACTS = """
policy/v1beta1 PodDisruptionBudget 1.25 policy/v1 1.21
flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema 1.32 flowcontrol.apiserver.k8s.io/v1 1.29
flowcontrol.apiserver.k8s.io/v1beta3 PriorityLevelConfiguration 1.32 flowcontrol.apiserver.k8s.io/v1 1.29
flowcontrol.apiserver.k8s.io/v1beta2 FlowSchema 1.29 flowcontrol.apiserver.k8s.io/v1 1.29
flowcontrol.apiserver.k8s.io/v1beta1 FlowSchema 1.26 flowcontrol.apiserver.k8s.io/v1beta2 -
extensions/v1beta1 Ingress 1.22 networking.k8s.io/v1 1.19
networking.k8s.io/v1beta1 Ingress 1.22 networking.k8s.io/v1 1.19
networking.k8s.io/v1beta1 IngressClass 1.22 networking.k8s.io/v1 1.19
apiextensions.k8s.io/v1beta1 CustomResourceDefinition 1.22 apiextensions.k8s.io/v1 1.16
admissionregistration.k8s.io/v1beta1 ValidatingWebhookConfiguration 1.22 admissionregistration.k8s.io/v1 1.16
rbac.authorization.k8s.io/v1beta1 ClusterRoleBinding 1.22 rbac.authorization.k8s.io/v1 1.8
authorization.k8s.io/v1beta1 SelfSubjectRulesReview 1.22 authorization.k8s.io/v1 1.6
certificates.k8s.io/v1beta1 CertificateSigningRequest 1.22 certificates.k8s.io/v1 1.19
storage.k8s.io/v1beta1 CSINode 1.22 storage.k8s.io/v1 1.17
storage.k8s.io/v1beta1 VolumeAttachment 1.22 storage.k8s.io/v1 1.13
storage.k8s.io/v1beta1 CSIStorageCapacity 1.27 storage.k8s.io/v1 1.24
batch/v1beta1 CronJob 1.25 batch/v1 1.21
autoscaling/v2beta1 HorizontalPodAutoscaler 1.25 autoscaling/v2 1.23
autoscaling/v2beta2 HorizontalPodAutoscaler 1.26 autoscaling/v2 1.23
events.k8s.io/v1beta1 Event 1.25 events.k8s.io/v1 1.19
discovery.k8s.io/v1beta1 EndpointSlice 1.25 discovery.k8s.io/v1 1.21
node.k8s.io/v1beta1 RuntimeClass 1.25 node.k8s.io/v1 1.20
extensions/v1beta1 NetworkPolicy 1.16 networking.k8s.io/v1 1.8
apps/v1beta2 DaemonSet 1.16 apps/v1 1.9
apps/v1beta1 StatefulSet 1.16 apps/v1 1.9
extensions/v1beta1 ReplicaSet 1.16 apps/v1 1.9
extensions/v1beta1 PodSecurityPolicy 1.16 policy/v1beta1 1.10
"""


def _minor(text: str) -> tuple[int, int] | None:
    major, _, minor = text.partition(".")
    return None if text == "-" else (int(major), int(minor))


@pytest.mark.parametrize("fact", GUIDE_FACTS.strip().splitlines())
def test_table_rows_are_the_guides(fact: str) -> None:
    api_version, kind, removed_in, replacement, since = fact.split()
    row = _row(api_version, kind)
    assert row.removed_in == _minor(removed_in)
    assert row.api_version == api_version
    assert row.replacements[0] == Replacement(replacement, _minor(since))


def test_table_has_every_release_section_and_no_duplicates() -> None:
    assert {r.removed_in for r in TABLE} == {
        (1, 16),
        (1, 22),
        (1, 25),
        (1, 26),
        (1, 27),
        (1, 29),
        (1, 32),
    }
    keys = [(r.group, r.version, r.kind) for r in TABLE]
    assert len(keys) == len(set(keys)) == 50
    assert list(TABLE) == sorted(TABLE)
    for row in TABLE:
        assert row.replacements or row.instead, row
        assert all(
            "/" in rep.api_version and rep.api_version != row.api_version
            for rep in row.replacements
        )


def test_table_alternatives_plurals_and_the_api_without_a_successor() -> None:
    v1beta2 = _row("flowcontrol.apiserver.k8s.io/v1beta2", "PriorityLevelConfiguration")
    assert v1beta2.replacements == (
        Replacement("flowcontrol.apiserver.k8s.io/v1", (1, 29)),
        Replacement("flowcontrol.apiserver.k8s.io/v1beta3", (1, 26)),
    )
    psp = _row("policy/v1beta1", "PodSecurityPolicy")
    assert (psp.removed_in, psp.replacements) == ((1, 25), ())
    assert "Pod Security Admission" in psp.instead
    plurals = {r.kind: r.resource for r in TABLE}
    assert plurals["CSIStorageCapacity"] == "csistoragecapacities"
    assert plurals["Ingress"] == "ingresses"
    assert plurals["IngressClass"] == "ingressclasses"
    assert plurals["NetworkPolicy"] == "networkpolicies"
    assert plurals["PodDisruptionBudget"] == "poddisruptionbudgets"
    assert plurals["PriorityLevelConfiguration"] == "prioritylevelconfigurations"


def test_removed_between_is_the_half_open_range() -> None:
    assert {(r.api_version, r.kind) for r in removed_between((1, 24), (1, 25))} >= {
        ("policy/v1beta1", "PodDisruptionBudget"),
        ("batch/v1beta1", "CronJob"),
    }
    assert removed_between((1, 25), (1, 25)) == []
    assert removed_between((1, 30), (1, 27)) == []
    assert {(r.api_version, r.kind) for r in removed_between((1, 27), (1, 29))} == {
        ("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema"),
        ("flowcontrol.apiserver.k8s.io/v1beta2", "PriorityLevelConfiguration"),
    }
    assert [r.removed_in for r in removed_between((1, 31), (1, 40))] == [(1, 32), (1, 32)]


_minors = st.tuples(st.just(1), st.integers(10, 40))


@given(_minors, _minors, _minors)
def test_removed_between_composes_over_consecutive_ranges(a: Any, b: Any, c: Any) -> None:
    """Upgrading a -> b -> c removes exactly what a -> c removes, each API once; a farther
    target never removes less (SPEC X8: the preflight of a multi-minor upgrade)."""
    a, b, c = sorted((a, b, c))
    first, second, whole = removed_between(a, b), removed_between(b, c), removed_between(a, c)
    assert first + second == whole
    assert not set(first) & set(second)
    assert set(removed_between(a, b)) <= set(removed_between(a, c))
    assert set(removed_between(b, c)) <= set(removed_between(a, c))


# --- the Kubernetes minor of a target on each platform ------------------------------------


@pytest.mark.parametrize(
    ("version", "platform", "minor"),
    [
        ("4.14.3", None, (1, 27)),
        ("4.9.0", None, (1, 22)),
        ("4.12.45", "openshift", (1, 25)),
        ("4.13.0", None, (1, 26)),
        ("4.16.2", None, (1, 29)),
        ("4.19.0-rc.1", None, (1, 32)),
        ("4.15.0+amd64", None, (1, 28)),
        ("4.14", None, (1, 27)),
        ("4.1.0", None, (1, 13)),
        ("4.2.36", None, (1, 14)),
        ("v1.30.2", None, (1, 30)),
        ("1.30.2", None, (1, 30)),
        ("1.30.2", "kubernetes", (1, 30)),
        ("v1.31.0-alpha.1", None, (1, 31)),
        ("1.29.100-gke.251", None, (1, 29)),
        ("1.29.100-gke.251", "gdc", (1, 29)),
        ("1.16.3-gke.5", None, (1, 27)),
        ("1.16.3", "gdc", (1, 27)),
        ("1.14", "gdc", (1, 25)),
        ("1.28.0", "gdc", (1, 28)),
    ],
)
def test_kubernetes_minor_of_each_platform(version: str, platform: Any, minor: Any) -> None:
    assert kubernetes_minor(version, platform) == minor


@pytest.mark.parametrize(
    ("version", "platform"),
    [("banana", None), ("", None), ("3.11.0", "openshift"), ("v1.29.1", "gdc"), ("4.x", None)],
)
def test_kubernetes_minor_refuses_text_of_no_scheme(version: str, platform: Any) -> None:
    with pytest.raises(VersionError):
        kubernetes_minor(version, platform)


# --- readers ------------------------------------------------------------------------------

MANIFESTS: list[Any] = [
    {
        "apiVersion": "policy/v1beta1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web-pdb", "namespace": "shop"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    },
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "db", "namespace": "shop"},
    },
    {
        "apiVersion": "policy/v1beta1",
        "kind": "PodSecurityPolicy",
        "metadata": {"name": "restricted"},
    },
    {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "extensions/v1beta1",
                "kind": "Ingress",
                "metadata": {"name": "shop", "namespace": "shop"},
            },
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web", "namespace": "shop"},
            },
        ],
    },
    {"apiVersion": "batch/v1beta1", "kind": "CronJob", "metadata": {"generateName": "report-"}},
    None,
    "apiVersion: policy/v1beta1",
    {"kind": "PodDisruptionBudget", "metadata": {"name": "no-api-version"}},
    {"apiVersion": 42, "kind": "Deployment", "metadata": {"name": "bad"}},
    {"apiVersion": "apps/v1beta1", "kind": ["Deployment"], "metadata": {"name": "bad"}},
    {"apiVersion": "apps/v1beta1/x", "kind": "Deployment"},
    {
        "apiVersion": "extensions/v1beta1",
        "kind": "Deployment",
        "metadata": {"name": 7, "namespace": ["x"]},
    },
]


def test_objects_are_named_by_kind_and_namespace_name() -> None:
    uses = uses_in_objects(MANIFESTS)
    assert [(u.group, u.version, u.kind, u.resource, u.who) for u in uses] == [
        ("", "v1", "Service", "services", "Service shop/web"),
        ("batch", "v1beta1", "CronJob", "cronjobs", "CronJob report-"),
        ("extensions", "v1beta1", "Deployment", "deployments", "Deployment (no name)"),
        ("extensions", "v1beta1", "Ingress", "ingresses", "Ingress shop/shop"),
        (
            "policy",
            "v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            "PodDisruptionBudget shop/db",
        ),
        (
            "policy",
            "v1beta1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            "PodDisruptionBudget shop/web-pdb",
        ),
        (
            "policy",
            "v1beta1",
            "PodSecurityPolicy",
            "podsecuritypolicies",
            "PodSecurityPolicy restricted",
        ),
    ]
    assert {(u.source, u.count) for u in uses} == {("object", 1)}
    assert uses_in_objects(MANIFESTS[0]) == uses_in_objects([MANIFESTS[0]])  # one document
    assert uses_in_objects(iter(MANIFESTS)) == uses  # a generator of documents


def test_a_manifest_directory_blocks_the_upgrade_that_removes_its_api() -> None:
    """SPEC X8: a policy/v1beta1 PodDisruptionBudget in the manifests blocks 1.24 -> 1.25,
    named with its object and the fix; policy/v1 and a Service do not."""
    found = findings(removed_between((1, 24), (1, 25)), uses_in_objects(MANIFESTS))
    assert [(f.removal.api_version, f.removal.kind) for f in found] == [
        ("batch/v1beta1", "CronJob"),
        ("policy/v1beta1", "PodDisruptionBudget"),
        ("policy/v1beta1", "PodSecurityPolicy"),
    ]
    pdb = found[1]
    assert [u.who for u in pdb.uses] == ["PodDisruptionBudget shop/web-pdb"]
    assert pdb.fix == "migrate to policy/v1 (available since v1.21)"
    assert pdb.message == (
        "policy/v1beta1 PodDisruptionBudget is removed in v1.25, used by PodDisruptionBudget shop/web-pdb"
    )
    assert found[2].fix == (
        "migrate to Pod Security Admission or a third-party admission webhook"
        " (PodSecurityPolicy has no replacement API)"
    )
    assert findings(removed_between((1, 25), (1, 32)), uses_in_objects(MANIFESTS)) == []


def _user(name: str, agent: str, verbs: dict[str, int]) -> dict[str, Any]:
    return {
        "username": name,
        "userAgent": agent,
        "requestCount": sum(verbs.values()),
        "byVerb": [{"verb": v, "requestCount": n} for v, n in verbs.items()],
    }


VELERO = "system:serviceaccount:velero:velero"
KUBECTL = "kubectl/v1.24.0 (linux/amd64) kubernetes/4ce5a89"
CURRENT_HOUR = {
    "byNode": [
        {
            "nodeName": "10.0.1.10",
            "requestCount": 3,
            "byUser": [_user(VELERO, "velero/v1.9.0", {"list": 2, "watch": 1})],
        }
    ],
    "requestCount": 3,
}
# Every documented field of APIRequestCount (openshift/api apiserver/v1).
PDB_COUNT: dict[str, Any] = {
    "apiVersion": "apiserver.openshift.io/v1",
    "kind": "APIRequestCount",
    "metadata": {
        "name": "poddisruptionbudgets.v1beta1.policy",
        "labels": {"apirequestcounts.apiserver.openshift.io/removedInRelease": "1.25"},
    },
    "spec": {"numberOfUsersToReport": 10},
    "status": {
        "conditions": [
            {
                "type": "Degraded",
                "status": "False",
                "reason": "AsExpected",
                "message": "counting",
                "lastTransitionTime": "2024-05-01T10:00:00Z",
            }
        ],
        "removedInRelease": "1.25",
        "requestCount": 27,
        "currentHour": CURRENT_HOUR,
        "last24h": [
            CURRENT_HOUR,  # the current hour is updated live in last24h and duplicated
            {
                "byNode": [
                    {
                        "nodeName": "10.0.1.10",
                        "requestCount": 14,  # 4 by users outside the top 10
                        "byUser": [_user(VELERO, "velero/v1.9.0", {"list": 10})],
                    },
                    {
                        "nodeName": "10.0.1.11",
                        "requestCount": 10,
                        "byUser": [_user("kube:admin", KUBECTL, {"get": 6})],
                    },
                ],
                "requestCount": 24,
            },
            {"requestCount": 0},
        ],
    },
}


def test_request_counts_name_each_user_over_the_last_24_hours() -> None:
    uses = uses_in_request_counts([PDB_COUNT])
    common = {
        ("policy", "v1beta1", "poddisruptionbudgets", "PodDisruptionBudget", "APIRequestCount")
    }
    assert {(u.group, u.version, u.resource, u.kind, u.source) for u in uses} == common
    assert {u.reported_removed_in for u in uses} == {(1, 25)}
    assert {u.notes for u in uses} == {("Degraded False AsExpected counting",)}
    assert [(u.who, u.count, u.detail) for u in uses] == [
        (f"kube:admin ({KUBECTL})", 6, "nodes: 10.0.1.11; verbs: get=6"),
        (f"{VELERO} (velero/v1.9.0)", 13, "nodes: 10.0.1.10; verbs: list=12, watch=1"),
        ("users outside the top 10 reported", 8, "nodes: 10.0.1.10, 10.0.1.11"),
    ]
    assert sum(u.count for u in uses) == PDB_COUNT["status"]["requestCount"]


def test_request_count_variants() -> None:
    status = PDB_COUNT["status"]
    meta = PDB_COUNT["metadata"]
    unused = {
        **PDB_COUNT,
        "metadata": {"name": "cronjobs.v1beta1.batch"},
        "status": {**status, "requestCount": 0},
    }
    assert uses_in_request_counts([unused]) == []  # SPEC X8: 0 requests in 24 hours: no use
    # Only the current hour (last24h absent) and no status.requestCount: the hours' sum.
    hourly: dict[str, Any] = {"currentHour": CURRENT_HOUR, "removedInRelease": "1.25"}
    (only,) = uses_in_request_counts([{**PDB_COUNT, "status": hourly}])
    assert (only.who, only.count) == (f"{VELERO} (velero/v1.9.0)", 3)
    # The release from the label alone; a smaller top; a List of them; another kind skipped.
    labelled = {
        **PDB_COUNT,
        "spec": {"numberOfUsersToReport": 3},
        "status": {**status, "removedInRelease": None},
    }
    listed = {
        "apiVersion": "apiserver.openshift.io/v1",
        "kind": "APIRequestCountList",
        "items": [labelled],
    }
    uses = uses_in_request_counts([listed, {**PDB_COUNT, "kind": "Pod"}, meta])
    assert {u.reported_removed_in for u in uses} == {(1, 25)}
    assert uses[-1].who == "users outside the top 3 reported"
    # The core group: `pods.v1`; a name of one part is no API.
    core = {**PDB_COUNT, "metadata": {"name": "pods.v1"}}
    assert {(u.group, u.version, u.resource, u.kind) for u in uses_in_request_counts([core])} == {
        ("", "v1", "pods", "")
    }
    assert uses_in_request_counts([{**PDB_COUNT, "metadata": {"name": "pods"}}]) == []
    total_only = {**PDB_COUNT, "status": {"requestCount": 5}}
    (unreported,) = uses_in_request_counts([total_only])
    assert (unreported.who, unreported.count) == ("users not reported by name", 5)


def test_request_counts_find_clients_of_a_removed_api_by_resource() -> None:
    """SPEC X8: a client still calling flowcontrol v1beta3 blocks 4.18 -> 4.19 (Kubernetes
    1.31 -> 1.32), though no stored object uses it; the resource names the API."""
    flow = {
        "apiVersion": "apiserver.openshift.io/v1",
        "kind": "APIRequestCount",
        "metadata": {"name": "flowschemas.v1beta3.flowcontrol.apiserver.k8s.io"},
        "status": {"removedInRelease": "1.32", "requestCount": 2, "last24h": [CURRENT_HOUR]},
    }
    target = kubernetes_minor("4.19.0")
    found = findings(
        removed_between(kubernetes_minor("4.18.5"), target), uses_in_request_counts([flow])
    )
    assert [(f.removal.kind, [u.who for u in f.uses], f.fix) for f in found] == [
        (
            "FlowSchema",
            [f"{VELERO} (velero/v1.9.0)"],
            "migrate to flowcontrol.apiserver.k8s.io/v1 (available since v1.29)",
        )
    ]


def _sample(value: int, **labels: str) -> str:
    text = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return f"{METRIC}{{{text}}} {value} 1700000000\n"


PDB_V1BETA1 = {"group": "policy", "version": "v1beta1", "resource": "poddisruptionbudgets"}
SNAPSHOT = (
    f"# TYPE {METRIC} gauge\n"
    + _sample(1, **PDB_V1BETA1, subresource="", removed_release="1.25", instance="10.0.1.10:6443")
    + _sample(
        1, **PDB_V1BETA1, subresource="status", removed_release="1.25", instance="10.0.1.11:6443"
    )
    + _sample(0, group="batch", version="v1beta1", resource="cronjobs", removed_release="1.25")
    + _sample(1, group="", version="v1", resource="componentstatuses", instance="10.0.1.10:6443")
    + "# EOF\n"
)


def test_metrics_from_an_evaluated_snapshot() -> None:
    """The gauge as the embedded PromQL engine gives it, converted as the reader says."""
    vector = evaluate(METRIC, parse_snapshot(SNAPSHOT), 1_700_000_000_000)
    assert isinstance(vector, Vector)
    samples = [(dict(lb).get("__name__", ""), dict(lb), v) for lb, v in vector]
    uses = uses_in_metrics(samples)
    assert [
        (u.group, u.version, u.resource, u.kind, u.who, u.detail, u.reported_removed_in)
        for u in uses
    ] == [
        ("", "v1", "componentstatuses", "", "clients of apiserver 10.0.1.10:6443", "", None),
        (
            "policy",
            "v1beta1",
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            "clients of apiserver 10.0.1.10:6443",
            "",
            (1, 25),
        ),
        (
            "policy",
            "v1beta1",
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            "clients of apiserver 10.0.1.11:6443",
            "subresource status",
            (1, 25),
        ),
    ]
    (found,) = findings(removed_between((1, 24), (1, 26)), uses)
    assert found.removal.kind == "PodDisruptionBudget" and len(found.uses) == 2


def test_metric_samples_that_are_not_requests_are_skipped() -> None:
    labels = {"group": "batch", "version": "v1beta1", "resource": "cronjobs"}
    samples: list[Any] = [
        (METRIC, labels, 0.0),
        (METRIC, labels, math.nan),
        (METRIC, labels, math.inf),
        (METRIC, labels, True),
        (METRIC, labels, "1"),
        ("apiserver_request_total", labels, 1.0),
        (METRIC, {**labels, "resource": 5}, 1.0),
        (METRIC, None, 1.0),
        (METRIC, labels),
        None,
        "x",
    ]
    assert uses_in_metrics(samples) == []
    assert len(uses_in_metrics([(METRIC, labels, 10**400)])) == 1  # past any float: requested
    assert len(uses_in_metrics([("", {**labels, "__name__": METRIC}, 1)])) == 1
    assert uses_in_metrics(None) == []  # type: ignore[arg-type]


# --- findings -----------------------------------------------------------------------------


def _object(api_version: str, kind: str, name: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "ns"}}


def test_fix_follows_replacements_the_upgrade_removes_too() -> None:
    v1beta1 = uses_in_objects([_object("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema", "a")])
    (found,) = findings(removed_between((1, 25), (1, 32)), v1beta1)
    assert found.fix == "migrate to flowcontrol.apiserver.k8s.io/v1 (available since v1.29)"
    (found,) = findings(removed_between((1, 25), (1, 26)), v1beta1)
    assert found.fix == "migrate to flowcontrol.apiserver.k8s.io/v1beta2"
    # PodSecurityPolicy: extensions -> policy/v1beta1 -> nothing, once 1.25 is passed.
    psp = uses_in_objects([_object("extensions/v1beta1", "PodSecurityPolicy", "p")])
    assert findings(removed_between((1, 15), (1, 16)), psp)[0].fix == (
        "migrate to policy/v1beta1 (available since v1.10)"
    )
    assert "Pod Security Admission" in findings(removed_between((1, 15), (1, 25)), psp)[0].fix


def test_fix_prefers_an_api_the_current_minor_serves() -> None:
    """The migration happens before the upgrade: from 1.27 to 1.29, flowcontrol v1beta3
    (served since 1.26) rather than v1 (1.29); to 1.32 only v1 is left, so say so."""
    uses = uses_in_objects([_object("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", "a")])
    (found,) = findings(removed_between((1, 27), (1, 29)), uses, current=(1, 27))
    assert found.fix == "migrate to flowcontrol.apiserver.k8s.io/v1beta3 (available since v1.26)"
    (found,) = findings(removed_between((1, 27), (1, 29)), uses)
    assert found.fix == "migrate to flowcontrol.apiserver.k8s.io/v1 (available since v1.29)"
    (found,) = findings(removed_between((1, 27), (1, 32)), uses, current=(1, 27))
    assert found.fix == (
        "migrate to flowcontrol.apiserver.k8s.io/v1 (available since v1.29); v1.27 does not"
        " serve it: upgrade in steps, migrating on the way"
    )
    v1beta3 = uses_in_objects([_object("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "b")])
    (found,) = findings(removed_between((1, 29), (1, 32)), v1beta3, current=(1, 29))
    assert found.fix == "migrate to flowcontrol.apiserver.k8s.io/v1 (available since v1.29)"


def test_uses_match_by_kind_or_else_by_resource() -> None:
    by_kind = Use("policy", "v1beta1", "whatever", "PodDisruptionBudget", "object", "a")
    other_kind = Use("policy", "v1beta1", "poddisruptionbudgets", "Eviction", "object", "b")
    by_resource = Use("policy", "v1beta1", "poddisruptionbudgets", "", "metric", "c")
    other_version = Use("policy", "v1", "poddisruptionbudgets", "", "metric", "d")
    (found,) = findings(
        [_row("policy/v1beta1", "PodDisruptionBudget")],
        [by_kind, other_kind, by_resource, other_version, by_kind],
    )
    assert found.uses == (by_resource, by_kind)


@settings(max_examples=30, deadline=None)
@given(st.randoms(use_true_random=False))
def test_findings_are_deterministic(rng: random.Random) -> None:
    """The same uses and removals in any order give the same findings, in release order."""
    uses = [
        *uses_in_objects(MANIFESTS),
        *uses_in_request_counts([PDB_COUNT]),
        *uses_in_objects([_object("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", "f")]),
    ]
    removals = removed_between((1, 15), (1, 32))
    expected = findings(removals, uses)
    rng.shuffle(uses)
    rng.shuffle(removals)
    assert findings(removals + removals[:3], uses + uses[:2]) == expected
    assert [f.removal for f in expected] == sorted(f.removal for f in expected)
    assert all(list(f.uses) == sorted(f.uses) for f in expected)


# --- hostile input ------------------------------------------------------------------------

_KEYS = [
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "items",
    "labels",
    "spec",
    "status",
    "numberOfUsersToReport",
    "conditions",
    "removedInRelease",
    "requestCount",
    "currentHour",
    "last24h",
    "byNode",
    "nodeName",
    "byUser",
    "username",
    "userAgent",
    "byVerb",
    "verb",
    "type",
    "message",
    "generateName",
]
_TEXTS = [
    "APIRequestCount",
    "APIRequestCountList",
    "List",
    "apiserver.openshift.io/v1",
    "v1",
    "policy/v1beta1",
    "poddisruptionbudgets.v1beta1.policy",
    "pods.v1",
    "1.25",
    "x.",
    "PodDisruptionBudget",
    "a/b/c",
    "/v1",
    METRIC,
]
_scalars = st.one_of(
    st.sampled_from(WEIRD_VALUES + _TEXTS),
    st.integers(-(2**70), 2**70) | st.just(10**400),
    st.floats(allow_nan=True),
    st.text(max_size=12),
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=6), inner, max_size=6)
    ),
    max_leaves=40,
)
_samples = st.lists(
    st.one_of(
        st.tuples(st.sampled_from([METRIC, "", None]), _json, _scalars),
        st.lists(_json, max_size=4),
        _json,
    ),
    max_size=8,
)


def _read_all(value: Any) -> None:
    uses = [*uses_in_objects(value), *uses_in_request_counts(value), *uses_in_metrics(value)]
    assert all(isinstance(u, Use) for u in uses)
    findings(TABLE, uses, current=(1, 27))


def test_fuzz_readers_with_arbitrary_json() -> None:
    """Users' dumps: any JSON-like value (missing fields, wrong types, non-string names)
    is read or skipped, never an exception (the readers' one property)."""
    fuzz("removed-apis-json", _json, _read_all, (), 0.3)
    fuzz("removed-apis-samples", _samples, lambda s: findings(TABLE, uses_in_metrics(s)), (), 0.2)
    fuzz(
        "removed-apis-types",
        swapped([PDB_COUNT, {"items": MANIFESTS, "kind": "List"}]),
        _read_all,
        (),
        0.5,
    )


def test_self_holding_lists_and_huge_lists_end() -> None:
    """A YAML alias can make a List hold itself; tens of thousands of objects are read."""
    items: list[Any] = []
    looped = {"apiVersion": "v1", "kind": "List", "items": items}
    items.extend([looped, MANIFESTS[0]])
    top: list[Any] = [looped]
    top.append(top)
    assert [u.who for u in uses_in_objects(top)] == ["PodDisruptionBudget shop/web-pdb"]
    many = {"kind": "List", "items": [MANIFESTS[0]] * 20_000}
    assert len(uses_in_objects([many])) == 20_000
    users = [_user(f"u{i}", "", {"get": 1}) for i in range(5_000)]
    wide = {**PDB_COUNT, "status": {"last24h": [{"byNode": [{"nodeName": "n", "byUser": users}]}]}}
    assert len(uses_in_request_counts([wide])) == 5_000
