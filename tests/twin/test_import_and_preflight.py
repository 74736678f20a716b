"""`cluster import` and `upgrade --preflight` as users run them (SPEC X7, X8): real
captures no one here wrote (tests/data/captures, with their licences), bad dumps, and
clusters that have, or have not, each class of blocker."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import run_cli
from tests.support.conformance import SHARED
from tests.support.graphserver import next_minor, serve_graph
from tests.support.service import serving
from tests.twin.conftest import AWS_VERSION

CAPTURES = Path(__file__).parents[1] / "data" / "captures"
AWS = CAPTURES / "must-gather-aws"


def test_a_real_must_gather_imports_calibrates_and_preflights(
    tmp_path: Path, upstream: str
) -> None:
    made = run_cli(
        ["cluster", "import", "aws", "--from", str(AWS), "--upstream", upstream, "-o", "json"],
        tmp_path,
    )
    assert made.exit_code == 0, made.stderr
    twin = json.loads(made.stdout)
    assert twin["platform"] == "OpenShift" and twin["version"] == AWS_VERSION
    assert twin["pools"] == {"master": 3, "worker": 3}
    assert twin["notModelled"]["OperatorGroup"] == 2  # counted, not dropped
    assert any("more than once" in n for n in twin["notes"])  # pods.yaml and per-pod files
    figures = {f["name"]: f for f in twin["calibration"]}
    assert figures["cluster update"]["measured"]
    shown = run_cli(["cluster", "calibration", "aws"], tmp_path)
    assert shown.exit_code == 0 and "cluster update" in shown.stdout
    pdbs = run_cli(["get", "pdb", "-A", "--cluster", "aws", "-o", "json"], tmp_path)
    assert "etcd-quorum-guard" in pdbs.stdout  # the budgets are the cluster's own
    found = _preflight_to(tmp_path, "aws", "4.9.0", "--window", "1h", "-o", "json")
    assert found.exit_code == 1, found.stderr
    report = json.loads(found.stdout)
    checks = {b["check"] for b in report["blockers"]}
    assert {"removed-api", "window", "downtime"} <= checks
    removed = next(b for b in report["blockers"] if b["check"] == "removed-api")
    assert (
        "extensions/v1beta1 Ingress" in removed["message"]
        and "networking.k8s.io/v1" in removed["fix"]
    )
    assert report["forecast"]["completed"] == report["forecast"]["runs"] == 3
    assert report["forecast"]["fits"] is False
    accepted = run_cli(
        [
            "upgrade",
            "--cluster",
            "aws",
            "--to",
            "4.9.0",
            "--preflight",
            "--accept",
            "removed-api,downtime",
        ],
        tmp_path,
    )
    assert accepted.exit_code == 0, accepted.stdout
    assert "accepted [removed-api]" in accepted.stdout
    # The twin itself was never upgraded: only its copies were.
    version = run_cli(["get", "clusterversion", "--cluster", "aws", "-o", "json"], tmp_path)
    assert json.loads(version.stdout)["items"][0]["status"]["desired"]["version"] == AWS_VERSION


def _preflight_to(home: Path, name: str, target: str, *extra: str) -> Any:
    """The target minor's channel set (a capture's names its own minor), then the
    preflight to `target`."""
    channel = "stable-" + target.rsplit(".", 1)[0]
    run_cli(["upgrade", "channel", channel, "--cluster", name, "--allow-explicit-channel"], home)
    return run_cli(["upgrade", "--cluster", name, "--to", target, "--preflight", *extra], home)


@pytest.mark.parametrize("capture", ["insights-operator", "must-gather-metal"])
def test_other_real_captures_import(tmp_path: Path, capture: str) -> None:
    made = run_cli(
        ["cluster", "import", "t", "--from", str(CAPTURES / capture), "-o", "json"], tmp_path
    )
    assert made.exit_code == 0, made.stderr
    twin = json.loads(made.stdout)
    assert twin["platform"] == "OpenShift" and twin["nodes"] >= 1
    if capture == "insights-operator":  # its budget is written in policy/v1beta1
        (use,) = twin["apiUses"]
        assert (use["group"], use["version"], use["kind"]) == (
            "policy",
            "v1beta1",
            "PodDisruptionBudget",
        )


def _profile(tmp_path: Path, workloads: list[dict[str, object]], paused: bool = False) -> Path:
    doc = {
        "spec": {
            "version": "4.13.40",
            "channel": "stable-4.14",
            "platformPods": False,
            "pools": [
                {"name": "master", "nodes": 1, "maxUnavailable": 1},
                {"name": "worker", "nodes": 2, "maxUnavailable": 1, "paused": paused},
            ],
            "workloads": workloads,
        }
    }
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _preflight(
    tmp_path: Path, upstream: str, profile: Path, *extra: str
) -> tuple[int, dict[str, object]]:
    made = run_cli(
        ["cluster", "create", "c", "--profile", str(profile), "--upstream", upstream], tmp_path
    )
    assert made.exit_code == 0, made.stderr
    found = run_cli(
        ["upgrade", "--cluster", "c", "--to", "4.14.27", "--preflight", "-o", "json", *extra],
        tmp_path,
    )
    return found.exit_code, json.loads(found.stdout)


def test_a_cluster_without_blockers_passes(tmp_path: Path, upstream: str) -> None:
    web = {"name": "web", "namespace": "shop", "replicas": 2, "pdb": {"maxUnavailable": 1}}
    code, report = _preflight(tmp_path, upstream, _profile(tmp_path, [web]), "--window", "12h")
    assert code == 0, report
    assert report["blockers"] == [] and report["forecast"]["fits"] is True


def test_a_budget_that_allows_nothing_is_named(tmp_path: Path, upstream: str) -> None:
    db = {"name": "db", "namespace": "data", "replicas": 2, "pdb": {"minAvailable": 2}}
    code, report = _preflight(tmp_path, upstream, _profile(tmp_path, [db]), "--accept", "stalled")
    assert code == 1
    budget = next(b for b in report["blockers"] if b["check"] == "budget")  # type: ignore[union-attr]
    assert "PodDisruptionBudget data/db" in budget["objects"][0] and "forever" in budget["message"]
    assert any(o.startswith("Node worker-") for o in budget["objects"])


def test_one_replica_without_budget_and_a_paused_pool_are_named(
    tmp_path: Path, upstream: str
) -> None:
    solo = {"name": "solo", "namespace": "shop", "replicas": 1}
    code, report = _preflight(tmp_path, upstream, _profile(tmp_path, [solo], paused=True))
    assert code == 1
    checks = {b["check"] for b in report["blockers"]}  # type: ignore[union-attr]
    assert {"downtime", "paused-pool"} <= checks


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


NODE = (
    b"apiVersion: v1\nkind: Node\n"
    b"metadata: {name: n1, creationTimestamp: '2024-01-01T00:00:00Z',"
    b" labels: {node-role.kubernetes.io/control-plane: ''}}\n"
    b"status: {nodeInfo: {kubeletVersion: v1.30.2}}\n"
)


def test_bad_files_in_a_dump_are_named_and_the_rest_imported(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    _write(dump / "nodes.yaml", NODE)
    _write(dump / "broken.yaml", b"kind: Pod\nmetadata: {name: [unclosed\n")
    _write(dump / "latin1.yaml", "kind: Pod\nmetadata: {name: caf\xe9}\n".encode("latin-1"))
    _write(dump / "strings.json", b'["not", "objects"]')
    _write(dump / "logs" / "current.log", b"not an object")
    made = run_cli(["cluster", "import", "k", "--from", str(dump), "-o", "json"], tmp_path)
    assert made.exit_code == 0, made.stderr
    twin = json.loads(made.stdout)
    assert twin["platform"] == "kubernetes" and twin["version"] == "v1.30.2"
    notes = "\n".join(twin["notes"])
    for name in ("broken.yaml", "latin1.yaml", "strings.json"):
        assert name in notes


@pytest.mark.parametrize(
    "content",
    [b"kind: Pod\nmetadata: {name: [unclosed\n", b"\xff\xfe\x00garbage", b"[1, 2, 3]", b""],
)
def test_a_dump_with_nothing_usable_is_refused_in_one_line(tmp_path: Path, content: bytes) -> None:
    bad = _write(tmp_path / "bad.yaml", content)
    made = run_cli(["cluster", "import", "k", "--from", str(bad)], tmp_path)
    assert made.exit_code == 1
    assert made.stderr.count("\n") == 1 and "bad.yaml" in made.stderr
    assert not (tmp_path / "clusters" / "k").exists()


def test_missing_and_truncated_archives_are_refused(tmp_path: Path) -> None:
    missing = run_cli(["cluster", "import", "k", "--from", str(tmp_path / "nope")], tmp_path)
    assert missing.exit_code == 1 and "nope" in missing.stderr and missing.stderr.count("\n") == 1
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        info = tarfile.TarInfo("mg/nodes.yaml")
        info.size = len(NODE)
        tar.addfile(info, io.BytesIO(NODE))
    archive = _write(tmp_path / "mg.tar.gz", gzip.compress(raw.getvalue())[:40])
    cut = run_cli(["cluster", "import", "k", "--from", str(archive)], tmp_path)
    assert cut.exit_code == 1 and "mg.tar.gz" in cut.stderr and cut.stderr.count("\n") == 1
    whole = _write(tmp_path / "ok.tar.gz", gzip.compress(raw.getvalue()))
    made = run_cli(["cluster", "import", "k", "--from", str(whole), "-o", "json"], tmp_path)
    assert made.exit_code == 0, made.stderr
    assert json.loads(made.stdout)["nodes"] == 1


def test_import_takes_a_dump_or_a_kubeconfig(tmp_path: Path) -> None:
    neither = run_cli(["cluster", "import", "k"], tmp_path)
    assert neither.exit_code == 1 and "--from" in neither.stderr


PROPERTIES = '{"properties":[{"type":"olm.maxOpenShiftVersion","value":"4.13"}]}'
BLOCKING_OBJECTS = {
    "operator-cap": {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": "legacy.v1.0.0",
            "namespace": "operators",
            "annotations": {"operatorframework.io/properties": PROPERTIES},
        },
        "spec": {},
        "status": {"phase": "Succeeded"},
    },
    "admin-ack": {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "admin-gates", "namespace": "openshift-config-managed"},
        "data": {
            "ack-4.13-kube-1.27-api-removals-in-4.14": "Kubernetes 1.27 and therefore OpenShift "
            "4.14 remove several APIs which require admin consideration."
        },
    },
    "removed-api": {
        "apiVersion": "apiserver.openshift.io/v1",
        "kind": "APIRequestCount",
        "metadata": {"name": "csistoragecapacities.v1beta1.storage.k8s.io"},
        "status": {
            "removedInRelease": "1.27",
            "requestCount": 7,
            "last24h": [
                {
                    "requestCount": 7,
                    "byNode": [
                        {
                            "nodeName": "master-0",
                            "requestCount": 7,
                            "byUser": [
                                {
                                    "username": "system:serviceaccount:storage:provisioner",
                                    "userAgent": "provisioner/v0.3",
                                    "requestCount": 7,
                                    "byVerb": [{"verb": "list", "requestCount": 7}],
                                }
                            ],
                        }
                    ],
                }
            ],
        },
    },
    "degraded-operator": {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterOperator",
        "metadata": {"name": "dns"},
        "status": {
            "conditions": [
                {"type": "Available", "status": "True"},
                {"type": "Progressing", "status": "False"},
                {"type": "Degraded", "status": "True", "message": "DNS default is degraded"},
            ]
        },
    },
}


@pytest.mark.parametrize("check", sorted(BLOCKING_OBJECTS))
def test_each_class_of_blocker_is_found_and_named(
    tmp_path: Path, upstream: str, check: str
) -> None:
    path = _profile(tmp_path, [])
    doc = yaml.safe_load(path.read_text())
    doc["spec"]["objects"] = [BLOCKING_OBJECTS[check]]
    path.write_text(yaml.safe_dump(doc))
    code, report = _preflight(tmp_path, upstream, path, "--accept", "stalled")
    assert code == 1, report
    found = [b for b in report["blockers"] if b["check"] == check]  # type: ignore[union-attr]
    assert found, report["blockers"]
    named = BLOCKING_OBJECTS[check]["metadata"]["name"]  # type: ignore[index]
    assert (
        any(named in " ".join([b["message"], *b["objects"]]) for b in found)
        or check == "removed-api"
    )
    if check == "removed-api":
        assert "storage.k8s.io/v1beta1 CSIStorageCapacity" in found[0]["message"]
        assert "provisioner" in found[0]["message"] and "storage.k8s.io/v1" in found[0]["fix"]


def test_a_dump_of_kinds_a_twin_does_not_read_is_refused(tmp_path: Path) -> None:
    secrets = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"s{i}", "namespace": "a"}}
            for i in range(3)
        ],
    }
    path = _write(tmp_path / "secrets.json", json.dumps(secrets).encode())
    made = run_cli(["cluster", "import", "k", "--from", str(path)], tmp_path)
    assert made.exit_code == 1 and made.stderr.count("\n") == 1
    assert "Secret" in made.stderr and "secrets.json" in made.stderr


def test_a_large_list_and_duplicates_import(tmp_path: Path) -> None:
    """A 50 MB List of pods, and the same nodes twice with different resourceVersions: the
    newer copy is kept and the duplicates are counted in one line."""
    node = yaml.safe_load(NODE)
    older = {**node, "metadata": {**node["metadata"], "resourceVersion": "5"}}
    newer = {**node, "metadata": {**node["metadata"], "resourceVersion": "9", "labels": {}}}
    _write(tmp_path / "d" / "a.json", json.dumps({"kind": "List", "items": [older]}).encode())
    _write(tmp_path / "d" / "b.json", json.dumps({"kind": "NodeList", "items": [newer]}).encode())
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "namespace": "big",
            "labels": {"app": "x"},
            "annotations": {"pad": "p" * 1000},
        },
        "spec": {"nodeName": "n1"},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    pods = [{**pod, "metadata": {**pod["metadata"], "name": f"x-{i}"}} for i in range(42_000)]
    big = json.dumps({"apiVersion": "v1", "kind": "PodList", "items": pods}).encode()
    assert len(big) > 50_000_000
    _write(tmp_path / "d" / "pods.json", big)
    made = run_cli(
        ["cluster", "import", "k", "--from", str(tmp_path / "d"), "-o", "json"], tmp_path
    )
    assert made.exit_code == 0, made.stderr
    twin = json.loads(made.stdout)
    assert twin["pods"] == 42_000
    assert any(n.startswith("1 objects appear more than once") for n in twin["notes"])
    # The newer copy won: without its control-plane label the node is a worker, and the
    # missing control plane is said and filled with a default node.
    assert twin["pools"] == {"control-plane": 1, "worker": 1}
    assert any("no control-plane node" in n for n in twin["notes"])


def test_the_insights_archive_preflights_with_its_own_blockers(tmp_path: Path) -> None:
    """A real archive no one here wrote: its budget in policy/v1beta1 (removed in 1.25), its
    degraded ingress operator, and the rehearsal that stalls on it, each named."""
    with serve_graph(["4.7.16", "4.12.0"]) as url:
        archive = CAPTURES / "insights-operator"
        made = run_cli(
            ["cluster", "import", "ins", "--from", str(archive), "--upstream", url], tmp_path
        )
        assert made.exit_code == 0, made.stderr
        found = _preflight_to(tmp_path, "ins", "4.12.0", "--runs", "1", "-o", "json")
    assert found.exit_code == 1, found.stderr
    blockers = {b["check"]: b for b in json.loads(found.stdout)["blockers"]}
    assert (
        "policy/v1beta1 PodDisruptionBudget is removed in v1.25"
        in blockers["removed-api"]["message"]
    )
    assert blockers["degraded-operator"]["objects"] == ["ClusterOperator ingress"]
    assert "did not finish" in blockers["stalled"]["message"]


OC_EXAMPLES = SHARED / "peer" / "oc" / "status-examples"


@pytest.mark.skipif(not OC_EXAMPLES.is_dir(), reason=f"{OC_EXAMPLES} not found")
def test_every_oc_capture_imports_calibrates_and_preflights(tmp_path: Path) -> None:
    """oc's own captured clusters (../shared/peer), most of them mid-update: each one
    imports, calibrates and preflights to its next minor without an internal error."""
    names = sorted(p.name.removesuffix("-cv.yaml") for p in OC_EXAMPLES.glob("*-cv.yaml"))
    with serve_graph() as url:
        for name in names:
            files = [
                a for p in sorted(OC_EXAMPLES.glob(f"{name}-*.yaml")) for a in ("--from", str(p))
            ]
            made = run_cli(
                ["cluster", "import", name, *files, "--upstream", url, "-o", "json"], tmp_path
            )
            assert made.exit_code == 0, (name, made.stderr)
            assert run_cli(["cluster", "calibration", name], tmp_path).exit_code == 0
            target = next_minor(json.loads(made.stdout)["version"])
            found = _preflight_to(tmp_path, name, target, "--runs", "1")
            assert found.exit_code in (0, 1), (name, found.stderr)
            assert found.stdout.startswith("Preflight"), (name, found.stderr)


def test_skew_the_target_breaks_is_a_blocker(tmp_path: Path) -> None:
    """A Kubernetes cluster asked to skip a minor: the planner's rule, named (SPEC H6)."""
    create = ["--platform", "kubernetes", "--version", "v1.30.4", "--control-planes", "1"]
    assert run_cli(["cluster", "create", "k", *create, "--workers", "2"], tmp_path).exit_code == 0
    skipped = ["--to", "v1.32.0", "--available", "v1.32.0"]
    found = run_cli(["upgrade", "--cluster", "k", *skipped, "--preflight", "-o", "json"], tmp_path)
    assert found.exit_code == 1, found.stderr
    (blocker,) = json.loads(found.stdout)["blockers"]
    assert blocker["check"] == "skew" and "H6.no-minor-skip" in blocker["message"]
    assert "1.31" in blocker["fix"]
    stepwise = ["--to", "v1.32.0", "--available", "v1.31.2,v1.32.0"]
    passed = run_cli(
        ["upgrade", "--cluster", "k", *stepwise, "--preflight", "-o", "json"], tmp_path
    )
    assert passed.exit_code == 0, passed.stdout
    assert json.loads(passed.stdout)["forecast"]["completed"] == 3


