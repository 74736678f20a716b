"""A user's cluster imported as a twin, then preflighted (SPEC X7, X8): a must-gather of
5,000 nodes and 100,000 pods (goal: import and preflight under 60 s and 2 GB together).

The dump is written in a must-gather's layout (cluster-scoped-resources/, namespaces/NS/
apps|core|policy/*.yaml), each file a List as `oc adm inspect` writes it. Its objects
carry what real ones do that the twin reads (owners, labels, placement, conditions,
volumes, grace periods) and the bulk it does not (container specs, managedFields-free
status), about 1.5 KB a pod. `--format json` writes the Lists as JSON (what `kubectl get
-o json` gives), `yaml` as YAML. Each step runs in a fresh process, so that its peak
memory (VmHWM, kupgrade/resident.py) is its own.
Run alone: `python -m bench.twin_import [--nodes 5000 --pods 100000 --format json]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.support.graphserver import serve_graph

REPO = Path(__file__).resolve().parents[1]
START = "2024-05-04T10:00:00Z"
CREATED = "2024-05-01T10:00:00Z"
PER_DEPLOYMENT = 10
NAMESPACES = 200


def _node(name: str, role: str, zone: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "creationTimestamp": CREATED,
            "labels": {
                f"node-role.kubernetes.io/{role}": "",
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": zone,
            },
        },
        "spec": {},
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": CREATED}],
            "nodeInfo": {"kubeletVersion": "v1.27.6", "architecture": "amd64"},
        },
    }


def _pod(namespace: str, deploy: str, i: int, node: str) -> dict[str, Any]:
    rs = f"{deploy}-7d9f8b6c4"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{rs}-{i:05d}",
            "namespace": namespace,
            "creationTimestamp": CREATED,
            "labels": {"app": deploy, "pod-template-hash": "7d9f8b6c4"},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "controller": True}
            ],
        },
        "spec": {
            "nodeName": node,
            "terminationGracePeriodSeconds": 30,
            "containers": [
                {
                    "name": "app",
                    "image": f"registry.example/{namespace}/{deploy}@sha256:{'a' * 64}",
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                }
            ],
            "volumes": [{"name": "tmp", "emptyDir": {}}],
        },
        "status": {
            "phase": "Running",
            "startTime": CREATED,
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": CREATED},
                {"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T10:00:21Z"},
            ],
        },
    }


def _owners(namespace: str, deploy: str) -> list[dict[str, Any]]:
    rs = f"{deploy}-7d9f8b6c4"
    meta = {"namespace": namespace, "creationTimestamp": CREATED}
    template = {"metadata": {"labels": {"app": deploy}}, "spec": {"containers": []}}
    return [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {**meta, "name": deploy},
            "spec": {"replicas": PER_DEPLOYMENT, "template": template},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                **meta,
                "name": rs,
                "ownerReferences": [{"kind": "Deployment", "name": deploy, "controller": True}],
            },
            "spec": {"replicas": PER_DEPLOYMENT, "template": template},
        },
    ]


def _cluster_objects(nodes: int) -> dict[str, list[dict[str, Any]]]:
    masters = [_node(f"master-{i}", "master", "abc"[i % 3]) for i in range(3)]
    workers = [_node(f"worker-{i}", "worker", "abc"[i % 3]) for i in range(nodes - 3)]
    pools = [
        {
            "apiVersion": "machineconfiguration.openshift.io/v1",
            "kind": "MachineConfigPool",
            "metadata": {"name": role},
            "spec": {
                "maxUnavailable": unavailable,
                "nodeSelector": {"matchLabels": {f"node-role.kubernetes.io/{role}": ""}},
            },
        }
        for role, unavailable in (("master", 1), ("worker", "10%"))
    ]
    done = {
        "state": "Completed",
        "version": "4.14.20",
        "startedTime": START,
        "completionTime": START,
    }
    cv = {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"channel": "stable-4.15", "clusterID": "00000000-0000-0000-0000-000000000001"},
        "status": {
            "desired": {"version": "4.14.20"},
            "history": [done],
            "conditions": [{"type": "Available", "status": "True", "lastTransitionTime": START}],
        },
    }
    return {
        "core/nodes": masters + workers,
        "machineconfiguration.openshift.io/machineconfigpools": pools,
        "config.openshift.io/clusterversions": [cv],
    }


def write_dump(root: Path, nodes: int, pods: int, fmt: str) -> int:
    """A must-gather of `nodes` nodes and `pods` pods under `root`; its size in bytes."""
    workers = [f"worker-{i}" for i in range(nodes - 3)]
    dump: Callable[[Any], str] = (
        (lambda doc: json.dumps(doc, separators=(",", ":")))
        if fmt == "json"
        else (lambda doc: yaml.dump(doc, Dumper=yaml.CSafeDumper))
    )
    size = 0

    def put(path: Path, items: list[dict[str, Any]]) -> None:
        nonlocal size
        path.parent.mkdir(parents=True, exist_ok=True)
        text = dump({"apiVersion": "v1", "kind": "List", "items": items})
        path.write_text(text)
        size += len(text)

    for where, items in _cluster_objects(nodes).items():
        put(root / "cluster-scoped-resources" / f"{where}.yaml", items)
    deployments = pods // PER_DEPLOYMENT
    for n in range(NAMESPACES):
        namespace = f"team-{n:03d}"
        mine = range(n, deployments, NAMESPACES)
        owners = [o for d in mine for o in _owners(namespace, f"app-{d:05d}")]
        listed = [
            _pod(namespace, f"app-{d:05d}", i, workers[(d * PER_DEPLOYMENT + i) % len(workers)])
            for d in mine
            for i in range(PER_DEPLOYMENT)
        ]
        budgets = [
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": f"app-{d:05d}", "namespace": namespace},
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": f"app-{d:05d}"}}},
            }
            for d in mine
        ]
        base = root / "namespaces" / namespace
        put(base / "apps" / "deployments.yaml", [o for o in owners if o["kind"] == "Deployment"])
        put(base / "apps" / "replicasets.yaml", [o for o in owners if o["kind"] == "ReplicaSet"])
        put(base / "core" / "pods.yaml", listed)
        put(base / "policy" / "poddisruptionbudgets.yaml", budgets)
    return size


def _timed_cli(args: list[str], home: Path) -> dict[str, Any]:
    """`kupgrade ARGS` in a fresh process: its wall time and peak memory (VmHWM)."""
    probe = (
        "import runpy,sys,atexit;from kupgrade.resident import peak_mb;"
        "atexit.register(lambda: sys.stderr.write(f'\\nPEAK {peak_mb()}\\n'));"
        f"sys.argv={['kupgrade', *args]!r};runpy.run_module('kupgrade', run_name='__main__')"
    )
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    peak = next(
        (float(x.split()[1]) for x in done.stderr.splitlines() if x.startswith("PEAK")), 0.0
    )
    return {"wall_s": round(wall, 2), "peak_mb": peak, "exit": done.returncode, "out": done.stdout}


def bench_twin_import(nodes: int = 5000, pods: int = 100_000, fmt: str = "json") -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="kupgrade-bench-twin-") as tmp,
        serve_graph(["4.14.20", "4.15.3"]) as url,
    ):
        root, home = Path(tmp) / "must-gather", Path(tmp) / "home"
        size = write_dump(root, nodes, pods, fmt)
        imported = _timed_cli(
            ["cluster", "import", "big", "--from", str(root), "--upstream", url, "-o", "json"], home
        )
        assert imported["exit"] == 0, imported
        checked = _timed_cli(
            ["upgrade", "--cluster", "big", "--to", "4.15.3", "--preflight", "--runs", "1"], home
        )
    return {
        "nodes": nodes,
        "pods": pods,
        "format": fmt,
        "dump_mb": round(size / 1e6, 1),
        "import_s": imported["wall_s"],
        "import_peak_mb": imported["peak_mb"],
        "preflight_s": checked["wall_s"],
        "preflight_peak_mb": checked["peak_mb"],
        "preflight_exit": checked["exit"],
        "together_s": round(imported["wall_s"] + checked["wall_s"], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--format", choices=("json", "yaml"), default="json")
    args = parser.parse_args()
    print(json.dumps(bench_twin_import(args.nodes, args.pods, args.format), indent=2))


if __name__ == "__main__":
    main()
