"""deploy/updateservice/ and deploy/Containerfile hold together: every object is well
formed, labels and selectors meet, probes and scrapes reach routes the service has, the
container arguments parse with the real CLI, kubectl accepts the manifests, and the
container build file copies what the repository has and runs kupgrade as non-root."""

from __future__ import annotations

import http.server
import json
import re
import shutil
import subprocess
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import kupgrade.cli.serve as serve_module
from kupgrade.cli.main import app
from kupgrade.updateservice.app import UpdateService
from kupgrade.updateservice.metrics import ServiceMetrics
from kupgrade.updateservice.server import ServeConfig, check_role
from kupgrade.updateservice.state import GraphState

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy" / "updateservice"
Obj = dict[str, Any]


def objects() -> list[Obj]:
    found = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        found += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return found


def of_kind(kind: str) -> list[Obj]:
    return [o for o in objects() if o["kind"] == kind]


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def pod_of(deployment: Obj) -> Obj:
    return dict(deployment["spec"]["template"])


def kupgrade_containers() -> Iterator[tuple[Obj, Obj]]:
    for deployment in of_kind("Deployment"):
        for container in pod_of(deployment)["spec"]["containers"]:
            if "/kupgrade/kupgrade:" in container["image"]:
                yield deployment, container


def test_every_object_is_named_and_unique() -> None:
    seen = set()
    for obj in objects():
        assert obj.get("apiVersion") and obj.get("kind"), obj
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", obj["metadata"]["name"])
        key = (obj["kind"], obj["metadata"]["name"])
        assert key not in seen, key
        seen.add(key)
    kinds = {o["kind"] for o in objects()}
    assert {"Deployment", "Service", "HorizontalPodAutoscaler", "ServiceMonitor"} <= kinds


def test_selectors_meet_their_pods() -> None:
    deployments = of_kind("Deployment")
    for deployment in deployments:
        selector = deployment["spec"]["selector"]["matchLabels"]
        assert matches(selector, pod_of(deployment)["metadata"]["labels"]), deployment
    for service in of_kind("Service"):
        backing = [
            d
            for d in deployments
            if matches(service["spec"]["selector"], pod_of(d)["metadata"]["labels"])
        ]
        assert len(backing) == 1, service["metadata"]["name"]
        ports = {
            p["name"] for c in pod_of(backing[0])["spec"]["containers"] for p in c.get("ports", [])
        }
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in ports, (service["metadata"]["name"], port)


def test_one_builder_and_autoscaled_replicas() -> None:
    roles: dict[str, Obj] = {}
    for deployment, container in kupgrade_containers():
        args = container["args"]
        roles[args[args.index("--role") + 1]] = deployment
    assert set(roles) == {"builder", "replica"}
    assert roles["builder"]["spec"]["replicas"] == 1
    assert roles["builder"]["spec"]["strategy"]["type"] == "Recreate"
    (hpa,) = of_kind("HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"]) == ("apps/v1", "Deployment")
    assert target["name"] == roles["replica"]["metadata"]["name"]
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    # Utilization is relative to the request: every container of the target asks CPU.
    for container in pod_of(roles["replica"])["spec"]["containers"]:
        assert container["resources"]["requests"]["cpu"]


def _routes() -> set[str]:
    state = GraphState(Path("releases"), Path("graph-data"), 60, ServiceMetrics())
    return set(UpdateService(state).route_names)


def test_probes_and_scrapes_reach_the_service() -> None:
    routes = _routes()
    for _, container in kupgrade_containers():
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        args = container["args"]
        assert ports["http"] == int(args[args.index("--port") + 1])
        assert args[args.index("--host") + 1] == "0.0.0.0"  # reachable from the kubelet
        for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
            assert container[probe]["httpGet"] == {"path": path, "port": "http"}
            assert path in routes
    (monitor,) = of_kind("ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    scraped = [
        s
        for s in of_kind("Service")
        if matches(monitor["spec"]["selector"]["matchLabels"], s["metadata"]["labels"])
    ]
    assert {s["metadata"]["name"] for s in scraped} == {
        d["metadata"]["name"] for d, _ in kupgrade_containers()
    }  # the builder's and the replicas' Services, named as their Deployments
    for endpoint in monitor["spec"]["endpoints"]:
        assert endpoint["path"] in routes
        for service in scraped:
            assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}


def test_container_arguments_parse_with_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each container's args, as `kupgrade serve` parses them, with the paths mounted
    into the container made under tmp_path; then the role's own checks (no network)."""
    taken: list[tuple[ServeConfig, bool]] = []

    def checked(config: ServeConfig, *, wait_for_snapshot: bool = False) -> None:
        check_role(config, wait_for_snapshot=wait_for_snapshot)
        taken.append((config, wait_for_snapshot))

    monkeypatch.setattr(serve_module, "serve", checked)
    for deployment, container in kupgrade_containers():
        mounts = [m["mountPath"] for m in container.get("volumeMounts", [])]
        args = list(container["args"])
        for i, arg in enumerate(args):
            if arg.startswith("/"):
                assert any(arg.startswith(m + "/") for m in mounts), (arg, mounts)
                local = tmp_path / arg.lstrip("/")
                local.parent.mkdir(parents=True, exist_ok=True)
                if local.suffix:
                    local.write_text('{"nodes": [], "edges": []}')
                else:
                    local.mkdir(exist_ok=True)
                args[i] = str(local)
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, (deployment["metadata"]["name"], result.output)
    roles = {config.role: (config, wait) for config, wait in taken}
    assert set(roles) == {"builder", "replica"}
    builder, replica = roles["builder"][0], roles["replica"]
    assert builder.snapshots == replica[0].snapshots  # both meet at one source
    assert replica[1] is True  # a replica Deployment waits for the builder, not-ready


