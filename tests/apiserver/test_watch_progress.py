"""How a client of the stepped clock knows its watches have seen a step (issue 46): the
ClockStep answer names each kind changed since the version the client gives, with the
version of its last change, so that only those watches are waited for; watches send
bookmarks for other kinds' changes at a bounded rate, not one for every change; a granted
eviction says the version it left the store at, and the remote controllers' backend waits
for its pod's watch there instead of reading the pod again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import yaml

from kupgrade.cluster.remote import InformedBackend
from tests.support.processes import served_api

STEP = "/apis/sim.kupgrade.io/v1/clocks/virtual/step"
CLOCK = "/apis/sim.kupgrade.io/v1/clocks/virtual"


@contextmanager
def _served(home: Path) -> Iterator[dict[str, Any]]:
    subprocess.run(
        [sys.executable, "-m", "kupgrade", "cluster", "create", "c", "--workers", "3"],
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        capture_output=True,
        check=True,
    )
    with served_api(home, "c", "--no-controllers") as (_, info):
        yield info


@contextmanager
def _backend(home: Path) -> Iterator[tuple[InformedBackend, list[str]]]:
    """The remote controllers' backend on a served cluster, and every request it sends."""
    with _served(home) as info:
        api = InformedBackend(Path(info["kubeconfig"]))
        try:
            sent: list[str] = []
            api.http.event_hooks["request"].append(
                lambda r: sent.append(f"{r.method} {r.url.path}")
            )
            yield api, sent
        finally:
            api.close()


@contextmanager
def _api(home: Path) -> Iterator[httpx.Client]:
    with _served(home) as info:
        user = yaml.safe_load(Path(info["kubeconfig"]).read_text())["users"][0]["user"]
        with httpx.Client(
            base_url=info["server"],
            verify=False,
            headers={"Authorization": f"Bearer {user['token']}"},
            timeout=30,
        ) as http:
            yield http


def _step(http: httpx.Client, **body: Any) -> dict[str, Any]:
    answer = http.post(STEP, json={"kind": "ClockStep", **body})
    assert answer.status_code == 201, answer.text
    status: dict[str, Any] = answer.json()["status"]
    return status


