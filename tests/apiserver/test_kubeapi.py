"""The simulated cluster's Kubernetes API, spoken to by real kubectl (the oldest and the
newest on this machine) and by plain HTTP: discovery, tables with oc's columns, drains
through evictions that stop on a budget, an upgrade started with `kubectl patch` and
carried out by the running controllers, watches, and Status errors for bad requests."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.profile import Spec
from kupgrade.sim.sample import write_sample
from tests.support.cli import run_cli
from tests.support.processes import served_api
from tests.support.service import running_server

SDK = Path("/usr/lib/google-cloud-sdk/bin")


def _kubectls() -> list[Path]:
    """The oldest and newest kubectl of the Cloud SDK, or whichever kubectl there is."""
    versions = sorted(
        (tuple(int(x) for x in p.name.split(".", 1)[1].split(".")), p)
        for p in SDK.glob("kubectl.1.*")
    )
    if versions:
        return sorted({versions[0][1], versions[-1][1]})
    found = shutil.which("kubectl")
    return [Path(found)] if found else []


KUBECTLS = _kubectls()
needs_kubectl = pytest.mark.skipif(not KUBECTLS, reason="no kubectl on this machine")
PROFILE = """\
spec:
  seed: 5
  pools:
  - {name: master, nodes: 3, maxUnavailable: 1}
  - {name: worker, nodes: 3, maxUnavailable: 1}
  workloads:
  - {name: web, namespace: shop, replicas: 3, pdb: {minAvailable: 3}}
  - {name: db, namespace: data, replicas: 2, pdb: {maxUnavailable: 1}, terminationSeconds: 10}
"""


@dataclass
class Served:
    home: Path
    root: Path
    kubeconfig: Path
    server: str
    process: subprocess.Popen[bytes]

    def kubectl(
        self, kubectl: Path, *args: str, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(kubectl), "--kubeconfig", str(self.kubeconfig), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def token(self) -> str:
        doc = yaml.safe_load(self.kubeconfig.read_text())
        return str(doc["users"][0]["user"]["token"])

    def trust(self) -> ssl.SSLContext:
        """Trust the cluster's own CA, as the kubeconfig tells clients to."""
        return ssl.create_default_context(cafile=str(self.root / "api" / "ca.crt"))

    def http(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.server,
            verify=self.trust(),
            headers={"Authorization": f"Bearer {self.token()}"},
        )


def serve(tmp_path: Path, speed: str) -> Iterator[Served]:
    home = tmp_path / "home"
    env = {**os.environ, "KUPGRADE_HOME": str(home)}
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE)
    subprocess.run(
        [sys.executable, "-m", "kupgrade", "cluster", "create", "demo", "--profile", str(profile)],
        env=env,
        check=True,
        capture_output=True,
    )
    yield from serve_existing(home, "demo", speed)


@contextmanager
def served_profile(home: Path, profile: str) -> Iterator[Served]:
    """Cluster `demo` made from `profile` in `home`, served with a stepped clock and no
    controllers (nothing moves unless someone writes), until the caller is done."""
    path = home.parent / "profile.yaml"
    path.write_text(profile)
    created = run_cli(["cluster", "create", "demo", "--profile", str(path)], home)
    assert created.exit_code == 0, created.stderr
    with served_api(home, "demo", "--no-controllers") as (process, info):
        yield Served(
            home, home / "clusters" / "demo", Path(info["kubeconfig"]), info["server"], process
        )


def serve_existing(home: Path, name: str, speed: str = "1") -> Iterator[Served]:
    """`cluster serve-api NAME` on an existing cluster, until the caller is done."""
    with served_api(home, name, "--speed", speed) as (process, info):
        yield Served(
            home, home / "clusters" / "demo", Path(info["kubeconfig"]), info["server"], process
        )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve(tmp_path_factory.mktemp("kubeapi"), "1")


def _head(text: str) -> list[str]:
    return text.splitlines()[0].split()


