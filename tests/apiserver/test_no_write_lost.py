"""No write is lost while the controllers run (SPEC X3, X6): a served cluster carries out
an upgrade (its controllers rewrite nodes, pools and the ClusterVersion at every step)
while 1,000 writes arrive beside them: 900 through the API from four clients at once and
100 from another process's commands through the store (`opened`, the door every
`kupgrade` command takes), plus a real `kupgrade upgrade channel`. Every one is there at
the end: the API's applied under the store's lock between steps, the commands' handed
to the one writer field by field (sim/inbox.py) instead of overwritten by its memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kupgrade.cluster.objects import copied
from kupgrade.sim.homes import opened
from kupgrade.sim.openshift.releases import model_image
from kupgrade.sim.profile import Spec
from tests.apiserver.test_kubeapi import serve

NODES = ["master-0", "master-1", "master-2", "worker-0", "worker-1", "worker-2"]
API_CLIENTS, API_WRITES, STORE_WRITES = 4, 225, 100
CHANNEL = ("--cluster", "demo", "--allow-explicit-channel")


def _api_writes(served: object, client: int, failures: list[str]) -> None:
    with served.http() as http:  # type: ignore[attr-defined]
        for i in range(API_WRITES):
            node = NODES[i % len(NODES)]
            body = {"metadata": {"labels": {f"api-{client}-{i}": "x"}}}
            for _attempt in range(5):  # RetryOnConflict's retries, for a 409
                answer = http.patch(
                    f"/api/v1/nodes/{node}",
                    content=json.dumps(body).encode(),
                    headers={"Content-Type": "application/merge-patch+json"},
                )
                if answer.status_code != 409:
                    break
            if answer.status_code != 200:
                failures.append(f"{node} {answer.status_code} {answer.text[:200]}")


def test_no_write_is_lost_while_the_controllers_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for served in serve(tmp_path, "400"):
        monkeypatch.setenv("KUPGRADE_HOME", str(served.home))
        image = model_image(Spec(), "4.14.27", served.root)
        with served.http() as http:
            started = http.patch(
                "/apis/config.openshift.io/v1/clusterversions/version",
                content=json.dumps(
                    {"spec": {"desiredUpdate": {"image": image, "version": "4.14.27"}}}
                ).encode(),
                headers={"Content-Type": "application/merge-patch+json"},
            )
            assert started.status_code == 200, started.text
        failures: list[str] = []
        clients = [
            threading.Thread(target=_api_writes, args=(served, c, failures))
            for c in range(API_CLIENTS)
        ]
        for thread in clients:
            thread.start()
        for i in range(STORE_WRITES):  # what a command does: open, change, commit
            with opened("demo") as (_, store, _spec):
                node = NODES[i % len(NODES)]
                obj = copied(store.get("Node", node) or {})
                obj["metadata"].setdefault("labels", {})[f"cmd-{i}"] = "x"
                store.put(obj)
                store.commit()
        channel = subprocess.run(
            [sys.executable, "-m", "kupgrade", "upgrade", "channel", "fast-4.14", *CHANNEL],
            capture_output=True,
            text=True,
            env={**os.environ, "KUPGRADE_HOME": str(served.home)},
            timeout=120,
            check=False,
        )
        assert channel.returncode == 0, channel.stderr
        for thread in clients:
            thread.join(timeout=300)
        assert not failures, failures[:5]
        with served.http() as http:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                cv = http.get("/apis/config.openshift.io/v1/clusterversions/version").json()
                labels = {
                    n: http.get(f"/api/v1/nodes/{n}").json()["metadata"].get("labels", {})
                    for n in NODES
                }
                got = sum(1 for n in NODES for k in labels[n] if k.startswith(("api-", "cmd-")))
                if got == API_CLIENTS * API_WRITES + STORE_WRITES:
                    break
                time.sleep(0.5)
        for i in range(STORE_WRITES):
            assert f"cmd-{i}" in labels[NODES[i % len(NODES)]], i
        for c in range(API_CLIENTS):
            for i in range(API_WRITES):
                assert f"api-{c}-{i}" in labels[NODES[i % len(NODES)]], (c, i)
        assert cv["spec"]["channel"] == "fast-4.14"
        assert cv["spec"]["desiredUpdate"]["version"] == "4.14.27"  # the run's own request
