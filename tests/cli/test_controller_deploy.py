"""deploy/controller: the controllers as a Deployment of two leader-elected replicas, with
RBAC limited to what they read and write. Every request the controllers of each platform
send while carrying an upgrade out over a served cluster's API (the API server's audit
log) is allowed by the manifests' ClusterRole and Role, and the manifests go through
kubectl's client-side dry run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic
import pytest
import yaml
from kubernetes import client as k8s

from bench import kube as kube_bench
from kupgrade.sim.create import create_cluster
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.store import Store
from tests.sim.test_golden_runs import _ask_gdc, _ask_kube, _ask_openshift, _example
from tests.support.processes import served_api

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "controller"
Obj = dict[str, Any]


def _spec(platform: str) -> Spec:
    """The platform's example cluster (a Kubernetes one from the bench, at 20 nodes)."""
    return kube_bench.profile(20) if platform == "kubernetes" else _example(platform, 7)


def objects() -> list[Obj]:
    found = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        found += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return found


def of_kind(kind: str) -> list[Obj]:
    return [o for o in objects() if o["kind"] == kind]


def allowed(rules: list[Obj], group: str, resource: str, verb: str) -> bool:
    return any(
        group in r.get("apiGroups", [])
        and resource in r.get("resources", [])
        and verb in r.get("verbs", [])
        for r in rules
    )


def requests_of(audit: Path) -> set[tuple[str, str, str, str]]:
    """(namespace, group, resource[/subresource], verb) of every request in the log."""
    out = set()
    for line in audit.read_text().splitlines():
        event = json.loads(line)
        parts = [p for p in event["requestURI"].split("?")[0].split("/") if p]
        if parts[:1] == ["api"]:
            group, rest = "", parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group, rest = parts[1], parts[3:]
        else:
            continue  # discovery and /version: allowed to every authenticated user
        namespace = ""
        if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) > 2:
            namespace, rest = rest[1], rest[2:]
        if not rest:
            continue
        resource = rest[0] + (f"/{rest[2]}" if len(rest) > 2 else "")
        out.add((namespace, group, resource, event["verb"]))
    return out


def test_two_leader_elected_replicas_with_their_own_account() -> None:
    (deployment,) = of_kind("Deployment")
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    pod = spec["template"]["spec"]
    (account,) = of_kind("ServiceAccount")
    assert pod["serviceAccountName"] == account["metadata"]["name"]
    assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
    (container,) = pod["containers"]
    args = container["args"]
    assert args[:3] == ["controller", "run", "--leader-elect"]
    assert "--kubeconfig" not in args  # in the pod: its service account
    identity = next(e for e in container["env"] if e["name"] == "POD_NAME")
    assert identity["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    for binding in of_kind("ClusterRoleBinding") + of_kind("RoleBinding"):
        (subject,) = binding["subjects"]
        assert subject["name"] == account["metadata"]["name"]
        kinds = {o["metadata"]["name"] for o in of_kind(binding["roleRef"]["kind"])}
        assert binding["roleRef"]["name"] in kinds
    (role,) = of_kind("Role")
    assert role["metadata"]["namespace"] == "kube-system"
    assert allowed(role["rules"], "coordination.k8s.io", "leases", "update")
    (cluster_role,) = of_kind("ClusterRole")
    for rule in cluster_role["rules"]:  # no wildcard anywhere
        assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"]
    assert not allowed(cluster_role["rules"], "coordination.k8s.io", "leases", "update")
    # The backend writes with PUT (client-go's Update): only its state ConfigMap is patched.
    patched = {
        r for rule in cluster_role["rules"] if "patch" in rule["verbs"] for r in rule["resources"]
    }
    assert patched == {"configmaps"}


@pytest.mark.parametrize(
    ("platform", "ask"),
    [("openshift", _ask_openshift), ("gdc", _ask_gdc), ("kubernetes", _ask_kube)],
)
def test_every_request_of_the_controllers_is_allowed(
    tmp_path: Path, platform: str, ask: Callable[[Path, Store, Spec], None]
) -> None:
    spec = _spec(platform)
    root = create_cluster(tmp_path, "c", Profile(spec=spec))
    store = Store(root / "cluster.db")
    ask(root, store, spec)
    store.close()
    audit = tmp_path / "audit.jsonl"
    with served_api(tmp_path, "c", "--no-controllers", "--audit-log", str(audit)) as (_, info):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "kupgrade",
                "controller",
                "run",
                "--kubeconfig",
                info["kubeconfig"],
                "--leader-elect",
                "-o",
                "json",
            ],
            capture_output=True,
            check=False,
            env={**os.environ, "KUPGRADE_HOME": str(tmp_path)},
        )
    assert done.returncode == 0, done.stderr.decode()
    (cluster_role,) = of_kind("ClusterRole")
    (role,) = of_kind("Role")
    refused = sorted(
        (ns, group, resource, verb)
        for ns, group, resource, verb in requests_of(audit)
        if not allowed(cluster_role["rules"], group, resource, verb)
        and not (
            ns == role["metadata"]["namespace"] and allowed(role["rules"], group, resource, verb)
        )
    )
    assert refused == []


def schema_errors(obj: Obj) -> str:
    """The object checked against the Kubernetes OpenAPI schema, as the official Python
    client's models carry it (strict types, no unknown field): its errors, or ''."""
    group_version = str(obj.get("apiVersion", ""))
    model = getattr(k8s, f"{group_version.rpartition('/')[2].capitalize()}{obj.get('kind')}", None)
    if model is None:
        return f"no schema for {group_version} {obj.get('kind')}"
    try:
        model.model_validate(obj, strict=True)
    except pydantic.ValidationError as exc:
        return str(exc)
    return ""


def test_the_manifests_follow_the_kubernetes_schema() -> None:
    assert {o["kind"] for o in objects()} == {
        "ServiceAccount",
        "Deployment",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
    }
    for obj in objects():
        assert schema_errors(obj) == "", obj["metadata"]["name"]
    (deployment,) = of_kind("Deployment")
    typo = json.loads(json.dumps(deployment))
    typo["spec"]["template"]["spec"]["containers"][0]["arg"] = ["controller"]
    typo["spec"]["replicas"] = "2"
    said = schema_errors(typo)
    assert "arg" in said and "Extra inputs are not permitted" in said
    assert "spec.replicas" in said  # a number written as a string


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_accepts_the_manifests(tmp_path: Path) -> None:
    """Client-side dry run against a served cluster: its discovery knows these kinds (and
    kubectl's own validation, on by default, runs)."""
    create_cluster(tmp_path, "c", Profile(spec=_spec("kubernetes")))
    with served_api(tmp_path, "c") as (_, info):
        done = subprocess.run(
            [
                "kubectl",
                "--kubeconfig",
                info["kubeconfig"],
                "apply",
                "--dry-run=client",
                "-f",
                str(DEPLOY),
                "-o",
                "name",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    names = set(done.stdout.split())
    for obj in objects():
        assert any(n.endswith(f"/{obj['metadata']['name']}") for n in names), obj["kind"]