@needs_kubectl
@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda p: p.name)
def test_kubectl_gets_print_the_columns_of_oc(served: Served, kubectl: Path) -> None:
    nodes = served.kubectl(kubectl, "get", "nodes")
    assert nodes.returncode == 0, nodes.stderr
    assert _head(nodes.stdout) == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert [line.split()[0] for line in nodes.stdout.splitlines()[1:]] == [
        "master-0",
        "master-1",
        "master-2",
        "worker-0",
        "worker-1",
        "worker-2",
    ]
    assert {line.split()[-1] for line in nodes.stdout.splitlines()[1:]} == {"v1.26.0"}
    pods = served.kubectl(kubectl, "get", "pods", "-A")
    assert _head(pods.stdout) == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert {tuple(line.split()[:2]) for line in pods.stdout.splitlines()[1:]} >= {
        ("shop", "web-00000"),
        ("data", "db-00000"),
    }
    cv = served.kubectl(kubectl, "get", "clusterversion")
    assert _head(cv.stdout) == ["NAME", "VERSION", "AVAILABLE", "PROGRESSING", "SINCE", "STATUS"]
    assert cv.stdout.splitlines()[1].split()[:2] == ["version", "4.13.40"]
    co = served.kubectl(kubectl, "get", "co")
    assert _head(co.stdout)[:5] == ["NAME", "VERSION", "AVAILABLE", "PROGRESSING", "DEGRADED"]
    mcp = served.kubectl(kubectl, "get", "mcp")
    assert _head(mcp.stdout)[:5] == ["NAME", "CONFIG", "UPDATED", "UPDATING", "DEGRADED"]
    pdb = served.kubectl(kubectl, "get", "pdb", "-A")
    assert "ALLOWED" in pdb.stdout and "DISRUPTIONS" in pdb.stdout
    rows = {line.split()[1]: line.split() for line in pdb.stdout.splitlines()[1:]}
    assert rows["web"][-2] == "0" and rows["db"][-2] == "1"
    one = served.kubectl(kubectl, "get", "clusterversion", "version", "-o", "json")
    assert json.loads(one.stdout)["status"]["desired"]["version"] == "4.13.40"
    missing = served.kubectl(kubectl, "get", "node", "nope")
    assert missing.returncode == 1 and 'nodes "nope" not found' in missing.stderr
    version = served.kubectl(kubectl, "version", "-o", "json")
    assert json.loads(version.stdout)["serverVersion"]["minor"] == "26"  # OpenShift 4.13


@needs_kubectl
@needs_kubectl
def test_namespaces_are_every_one_an_object_lives_in(served: Served) -> None:
    """GET namespaces: the stored ones and one for each namespace of an object (found
    from the store's keys, so that a pod kept as bytes is not decoded for it)."""
    from kupgrade.sim.store import Store  # noqa: PLC0415 - read after the server started

    store = Store(served.root / "cluster.db", shared=True)
    try:
        wanted = {key[1] for kind in ("Pod", "Deployment", "ConfigMap") for key in store.keys(kind)}
    finally:
        store.close()
    done = served.kubectl(KUBECTLS[-1], "get", "namespaces", "-o", "json")
    assert done.returncode == 0, done.stderr
    names = {n["metadata"]["name"] for n in json.loads(done.stdout)["items"]}
    assert wanted - {""} <= names and "openshift-dns" in names


def test_requests_without_the_token_are_unauthorized(served: Served) -> None:
    kubectl = KUBECTLS[0]
    wrong = served.kubectl(kubectl, "--token", "not-the-token", "get", "nodes")
    assert wrong.returncode == 1 and "must be logged in to the server" in wrong.stderr
    anonymous = httpx.get(served.server + "/api/v1/nodes", verify=served.trust())
    assert anonymous.status_code == 401
    assert anonymous.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }
    config = yaml.safe_load(served.kubeconfig.read_text())
    assert oct(served.kubeconfig.stat().st_mode & 0o777) == "0o600"
    assert config["clusters"][0]["cluster"]["server"] == served.server


