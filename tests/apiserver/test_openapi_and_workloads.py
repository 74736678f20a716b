"""The simulated API as kubectl needs it for its everyday commands (SPEC X6): OpenAPI v2
(gnostic protobuf, which kubectl 1.27 reads first) and v3, so that `apply -f` without
--validate=false, `apply --server-side`, `diff -f` and `explain` work; server-side field
validation (Strict refuses an unknown field in kube-apiserver's words, Warn warns and
drops it); workloads as objects (`get deploy,rs,ds,sts -A`, `rollout status`, owners
with uids); `kubectl logs` answered with a Status; events with kubectl's columns; a
stale update answered 409. Real kubectl, oldest and newest on this machine."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kupgrade.apiserver import openapi
from kupgrade.apiserver.resources import RESOURCES
from kupgrade.views.tables import human_duration
from tests.apiserver.test_kubeapi import KUBECTLS, Served, needs_kubectl, served_profile
from tests.support.cli import run_cli

PROFILE = """\
spec:
  seed: 5
  pools:
  - {name: master, nodes: 3, maxUnavailable: 1}
  - {name: worker, nodes: 3, maxUnavailable: 1}
  workloads:
  - {name: web, namespace: shop, replicas: 3, pdb: {minAvailable: 2}}
  - {name: agent, namespace: mon, kind: DaemonSet}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served_profile(tmp_path_factory.mktemp("openapi") / "home", PROFILE) as served:
        yield served


def _manifest(served: Served, name: str, doc: dict[str, Any]) -> str:
    path = served.home.parent / name
    path.write_text(json.dumps(doc))
    return str(path)


def _configmap(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "shop"},
        "data": {"a": "b"},
        **extra,
    }


# --- the documents --------------------------------------------------------------------


def test_every_served_kind_has_one_schema_and_every_reference_resolves() -> None:
    root = json.loads(openapi.root())
    docs = {path: json.loads(body) for path, body in openapi.documents().items()}
    assert set(root["paths"]) == set(docs)
    for path, entry in root["paths"].items():
        assert entry["serverRelativeURL"].startswith(f"/openapi/v3/{path}?hash=")
    kinds = set()
    for doc in docs.values():
        schemas = doc["components"]["schemas"]
        for schema in schemas.values():
            for gvk in schema.get("x-kubernetes-group-version-kind", []):
                kinds.add((gvk["group"], gvk["version"], gvk["kind"]))
        for text in _refs(doc):
            assert text.removeprefix(openapi.SCHEMAS) in schemas, text
        for item in doc["paths"].values():
            patch = item.get("patch")
            if patch is not None:  # what kubectl's queryparams.go looks for
                names = {p["name"] for p in patch["parameters"]}
                assert {"fieldValidation", "dryRun", "fieldManager"} <= names
    assert kinds == {(r.group, r.version, r.kind) for r in RESOURCES}


def _refs(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str):  # not a property named "$ref"
                yield item
            else:
                yield from _refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)


def test_unknown_fields_are_named_by_path_and_old_ones_are_left_alone() -> None:
    pod = {
        "metadata": {"name": "p", "labels": {"any": "key"}},
        "spec": {"containers": [{"name": "c", "imagee": "x"}], "nodeName": "n"},
        "status": {"runningImage": "kept"},
        "extra": 1,
    }
    assert openapi.unknown_fields("Pod", pod, {}) == [
        "spec.containers[0].imagee",
        "status.runningImage",
        "extra",
    ]
    old = {"status": {"runningImage": "before"}}
    assert openapi.unknown_fields("Pod", pod, old, prune=True) == [
        "spec.containers[0].imagee",
        "extra",
    ]
    assert "extra" not in pod and pod["status"] == {"runningImage": "kept"}
    assert openapi.unknown_fields("ClusterVersion", {"spec": {"anything": 1}}, {}) == []


# kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/duration/duration_test.go
# (Apache-2.0, commit 008b3652959ca58af8be3fb5b6ecfe9ae7638282): TestHumanDuration and
# TestHumanDurationBoundaries, in seconds.
HOUR, DAY, YEAR = 3600, 86400, 365 * 86400
HUMAN_DURATIONS = [
    (1, "1s"),
    (70, "70s"),
    (190, "3m10s"),
    (70 * 60, "70m"),
    (47 * HOUR, "47h"),
    (49 * HOUR, "2d1h"),
    ((8 * 24 + 2) * HOUR, "8d"),
    (367 * DAY, "367d"),
    ((365 * 2 * 24 + 25) * HOUR, "2y1d"),
    ((365 * 8 * 24 + 2) * HOUR, "8y"),
    (-2, "<invalid>"),
    (-1.999, "0s"),
    (0, "0s"),
    (0.999, "0s"),
    (119.999, "119s"),
    (120, "2m"),
    (121, "2m1s"),
    (599.999, "9m59s"),
    (600, "10m"),
    (601, "10m"),
    (3 * HOUR - 0.001, "179m"),
    (3 * HOUR, "3h"),
    (3 * HOUR + 60, "3h1m"),
    (8 * HOUR - 0.001, "7h59m"),
    (8 * HOUR, "8h"),
    (8 * HOUR + 59 * 60, "8h"),
    (2 * DAY - 0.001, "47h"),
    (2 * DAY, "2d"),
    (2 * DAY + HOUR, "2d1h"),
    (8 * DAY - 0.001, "7d23h"),
    (8 * DAY, "8d"),
    (8 * DAY + 23 * HOUR, "8d"),
    (2 * YEAR - 0.001, "729d"),
    (2 * YEAR, "2y"),
    (2 * YEAR + 23 * HOUR + 59 * 60, "2y"),
    (2 * YEAR + DAY, "2y1d"),
    (7 * YEAR, "7y"),
    (8 * YEAR - 0.001, "7y364d"),
    (8 * YEAR, "8y"),
    (8 * YEAR + 364 * DAY, "8y"),
    (9 * YEAR, "9y"),
]


@pytest.mark.parametrize(("seconds", "shown"), HUMAN_DURATIONS)
def test_ages_are_printed_as_kubectl_prints_them(seconds: float, shown: str) -> None:
    assert human_duration(seconds) == shown


# --- kubectl ----------------------------------------------------------------------------


@needs_kubectl
@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda p: p.name)
def test_apply_validates_on_the_server_and_explain_reads_the_schema(
    served: Served, kubectl: Path
) -> None:
    name = f"plain-{kubectl.name.replace('.', '-')}"
    applied = served.kubectl(kubectl, "apply", "-f", _manifest(served, "a.json", _configmap(name)))
    assert applied.returncode == 0 and f"configmap/{name} created" in applied.stdout
    bogus = _manifest(served, "b.json", _configmap(f"{name}-x", bogus=1))
    refused = served.kubectl(kubectl, "apply", "-f", bogus)
    assert refused.returncode == 1
    assert 'strict decoding error: unknown field "bogus"' in refused.stderr
    warned = served.kubectl(kubectl, "apply", "-f", bogus, "--validate=warn")
    assert warned.returncode == 0 and 'Warning: unknown field "bogus"' in warned.stderr
    stored = served.kubectl(kubectl, "get", "cm", f"{name}-x", "-n", "shop", "-o", "json")
    assert "bogus" not in json.loads(stored.stdout)  # dropped, as decoding drops it
    explained = served.kubectl(kubectl, "explain", "nodes.spec.taints")
    assert explained.returncode == 0, explained.stderr
    assert "KIND:       Node" in explained.stdout
    assert "effect\t<string> -required-" in explained.stdout
    crd = served.kubectl(kubectl, "explain", "clusterversion")
    assert crd.returncode == 0 and "config.openshift.io" in crd.stdout


@needs_kubectl
@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda p: p.name)
def test_diff_changes_nothing_and_server_side_apply_creates_then_merges(
    served: Served, kubectl: Path
) -> None:
    name = f"ssa-{kubectl.name.replace('.', '-')}"
    first = _manifest(served, "s1.json", _configmap(name))
    created = served.kubectl(kubectl, "apply", "--server-side", "-f", first)
    assert created.returncode == 0 and "serverside-applied" in created.stdout, created.stderr
    changed = _manifest(served, "s2.json", {**_configmap(name), "data": {"a": "c", "n": "1"}})
    diff = served.kubectl(kubectl, "diff", "-f", changed)
    assert diff.returncode == 1, diff.stderr  # kubectl diff: 1 means there are changes
    assert "-  a: b" in diff.stdout and "+  a: c" in diff.stdout
    kept = served.kubectl(kubectl, "get", "cm", name, "-n", "shop", "-o", "jsonpath={.data}")
    assert json.loads(kept.stdout) == {"a": "b"}  # the diff's dry run stored nothing
    merged = served.kubectl(kubectl, "apply", "--server-side", "-f", changed)
    assert merged.returncode == 0, merged.stderr
    now = served.kubectl(kubectl, "get", "cm", name, "-n", "shop", "-o", "jsonpath={.data}")
    assert json.loads(now.stdout) == {"a": "c", "n": "1"}