# --- kubectl -----------------------------------------------------------------------------

# What kubectl's client-side dry run needs from a server: discovery of the kinds (to map
# each object to its resource) and a 404 for the GET of each object (it is not there yet,
# so `apply` would create it). kupgrade's simulated API server (kupgrade/apiserver) serves
# Deployments, Services and ConfigMaps but neither autoscaling/v2 nor the Prometheus
# Operator's ServiceMonitor, so this discovery-only server stands in, with the real
# Kubernetes names of exactly these resources; kubectl then decodes every object, checks
# its kind against discovery and computes what it would create. --validate=false because
# schema validation needs the server's OpenAPI documents; the checks above are that.
DISCOVERY: dict[str, list[tuple[str, str, bool]]] = {
    "v1": [
        ("ConfigMap", "configmaps", True),
        ("Service", "services", True),
        ("PersistentVolumeClaim", "persistentvolumeclaims", True),
        ("Namespace", "namespaces", False),
    ],
    "apps/v1": [("Deployment", "deployments", True)],
    "autoscaling/v2": [("HorizontalPodAutoscaler", "horizontalpodautoscalers", True)],
    "monitoring.coreos.com/v1": [("ServiceMonitor", "servicemonitors", True)],
}


class _Discovery(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        doc: Any = None
        if path == "/version":
            doc = {"major": "1", "minor": "32", "gitVersion": "v1.32.0"}
        elif path == "/api":
            doc = {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
        elif path == "/apis":
            groups = []
            for gv in DISCOVERY:
                if "/" in gv:
                    entry = {"groupVersion": gv, "version": gv.split("/")[1]}
                    groups.append(
                        {"name": gv.split("/")[0], "versions": [entry], "preferredVersion": entry}
                    )
            doc = {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
        else:
            gv = path.removeprefix("/api/").removeprefix("/apis/")
            if gv in DISCOVERY:
                doc = {
                    "kind": "APIResourceList",
                    "apiVersion": "v1",
                    "groupVersion": gv,
                    "resources": [
                        {
                            "name": plural,
                            "singularName": kind.lower(),
                            "namespaced": namespaced,
                            "kind": kind,
                            "verbs": ["create", "get", "list", "patch", "delete"],
                        }
                        for kind, plural, namespaced in DISCOVERY[gv]
                    ],
                }
        status = 200 if doc is not None else 404
        if doc is None:
            doc = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": "NotFound",
                "code": 404,
            }
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_accepts_the_manifests(tmp_path: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Discovery)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {
                            "name": "c",
                            "cluster": {"server": f"http://127.0.0.1:{server.server_port}"},
                        }
                    ],
                    "users": [{"name": "u", "user": {}}],
                    "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                    "current-context": "x",
                }
            )
        )
        done = subprocess.run(
            [
                "kubectl",
                "--kubeconfig",
                str(kubeconfig),
                "--cache-dir",
                str(tmp_path / "cache"),
                "apply",
                "--dry-run=client",
                "--validate=false",
                "-n",
                "kupgrade",
                "-f",
                str(DEPLOY),
                "-o",
                "name",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr
    applied = sorted(done.stdout.split())
    expected = sorted(
        f"{o['kind'].lower()}.{o['apiVersion'].split('/')[0] if '/' in o['apiVersion'] else ''}"
        f"/{o['metadata']['name']}".replace("./", "/")
        for o in objects()
    )
    assert applied == expected


# --- the container build file ---------------------------------------------------------


def _instructions() -> list[tuple[str, str]]:
    text = (REPO / "deploy" / "Containerfile").read_text()
    text = re.sub(r"\\\n", " ", text)
    out = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_the_containerfile_builds_from_the_repository() -> None:
    steps = _instructions()
    bases = [rest for word, rest in steps if word == "FROM"]
    assert bases and all(re.match(r"docker\.io/library/python:3\.\d+-slim\b", b) for b in bases)
    for word, rest in steps:
        if word == "COPY" and "--from=" not in rest:
            *sources, _ = rest.split()
            for source in sources:
                assert (REPO / source).exists(), source
    (entrypoint,) = [json.loads(rest) for word, rest in steps if word == "ENTRYPOINT"]
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert entrypoint == ["kupgrade"] and "kupgrade" in scripts
    user = [rest for word, rest in steps if word == "USER"][-1]
    assert user not in ("root", "0") and user.isdigit()
    # The Deployments run as that user and say so (runAsNonRoot needs a number).
    for deployment, _ in kupgrade_containers():
        context = pod_of(deployment)["spec"]["securityContext"]
        assert context["runAsNonRoot"] is True and str(context["runAsUser"]) == user