def test_bad_requests_get_status_errors_and_the_server_keeps_serving(served: Served) -> None:
    with served.http() as http:
        cases = [
            (http.post("/api/v1/namespaces/shop/pods", content=b"{not json"), 400, "BadRequest"),
            (http.get("/apis/example.com/v1/widgets"), 404, "NotFound"),
            (http.get("/api/v1/frobs"), 404, "NotFound"),
            (
                http.patch(
                    "/api/v1/nodes/worker-1",
                    content=b'[{"op": "remove", "path": "/nope"}]',
                    headers={"Content-Type": "application/json-patch+json"},
                ),
                422,
                "Invalid",
            ),
            (
                http.patch(
                    "/api/v1/nodes/worker-1", content=b"{}", headers={"Content-Type": "text/plain"}
                ),
                415,
                "UnsupportedMediaType",
            ),
            (
                http.get("/api/v1/nodes", params={"watch": "1", "resourceVersion": "1"}),
                410,
                "Expired",
            ),
            (http.get("/api/v1/pods", params={"labelSelector": "a in (b"}), 400, "BadRequest"),
            (
                http.get("/api/v1/pods", params={"watch": "1", "fieldSelector": "a in (b"}),
                400,
                "BadRequest",
            ),
            (
                http.get("/api/v1/nodes", params={"watch": "1", "resourceVersion": "99999999"}),
                410,
                "Expired",
            ),
            (
                http.post("/api/v1/namespaces/shop/pods", content=b"x" * (4 * 1024 * 1024)),
                413,
                "RequestEntityTooLarge",
            ),
            (
                http.post("/api/v1/namespaces/data/pods", json={"metadata": {"name": "db-00001"}}),
                409,
                "AlreadyExists",
            ),
        ]
        for response, code, reason in cases:
            assert response.status_code == code, (response.request.url, response.text)
            doc = response.json()
            assert (doc["kind"], doc["status"], doc["reason"], doc["code"]) == (
                "Status",
                "Failure",
                reason,
                code,
            )
        assert http.get("/api/v1/nodes").status_code == 200
        discovery = http.get("/apis/machineconfiguration.openshift.io/v1").json()
        assert {
            "name": "machineconfigpools",
            "singularName": "machineconfigpool",
            "namespaced": False,
            "kind": "MachineConfigPool",
            "verbs": ["get", "list", "watch", "create", "delete", "patch", "update"],
            "shortNames": ["mcp"],
        } in discovery["resources"]