def _label(http: httpx.Client, node: str, value: str) -> int:
    done = http.patch(
        f"/api/v1/nodes/{node}",
        content=json.dumps({"metadata": {"labels": {"checked": value}}}).encode(),
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert done.status_code == 200, done.text
    return int(done.json()["metadata"]["resourceVersion"])


def test_a_step_names_the_kinds_changed_since_the_version_given(tmp_path: Path) -> None:
    with _api(tmp_path) as http:
        status = _step(http)  # no `since`: no list (what an older client asks)
        assert "changedKinds" not in status
        for _ in range(20):  # until the world has nothing left to react to
            if not status["changed"]:
                break
            status = _step(http)
        reached = status["resourceVersion"]
        quiet = _step(http, since=reached)
        assert quiet["changedKinds"] == {} and quiet["resourceVersion"] == reached
        nodes = http.get("/api/v1/nodes").json()["items"]
        last = 0
        for n, node in enumerate(nodes):
            last = _label(http, node["metadata"]["name"], str(n))
        moved = _step(http, since=reached)
        kinds = moved["changedKinds"]
        assert "Node" in kinds and int(kinds["Node"]) >= last
        # every version named is one of the changes after `since`, none past the step's
        assert all(int(reached) < int(v) <= int(moved["resourceVersion"]) for v in kinds.values())
        # a version the server does not keep changes for (here: one it has not reached)
        # gets no list, and the client waits for every watch instead
        ahead = str(int(moved["resourceVersion"]) + 1000)
        assert "changedKinds" not in _step(http, since=ahead)
        for bad in ("soon", -1, True, "1" * 30):
            refused = http.post(STEP, json={"kind": "ClockStep", "since": bad})
            assert refused.status_code == 400 and "since" in refused.json()["message"]


def test_a_watch_marks_other_kinds_changes_at_a_bounded_rate(tmp_path: Path) -> None:
    with _api(tmp_path) as http:
        start = http.get(CLOCK).json()["status"]["resourceVersion"]
        seen: list[tuple[float, str, int]] = []
        stop = threading.Event()

        def watch() -> None:
            params = {
                "watch": "1",
                "resourceVersion": start,
                "allowWatchBookmarks": "true",
                "timeoutSeconds": "20",
            }
            with (
                suppress(httpx.HTTPError),  # the server stops under it at the end
                http.stream("GET", "/api/v1/namespaces", params=params) as stream,
            ):
                for line in stream.iter_lines():
                    if line.strip():
                        event = json.loads(line)
                        version = event["object"]["metadata"]["resourceVersion"]
                        seen.append((time.monotonic(), event["type"], int(version)))
                    if stop.is_set():
                        return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        began = time.monotonic()
        nodes = [n["metadata"]["name"] for n in http.get("/api/v1/nodes").json()["items"]]
        last = 0
        for round_ in range(15):  # many changes of another kind, as fast as they go
            for node in nodes:
                last = _label(http, node, f"r{round_}")
        changing = time.monotonic() - began
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(v >= last for _, _, v in seen):
            time.sleep(0.05)
        stop.set()
        marks = [(at, v) for at, kind, v in seen if kind == "BOOKMARK"]
        # the watch of namespaces says it has reached the last node change...
        assert marks and marks[-1][1] >= last, (marks, last)
        # ...without a bookmark for each of the many changes: one a second at most
        during = [v for at, v in marks if at - began <= changing]
        assert len(during) <= 1 + changing, (len(during), changing, len(nodes) * 15)
        assert all(kind == "BOOKMARK" for _, kind, _ in seen)  # no namespace changed


def test_an_eviction_says_its_version_and_the_backend_reads_no_pod_again(
    tmp_path: Path,
) -> None:
    with _backend(tmp_path) as (api, sent):
        pods = [
            p
            for p in api.list("Pod")
            if (p["metadata"].get("ownerReferences") or [{}])[0].get("kind")
            not in ("DaemonSet", None)
        ]
        pod = pods[0]
        meta = pod["metadata"]
        path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/eviction"
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": meta}
        dry = api.http.post(path, params={"dryRun": "All"}, json=body)
        assert dry.status_code == 201 and dry.json()["metadata"] == {}  # nothing changed
        before = int(api.clock["status"]["resourceVersion"])
        sent.clear()
        answer = api.evict(pod)
        assert answer.code == 200, answer
        assert sent == [f"POST {path}"]  # the eviction, and no GET of the pod after it
        k = ("Pod", meta["namespace"], meta["name"])
        now = api.get("Pod", meta["name"], meta["namespace"])
        # the cache holds the pod as the server left it: gone, or terminating
        served = api.http.get(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}")
        if served.status_code == 404:
            assert now is None and k not in api.served
        else:
            assert now is not None
            assert (
                now["metadata"]["resourceVersion"] == served.json()["metadata"]["resourceVersion"]
            )
            assert int(now["metadata"]["resourceVersion"]) > before
        # the version said is the evicted pod's own, not the store's (whose last change
        # may be of another kind, which a pod watch is never sent)
        for candidate in pods[1:]:  # the first that its budget lets go
            other = candidate["metadata"]
            granted = api.http.post(
                f"/api/v1/namespaces/{other['namespace']}/pods/{other['name']}/eviction",
                json={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": other},
            )
            if granted.status_code == 201:
                break
        assert granted.status_code == 201
        left = api.http.get(f"/api/v1/namespaces/{other['namespace']}/pods/{other['name']}")
        assert (
            granted.json()["metadata"]["resourceVersion"]
            == (left.json()["metadata"]["resourceVersion"])
        )


def test_the_state_is_read_again_only_when_its_digest_changes(tmp_path: Path) -> None:
    state = "/api/v1/namespaces/kupgrade/configmaps/kupgrade-controller-state"
    with _backend(tmp_path) as (api, sent):
        for _ in range(20):  # until the world has nothing left to react to
            if not api.step(None):
                break
        digest = api.clock["status"]["stateDigest"]
        api.state("anything")
        sent.clear()
        for _ in range(3):
            api.step(None)
            assert api.state("nothing", 7) == 7
        assert api.clock["status"]["stateDigest"] == digest
        assert f"GET {state}" not in sent  # nothing changed: read from memory
        # another client writes the state: the next step's digest says so, and the
        # state is read again
        patch = json.dumps({"data": {"marker": json.dumps({"by": "someone"})}}).encode()
        other = api.http.patch(
            state, content=patch, headers={"Content-Type": "application/merge-patch+json"}
        )
        assert other.status_code == 200
        assert api.state("marker") is None  # this client has not stepped since
        api.step(None)
        assert api.clock["status"]["stateDigest"] != digest
        assert api.state("marker") == {"by": "someone"}
        assert sent.count(f"GET {state}") == 1