def test_a_known_risk_is_a_blocker_and_still_rehearsed(tmp_path: Path) -> None:
    """A conditional update whose risk applies (SPEC A4): named with its URL, and the
    upgrade rehearsed all the same on the copies, so the forecast still comes."""
    nodes = [
        {"version": v, "payload": f"quay.io/x@sha256:{c * 64}", "metadata": {}}
        for v, c in (("4.13.40", "a"), ("4.14.27", "b"))
    ]
    risk = {
        "url": "https://issues.example/OCPBUGS-1",
        "name": "DrainHangs",
        "message": "Drains may hang on clusters like this one.",
        "matchingRules": [{"type": "Always"}],
    }
    conditional = [{"edges": [{"from": "4.13.40", "to": "4.14.27"}], "risks": [risk]}]
    graph = {"nodes": nodes, "edges": [], "conditionalEdges": conditional}
    with serving(json.dumps(graph).encode()) as base:
        path = _profile(tmp_path, [])
        code, report = _preflight(tmp_path, base + "/graph", path)
    assert code == 1
    (blocker,) = report["blockers"]  # type: ignore[misc]
    assert blocker["check"] == "risk" and "OCPBUGS-1" in blocker["message"]
    assert report["forecast"]["completed"] == 3  # type: ignore[index]


def test_an_api_the_apiservers_saw_requested_is_named(tmp_path: Path, upstream: str) -> None:
    """The apiserver's own gauge in the cluster's metrics snapshot (SPEC X8)."""
    snapshot = tmp_path / "cluster.om"
    snapshot.write_text(
        "# TYPE apiserver_requested_deprecated_apis gauge\n"
        'apiserver_requested_deprecated_apis{group="storage.k8s.io",version="v1beta1",'
        'resource="csistoragecapacities",removed_release="1.27"} 1 1714816800\n'
        "# EOF\n"
    )
    path = _profile(tmp_path, [])
    doc = yaml.safe_load(path.read_text())
    doc["spec"]["metrics"] = str(snapshot)
    path.write_text(yaml.safe_dump(doc))
    code, report = _preflight(tmp_path, upstream, path)
    assert code == 1
    (blocker,) = report["blockers"]  # type: ignore[misc]
    assert blocker["check"] == "removed-api"
    assert "storage.k8s.io/v1beta1 CSIStorageCapacity is removed in v1.27" in blocker["message"]