def test_a_watch_resumes_from_a_resource_version(served: Served) -> None:
    with served.http() as http:
        listed = http.get(
            "/api/v1/nodes", params={"labelSelector": "node-role.kubernetes.io/worker"}
        )
        assert [n["metadata"]["name"] for n in listed.json()["items"]] == [
            "worker-0",
            "worker-1",
            "worker-2",
        ]
        version = listed.json()["metadata"]["resourceVersion"]
        patched = http.patch(
            "/api/v1/nodes/worker-2",
            json={"metadata": {"labels": {"team": "a"}}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert patched.status_code == 200
        with http.stream(
            "GET",
            "/api/v1/nodes",
            params={"watch": "1", "resourceVersion": version, "timeoutSeconds": "2"},
        ) as stream:
            events = [json.loads(line) for line in stream.iter_lines() if line]
        # Other changes may come first (the cluster keeps running): find the patch's.
        labelled = [
            e
            for e in events
            if e["object"]["metadata"]["name"] == "worker-2"
            and (e["object"]["metadata"].get("labels") or {}).get("team") == "a"
        ]
        assert labelled and labelled[0]["type"] == "MODIFIED"
        versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
        assert versions == sorted(versions) and versions[0] > int(version)
        selected = http.get("/api/v1/nodes", params={"labelSelector": "team=a"}).json()["items"]
        assert [n["metadata"]["name"] for n in selected] == ["worker-2"]
        by_field = http.get("/api/v1/pods", params={"fieldSelector": "metadata.namespace=shop"})
        assert {p["metadata"]["namespace"] for p in by_field.json()["items"]} == {"shop"}


@needs_kubectl
def test_drain_evicts_through_the_api_and_stops_on_a_budget(served: Served) -> None:
    kubectl = KUBECTLS[-1]
    with served.http() as http:
        on_node = http.get(
            "/api/v1/pods", params={"fieldSelector": "spec.nodeName=worker-0"}
        ).json()
    owners = {p["metadata"]["name"]: p["metadata"]["ownerReferences"][0] for p in on_node["items"]}
    names = {name for name, ref in owners.items() if ref["kind"] != "DaemonSet"}
    assert names == {"web-00000", "db-00000"}
    # The platform's DaemonSets run a pod on every node, each owned through a uid.
    daemons = {name for name, ref in owners.items() if ref["kind"] == "DaemonSet"}
    assert len(daemons) == 5 and all(ref["uid"] for ref in owners.values())
    drained = served.kubectl(
        kubectl,
        "drain",
        "worker-0",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout=15s",
        timeout=60,
    )
    assert drained.returncode != 0
    assert "disruption budget" in drained.stdout + drained.stderr
    # kubectl found each DaemonSet by its name (it refuses a pod whose owner is missing).
    warned = drained.stderr.split("ignoring DaemonSet-managed Pods: ")[1].splitlines()[0]
    assert {key.split("/")[1] for key in warned.split(", ")} == daemons
    nodes = served.kubectl(kubectl, "get", "node", "worker-0")
    assert "SchedulingDisabled" in nodes.stdout
    pods = served.kubectl(
        kubectl, "get", "pods", "-A", "--field-selector", "spec.nodeName=worker-0"
    )
    left = {line.split()[1] for line in pods.stdout.splitlines()[1:]}
    # db-00000 was evicted (its budget allowed one), web held, the DaemonSets' pods stay.
    assert left == {"web-00000", *daemons}
    assert served.kubectl(kubectl, "uncordon", "worker-0").returncode == 0


@needs_kubectl
def test_kubectl_patch_starts_an_upgrade_the_controllers_carry_out(tmp_path: Path) -> None:
    kubectl = KUBECTLS[0]
    for served in serve(tmp_path, "400"):
        image = model_image(Spec(), "4.14.27", served.root)
        watch = subprocess.Popen(
            [str(kubectl), "--kubeconfig", str(served.kubeconfig), "get", "nodes", "-w"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        patch = {"spec": {"desiredUpdate": {"image": image, "version": "4.14.27", "force": True}}}
        done = served.kubectl(
            kubectl,
            "patch",
            "clusterversion",
            "version",
            "--type",
            "merge",
            "-p",
            json.dumps(patch),
        )
        assert done.returncode == 0, done.stderr
        deadline = time.monotonic() + 120
        history: list[Any] = []
        while time.monotonic() < deadline:
            got = served.kubectl(kubectl, "get", "clusterversion", "version", "-o", "json")
            history = json.loads(got.stdout)["status"]["history"]
            if history[0]["version"] == "4.14.27" and history[0]["state"] == "Completed":
                break
            time.sleep(1)
        assert history[0]["version"] == "4.14.27" and history[0]["state"] == "Completed", history[0]
        # The API server answers as the control plane it now runs (4.14 ships 1.27).
        version = served.kubectl(kubectl, "version", "-o", "json")
        assert json.loads(version.stdout)["serverVersion"]["gitVersion"] == "v1.27.0"
        watch.terminate()
        seen, _ = watch.communicate(timeout=30)
        # The watch saw the rollout: nodes cordoned and rebooting, one after another.
        assert "SchedulingDisabled" in seen and "NotReady" in seen
    assert "v1.27.0" in seen  # kubelets report the new release's Kubernetes as nodes finish


def _kupgrade(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "kupgrade", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _plain(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without what only the API server adds (uid, resourceVersion)."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("uid", "resourceVersion")}
    return {**obj, "metadata": meta}


def test_commands_through_a_kubeconfig_see_what_the_cluster_has(served: Served) -> None:
    kubeconfig = str(served.kubeconfig)
    for kind in ("clusterversion", "mcp", "co"):
        live = json.loads(
            _kupgrade(served.home, "get", kind, "--kubeconfig", kubeconfig, "-o", "json").stdout
        )
        local = json.loads(
            _kupgrade(served.home, "get", kind, "--cluster", "demo", "-o", "json").stdout
        )
        assert [_plain(o) for o in live["items"]] == [_plain(o) for o in local["items"]], kind
    status = _kupgrade(served.home, "upgrade", "--kubeconfig", kubeconfig)
    assert status.returncode == 0, status.stderr
    assert "Cluster version is 4.13.40" in status.stdout
    checked = _kupgrade(served.home, "skew", "check", "--kubeconfig", kubeconfig, "-o", "json")
    found = json.loads(checked.stdout)
    assert found["policy"] == "k8s-n2"  # the cluster runs Kubernetes 1.26 (OpenShift 4.13)
    flagged = {v["objects"][0] for v in found["violations"] if v["id"] == "H5"}
    kubectls = json.loads(
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import json; from kupgrade.cluster.live import "
                "local_kubectls; print(json.dumps(local_kubectls()))",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    too_new = {f"kubectl/{path}" for path, version in kubectls if int(version.split(".")[1]) > 27}
    assert flagged == too_new
    assert (checked.returncode == 1) == bool(too_new)
    planned = _kupgrade(
        served.home,
        "plan",
        "--kubeconfig",
        kubeconfig,
        "--to",
        "1.27.16",
        "--available",
        "1.26.15,1.27.16",
        "-o",
        "json",
    )
    steps = json.loads(planned.stdout)["steps"]
    moves = [(s["object"], s["to"]) for s in steps]
    assert ("control-plane", "1.27.16") in moves  # and the kubelets it read follow
    assert {o for o, _ in moves} >= {"control-plane", "nodepool/worker-0"}
    # A request through the kubeconfig lands in the cluster's spec.desiredUpdate.
    image = model_image(Spec(), "4.14.27", served.root)
    asked = _kupgrade(
        served.home,
        "upgrade",
        "--kubeconfig",
        kubeconfig,
        "--to-image",
        image,
        "--allow-explicit-upgrade",
        "-o",
        "json",
    )
    assert asked.returncode == 0, asked.stderr
    with served.http() as http:
        spec = http.get("/apis/config.openshift.io/v1/clusterversions/version").json()["spec"]
    assert spec["desiredUpdate"]["image"] == image
    # `--clear` through the API is oc's merge patch with a null: the field is gone. The
    # served cluster's controllers may have taken the request already (status.desired is
    # then the target, and oc says the field was cleared with the update going on).
    cleared = _kupgrade(served.home, "upgrade", "--kubeconfig", kubeconfig, "--clear")
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout in (
        f"Cancelled requested upgrade to {image}\n",
        "Cleared the update field, still at 4.14.27\n",
    )
    with served.http() as http:
        spec = http.get("/apis/config.openshift.io/v1/clusterversions/version").json()["spec"]
    assert "desiredUpdate" not in spec


def test_a_wrong_kubeconfig_is_one_line_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("apiVersion: v1\nkind: Config\nclusters: []\n")
    done = _kupgrade(tmp_path, "get", "nodes", "--kubeconfig", str(bad))
    assert done.returncode == 1 and done.stderr.startswith("error: ")
    assert "kubeconfig" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    refused = _kupgrade(tmp_path, "skew", "check")
    assert refused.returncode == 1 and "--kubeconfig" in refused.stderr


@needs_kubectl
def test_controller_run_serves_the_api_while_it_rehearses(tmp_path: Path) -> None:
    home = tmp_path / "home"
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE.replace("minAvailable: 3", "minAvailable: 2"))  # pools can finish
    assert _kupgrade(home, "cluster", "create", "demo", "--profile", str(profile)).returncode == 0
    image = model_image(Spec(), "4.14.27", home / "clusters" / "demo")
    asked = _kupgrade(
        home, "upgrade", "--cluster", "demo", "--to-image", image, "--allow-explicit-upgrade"
    )
    assert asked.returncode == 0, asked.stderr
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "controller",
            "run",
            "--cluster",
            "demo",
            "--speed",
            "300",
            "--api",
            "-o",
            "json",
        ],
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    kubeconfig = home / "clusters" / "demo" / "kubeconfig"
    deadline = time.monotonic() + 60
    progressing = ""
    while time.monotonic() < deadline and "Working towards" not in progressing:
        if kubeconfig.exists():
            got = subprocess.run(
                [str(KUBECTLS[-1]), "--kubeconfig", str(kubeconfig), "get", "clusterversion"],
                capture_output=True,
                text=True,
                check=False,
            )
            progressing = got.stdout
        time.sleep(0.5)
    assert "Working towards 4.14.27" in progressing
    out, err = run.communicate(timeout=180)
    assert run.returncode == 0, err
    assert json.loads(out)["outcome"] == "completed"
    assert "export KUBECONFIG=" in err


def test_updates_through_a_kubeconfig_read_the_clusterversion(tmp_path: Path) -> None:
    """`updates --kubeconfig` asks the update service what the same flags read off the
    ClusterVersion would ask, and answers the same."""
    sample = tmp_path / "sample"
    write_sample(sample)
    with running_server(
        sample / "releases", sample / "graph-data", tmp_path / "serve.log"
    ) as server:
        upstream = f"{server.base}/api/upgrades_info/graph"
        home = tmp_path / "home"
        created = _kupgrade(
            home,
            "cluster",
            "create",
            "c",
            "--upstream",
            upstream,
            "--channel",
            "stable-4.14",
            "--seed",
            "9",
        )
        assert created.returncode == 0, created.stderr
        for served in serve_existing(home, "c"):
            metrics = str(sample / "metrics" / "cluster.om")
            live = _kupgrade(
                home,
                "updates",
                "--kubeconfig",
                str(served.kubeconfig),
                "--metrics",
                metrics,
                "-o",
                "json",
            )
            cluster_id = str(uuid.UUID(int=9))
            flags = _kupgrade(
                home,
                "updates",
                "--upstream",
                upstream,
                "--channel",
                "stable-4.14",
                "--version",
                "4.13.40",
                "--id",
                cluster_id,
                "--metrics",
                metrics,
                "-o",
                "json",
            )
            assert live.returncode == flags.returncode == 0, live.stderr
            assert (
                json.loads(live.stdout)["availableUpdates"]
                == json.loads(flags.stdout)["availableUpdates"]
            )
            assert json.loads(live.stdout)["availableUpdates"]


@needs_kubectl
def test_a_distributed_cloud_cluster_serves_its_own_kinds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    made = _kupgrade(
        home,
        "cluster",
        "create",
        "bm",
        "--platform",
        "gdc",
        "--role",
        "standalone",
        "--version",
        "1.28.500-gke.120",
        "--workers",
        "2",
    )
    assert made.returncode == 0, made.stderr
    kubectl = KUBECTLS[-1]
    for served in serve_existing(home, "bm"):
        clusters = served.kubectl(kubectl, "get", "clusters", "-A")
        assert clusters.returncode == 0, clusters.stderr
        assert _head(clusters.stdout) == [
            "NAMESPACE",
            "NAME",
            "ABM",
            "VERSION",
            "DESIRED",
            "ABM",
            "VERSION",
            "CLUSTER",
            "STATE",
            "AGE",
        ]
        assert clusters.stdout.splitlines()[1].split()[:5] == [
            "cluster-bm",
            "bm",
            "1.28.500-gke.120",
            "1.28.500-gke.120",
            "Running",
        ]
        pools = served.kubectl(kubectl, "get", "nodepools", "-n", "cluster-bm")
        assert _head(pools.stdout) == [
            "NAME",
            "READY",
            "RECONCILING",
            "STALLED",
            "UNDERMAINTENANCE",
            "UNKNOWN",
            "AGE",
        ]
        assert [line.split()[:2] for line in pools.stdout.splitlines()[1:]] == [
            ["bm", "3"],
            ["worker", "2"],
        ]
        nodes = served.kubectl(kubectl, "get", "nodes")
        assert {line.split()[-1] for line in nodes.stdout.splitlines()[1:]} == {"v1.28.0"}
        version = json.loads(served.kubectl(kubectl, "version", "-o", "json").stdout)
        assert version["serverVersion"]["gitVersion"] == "v1.28.0"
        assert served.kubectl(kubectl, "get", "clusterversion").returncode == 0  # an empty list