@needs_kubectl
@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda p: p.name)
def test_workloads_are_objects_kubectl_lists_and_watches(served: Served, kubectl: Path) -> None:
    listed = served.kubectl(kubectl, "get", "deploy,rs,ds,sts", "-A")
    assert listed.returncode == 0, listed.stderr
    rows = {tuple(line.split()[:2]) for line in listed.stdout.splitlines()}
    assert ("shop", "deployment.apps/web") in rows
    assert ("shop", "replicaset.apps/web") in rows
    assert ("mon", "daemonset.apps/agent") in rows
    assert ("openshift-machine-config-operator", "daemonset.apps/machine-config-daemon") in rows
    web = next(line.split() for line in listed.stdout.splitlines() if "deployment.apps/web" in line)
    assert web[2:5] == ["3/3", "3", "3"]  # READY UP-TO-DATE AVAILABLE
    for what in ("deploy/web", "ds/agent"):
        done = served.kubectl(kubectl, "rollout", "status", what, "-n", what_namespace(what))
        assert done.returncode == 0 and "successfully rolled out" in done.stdout, done.stderr


def what_namespace(what: str) -> str:
    return "shop" if what == "deploy/web" else "mon"


def test_owner_references_carry_the_owners_uids(served: Served) -> None:
    with served.http() as http:
        pods = http.get("/api/v1/namespaces/shop/pods").json()["items"]
        rs = http.get("/apis/apps/v1/namespaces/shop/replicasets/web").json()
        deploy = http.get("/apis/apps/v1/namespaces/shop/deployments/web").json()
        agents = http.get("/api/v1/namespaces/mon/pods").json()["items"]
        ds = http.get("/apis/apps/v1/namespaces/mon/daemonsets/agent").json()
    assert {p["metadata"]["ownerReferences"][0]["uid"] for p in pods} == {rs["metadata"]["uid"]}
    assert rs["metadata"]["ownerReferences"][0]["uid"] == deploy["metadata"]["uid"]
    assert {p["metadata"]["ownerReferences"][0]["uid"] for p in agents} == {ds["metadata"]["uid"]}
    assert deploy["status"]["readyReplicas"] == 3 and ds["status"]["numberReady"] == 3
    assert all(p["spec"]["containers"] for p in pods)  # a pod always shows a container


@needs_kubectl
@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda p: p.name)
def test_logs_and_events_answer_as_kubectl_expects(served: Served, kubectl: Path) -> None:
    logs = served.kubectl(kubectl, "logs", "web-00000", "-n", "shop")
    assert logs.returncode == 1 and "panic" not in logs.stderr
    assert "Error from server (BadRequest)" in logs.stderr and "has no logs" in logs.stderr
    with served.http() as http:
        posted = http.post(
            "/api/v1/namespaces/shop/events",
            json={
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": f"note-{kubectl.name}", "namespace": "shop"},
                "involvedObject": {"kind": "Pod", "name": "web-00001", "namespace": "shop"},
                "reason": "Checked",
                "message": "looked at by a test",
                "type": "Normal",
            },
        )
        assert posted.status_code == 201, posted.text
    events = served.kubectl(kubectl, "get", "events", "-A", "--sort-by=.lastTimestamp")
    assert events.returncode == 0, events.stderr
    head = (events.stdout.splitlines() or [events.stderr])[0].split()
    assert head[:4] == ["NAMESPACE", "LAST", "SEEN", "TYPE"]
    assert any(
        "Checked" in line and "pod/web-00001" in line and "looked at by a test" in line
        for line in events.stdout.splitlines()
    )


