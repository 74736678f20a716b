"""The simulated cluster's Kubernetes API under load: a 5,000-node cluster (100,000 pods)
listed and watched over HTTPS on loopback, as kubectl and informers do.

Timed: listing every node and every pod (JSON, and the server-side Table kubectl asks
for), listing one node's pods by field selector (a drain's question), and a watch
receiving a burst of node changes. Reported: seconds, objects per second and events per
second. Run by `make bench` (bench/run.py) or alone: `python -m bench.kubeapi [--nodes N]`.
"""

from __future__ import annotations

import argparse
import json
import ssl
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.sim import profile
from kupgrade.apiserver.server import APIServer
from kupgrade.resident import peak_mb
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.profile import Profile
from kupgrade.sim.store import Store

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def _timed(client: httpx.Client, path: str, **kw: Any) -> tuple[float, int]:
    started = time.perf_counter()
    response = client.get(path, **kw)
    response.raise_for_status()
    body = response.json()
    count = len(body.get("items") or body.get("rows") or [])
    return time.perf_counter() - started, count


def bench_kubeapi(nodes: int = 5000, changes: int = 2000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kupgrade-kubeapi-bench-") as tmp:
        root = create_cluster(Path(tmp), "big", Profile(spec=profile(nodes)))
        store = Store(root / "cluster.db")
        sim = SimCluster(store)
        with APIServer(sim, root, "big") as server:
            trust = ssl.create_default_context(cafile=str(server.access.ca))
            headers = {"Authorization": f"Bearer {server.access.token}"}
            with httpx.Client(
                base_url=f"https://127.0.0.1:{server.port}",
                verify=trust,
                headers=headers,
                timeout=300,
            ) as client:
                out: dict[str, Any] = {"nodes": nodes}
                for name, path, extra in (
                    ("list nodes", "/api/v1/nodes", {}),
                    ("list pods", "/api/v1/pods", {}),
                    ("table pods", "/api/v1/pods", {"headers": {"Accept": TABLE}}),
                    (
                        "pods on a node",
                        "/api/v1/pods",
                        {"params": {"fieldSelector": "spec.nodeName=worker-7"}},
                    ),
                ):
                    seconds, count = _timed(client, path, **extra)
                    out[name] = {
                        "seconds": round(seconds, 3),
                        "objects": count,
                        "per_second": round(count / max(seconds, 1e-9)),
                    }
                out["watch"] = _watch(client, sim, store, changes)
        store.close()
    out["peak_rss_mb"] = peak_mb()  # the API server and its client: one process
    return out


def _watch(client: httpx.Client, sim: SimCluster, store: Store, changes: int) -> dict[str, Any]:
    """Events per second a watch receives while the store changes `changes` nodes."""
    version = client.get("/api/v1/nodes", params={"limit": "1"}).json()["metadata"][
        "resourceVersion"
    ]
    names = [n["metadata"]["name"] for n in store.list("Node")][:changes]

    def change() -> None:
        time.sleep(0.2)
        for i, name in enumerate(names):
            with store.lock:
                node = store.get("Node", name)
                assert node is not None
                node["metadata"].setdefault("labels", {})["bench"] = str(i)
                sim.write(node)

    writer = threading.Thread(target=change)
    started = time.perf_counter()
    writer.start()
    seen = 0
    params = {"watch": "1", "resourceVersion": version, "timeoutSeconds": "120"}
    with client.stream("GET", "/api/v1/nodes", params=params) as stream:
        for line in stream.iter_lines():
            if line and json.loads(line)["type"] == "MODIFIED":
                seen += 1
                if seen == len(names):
                    break
    seconds = time.perf_counter() - started - 0.2
    writer.join()
    return {
        "events": seen,
        "seconds": round(seconds, 3),
        "per_second": round(seen / max(seconds, 1e-9)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    args = parser.parse_args()
    print(json.dumps(bench_kubeapi(args.nodes), indent=2))


if __name__ == "__main__":
    main()
