"""An informer outlives a cut watch (SPEC X6): the API server is stopped and started again
on the same port, and the informer watches again from the last version it saw (a 410
from the new process makes it list again), as client-go's reflector does, instead of
ending the run at the first interrupted watch."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx

from kupgrade.cluster.informer import Informer
from kupgrade.cluster.objects import copied
from kupgrade.cluster.remote import InformedBackend
from tests.apiserver.test_kubeapi import PROFILE, Served
from tests.support.cli import run_cli
from tests.support.processes import served_api


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_watch_cut_by_a_server_restart_is_resumed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE)
    assert run_cli(["cluster", "create", "demo", "--profile", str(profile)], home).exit_code == 0
    port = str(_free_port())
    flags = ("--no-controllers", "--port", port)
    with served_api(home, "demo", *flags) as (process, info):
        served = Served(home, home / "clusters" / "demo", Path(info["kubeconfig"]), "", process)
        base = info["server"]
        client = httpx.Client(
            base_url=base,
            verify=served.trust(),
            headers={"Authorization": f"Bearer {served.token()}"},
        )
        informer = Informer(client, "Node", "/api/v1/nodes")
    # The server is gone: the informer keeps trying instead of failing the run.
    with served_api(home, "demo", *flags):
        touched: list[object] = []
        labelled = client.patch(
            "/api/v1/nodes/worker-1",
            content=b'{"metadata":{"labels":{"after":"restart"}}}',
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert labelled.status_code == 200, labelled.text
        version = int(labelled.json()["metadata"]["resourceVersion"])
        informer.reach(version, touched.append)
        cached = informer.objects[("Node", "", "worker-1")]
        assert cached["metadata"]["labels"]["after"] == "restart"
        assert ("Node", "", "worker-1") in touched
        informer.stop()
    client.close()


def test_a_stale_write_is_retried_on_the_fresh_object_keeping_both_changes(
    tmp_path: Path,
) -> None:
    """client-go's RetryOnConflict: the controllers' write of a node they read before
    someone labelled it answers 409; the retry makes their own change (cordon) on the
    labelled node, and neither change is lost."""
    home = tmp_path / "home"
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE)
    assert run_cli(["cluster", "create", "demo", "--profile", str(profile)], home).exit_code == 0
    with served_api(home, "demo", "--no-controllers") as (process, info):
        served = Served(home, home / "clusters" / "demo", Path(info["kubeconfig"]), "", process)
        backend = InformedBackend(Path(info["kubeconfig"]))
        node = copied(backend.get("Node", "worker-2") or {})
        with httpx.Client(
            base_url=info["server"],
            verify=served.trust(),
            headers={"Authorization": f"Bearer {served.token()}"},
        ) as http:
            labelled = http.patch(
                "/api/v1/nodes/worker-2",
                content=b'{"metadata":{"labels":{"team":"blue"}}}',
                headers={"Content-Type": "application/merge-patch+json"},
            )
            assert labelled.status_code == 200
            node["spec"]["unschedulable"] = True
            backend.write(node)  # from the version read before the label: a 409 first
            after = http.get("/api/v1/nodes/worker-2").json()
        assert after["spec"]["unschedulable"] is True
        assert after["metadata"]["labels"]["team"] == "blue"
        backend.close()