@needs_kubectl
@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda p: p.name)
def test_a_stale_update_is_a_conflict(served: Served, kubectl: Path) -> None:
    got = served.kubectl(kubectl, "get", "pdb", "web", "-n", "shop", "-o", "json")
    old = json.loads(got.stdout)
    with served.http() as http:
        changed = http.patch(
            "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web",
            content=b'{"metadata":{"labels":{"touched":"yes"}}}',
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert changed.status_code == 200
    stale = _manifest(served, "stale.json", old)
    replaced = served.kubectl(kubectl, "replace", "-f", stale)
    assert replaced.returncode == 1
    assert "the object has been modified" in replaced.stderr
    assert "Conflict" in replaced.stderr or "conflict" in replaced.stderr.lower()


def test_the_v2_document_is_served_as_json_or_protobuf(served: Served) -> None:
    with served.http() as http:
        as_json = http.get("/openapi/v2", headers={"Accept": "application/json"})
        as_proto = http.get(
            "/openapi/v2",
            headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
        )
    doc = as_json.json()
    assert doc["swagger"] == "2.0" and "io.k8s.api.core.v1.Node" in doc["definitions"]
    spec = doc["definitions"]["io.k8s.api.policy.v1.PodDisruptionBudgetSpec"]
    assert spec["properties"]["minAvailable"]["format"] == "int-or-string"
    assert as_proto.headers["content-type"].endswith("+protobuf")
    assert as_proto.content[:2] == b"\x0a\x03" and as_proto.content[2:5] == b"2.0"


def test_kupgrade_get_shows_pods_budgets_workloads_and_events(served: Served) -> None:
    for what, expected in (
        ("pods", "web-00000"),
        ("pdb", "web"),
        ("deploy", "web"),
        ("ds", "agent"),
        ("rs", "web"),
        ("events", "LAST SEEN"),
    ):
        local = run_cli(["get", what, "--cluster", "demo"], served.home)
        assert local.exit_code == 0 and expected in local.stdout, (what, local.stderr)
        remote = run_cli(["get", what, "--kubeconfig", str(served.kubeconfig)], served.home)
        assert remote.exit_code == 0 and expected in remote.stdout, (what, remote.stderr)
    deploy = run_cli(["get", "deploy", "--cluster", "demo", "-n", "shop"], served.home)
    assert deploy.stdout.split("\n")[1].split()[1:5] == ["web", "3/3", "3", "3"]


def test_raw_http_field_validation(served: Served) -> None:
    with served.http() as http:
        refused = http.post(
            "/api/v1/namespaces/shop/configmaps",
            params={"fieldValidation": "Strict"},
            json=_configmap("raw", spec={"x": 1}),
        )
        assert refused.status_code == 400 and 'unknown field "spec"' in refused.json()["message"]
        odd = http.post(
            "/api/v1/namespaces/shop/configmaps",
            params={"fieldValidation": "Loud"},
            json=_configmap("raw"),
        )
        assert odd.status_code == 400 and "fieldValidation" in odd.json()["message"]
        ignored = http.post(
            "/api/v1/namespaces/shop/configmaps",
            params={"fieldValidation": "Ignore"},
            json=_configmap("raw", spec={"x": 1}),
        )
        assert ignored.status_code == 201 and "warning" not in ignored.headers
        assert "spec" not in ignored.json()
        assert http.get("/api/v1/namespaces/shop/configmaps/raw").status_code == 200


@needs_kubectl
@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda p: p.name)
def test_typed_creates_work_whatever_body_kubectl_sends(served: Served, kubectl: Path) -> None:
    """kubectl 1.33's typed creates send protobuf (and do not fall back to JSON)."""
    tag = kubectl.name.replace(".", "-")
    for args in (
        ("configmap", f"cm-{tag}", "--from-literal=a=b"),
        ("secret", "generic", f"pw-{tag}", "--from-literal=pw=hunter2"),
        ("serviceaccount", f"bot-{tag}"),
    ):
        made = served.kubectl(kubectl, "create", *args, "-n", "shop")
        assert made.returncode == 0, made.stderr
    data = served.kubectl(kubectl, "get", "cm", f"cm-{tag}", "-n", "shop", "-o", "json")
    assert json.loads(data.stdout)["data"] == {"a": "b"}
    secret = served.kubectl(kubectl, "get", "secret", f"pw-{tag}", "-n", "shop", "-o", "json")
    assert json.loads(secret.stdout)["data"] == {"pw": "aHVudGVyMg=="}
