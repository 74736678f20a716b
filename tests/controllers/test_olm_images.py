"""Catalogs as their users ship them (SPEC F1): a file-based catalog built into an image
and pushed to Debian's docker-registry on loopback; a cluster subscribed to it installs
the head; a new image behind the same tag with a new head is picked up on the next
registryPoll and the subscription upgrades; a tampered blob is refused and said in the
subscription's conditions; the catalog commands read images too."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kupgrade.cluster.conditions import find
from kupgrade.release.catalog_image import build_catalog_image, pull_catalog, push_catalog
from kupgrade.sim.create import create_cluster
from kupgrade.sim.openshift.olm import add_source, subscribe
from kupgrade.sim.profile import Pool, Profile, Spec
from kupgrade.sim.store import Store
from tests.support.cli import kupgrade
from tests.support.conformance import needs_registry
from tests.support.olmkit import write_blobs
from tests.support.processes import RegistryProcess
from tests.support.registrykit import tamper_layer
from tests.support.sim import runner


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryProcess]:
    with RegistryProcess(tmp_path_factory.mktemp("registry")) as process:
        yield process


def _catalog(names: list[str]) -> list[dict[str, Any]]:
    entries = [{"name": names[0]}] + [
        {"name": n, "replaces": p} for p, n in itertools.pairwise(names)
    ]
    return [
        {"schema": "olm.package", "name": "app", "defaultChannel": "stable"},
        {"schema": "olm.channel", "package": "app", "name": "stable", "entries": entries},
        *(
            {
                "schema": "olm.bundle",
                "package": "app",
                "name": n,
                "image": f"quay.io/a/app:{n}",
                "properties": [
                    {
                        "type": "olm.package",
                        "value": {"packageName": "app", "version": n.split(".v")[1]},
                    }
                ],
            }
            for n in names
        ),
    ]


@needs_registry
def test_a_subscription_follows_its_catalog_image_on_each_poll(
    tmp_path: Path, registry: RegistryProcess
) -> None:
    tag = f"{registry.host}/catalogs/app:stable"
    first = push_catalog(
        build_catalog_image(write_blobs(tmp_path / "v1", _catalog(["app.v1.0.0"]))), tag
    )
    assert pull_catalog(first).files.keys() == {"catalog.json"}
    spec = Spec(
        seed=1,
        pools=[Pool(name="master", nodes=1, max_unavailable=1), Pool(name="worker", nodes=1)],
    )
    root = create_cluster(tmp_path, "c", Profile(spec=spec))
    store = Store(root / "cluster.db")
    r = runner(root, store, spec)
    add_source(r.transport.sim, "apps", tag, namespace="olm", poll="10m")
    subscribe(
        r.transport.sim, package="app", source="apps", source_namespace="olm", namespace="operators"
    )
    store.commit()
    r.run(until="idle", max_seconds=300)
    sub = r.transport.sim.get("Subscription", "app", "operators")
    assert sub is not None and sub["status"]["installedCSV"] == "app.v1.0.0"
    # A new head behind the same tag: picked up on the next poll, one step at a time.
    push_catalog(
        build_catalog_image(
            write_blobs(tmp_path / "v2", _catalog(["app.v1.0.0", "app.v1.1.0", "app.v1.2.0"]))
        ),
        tag,
    )
    r.run(until="idle", max_seconds=300)  # before the poll: nothing moves
    assert (
        r.transport.sim.get("Subscription", "app", "operators")["status"]["installedCSV"]
        == "app.v1.0.0"
    )  # type: ignore[index]
    r.run(until="idle", max_seconds=1200)
    sub = r.transport.sim.get("Subscription", "app", "operators")
    assert sub is not None and sub["status"]["installedCSV"] == "app.v1.2.0"
    source = r.transport.sim.get("CatalogSource", "apps", "olm")
    assert (
        source is not None and source["status"]["connectionState"]["lastObservedState"] == "READY"
    )


@needs_registry
def test_a_tampered_catalog_blob_is_refused(tmp_path: Path, registry: RegistryProcess) -> None:
    pinned = push_catalog(
        build_catalog_image(write_blobs(tmp_path / "c", _catalog(["app.v1.0.0"]))),
        f"{registry.host}/catalogs/tampered:v1",
    )
    tamper_layer(registry, pinned)
    spec = Spec(seed=1, pools=[Pool(name="master", nodes=1, max_unavailable=1)])
    root = create_cluster(tmp_path, "c", Profile(spec=spec))
    store = Store(root / "cluster.db")
    r = runner(root, store, spec)
    add_source(r.transport.sim, "bad", pinned, namespace="olm")
    subscribe(
        r.transport.sim, package="app", source="bad", source_namespace="olm", namespace="operators"
    )
    store.commit()
    r.run(until="idle", max_seconds=300)
    sub = r.transport.sim.get("Subscription", "app", "operators")
    assert sub is not None
    unhealthy = find(sub["status"]["conditions"], "CatalogSourcesUnhealthy")
    assert unhealthy is not None and unhealthy["status"] == "True"
    assert "olm/bad" in unhealthy["message"] and "was changed" in unhealthy["message"]
    assert r.transport.sim.list("InstallPlan") == []
    # The catalog commands refuse it the same way, in one line.
    done = kupgrade("olm", "heads", pinned)
    assert done.returncode != 0 and "was changed" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@needs_registry
def test_the_catalog_commands_read_a_catalog_image(
    tmp_path: Path, registry: RegistryProcess
) -> None:
    catalog = write_blobs(tmp_path / "c", _catalog(["app.v1.0.0", "app.v1.1.0"]))
    pushed = kupgrade("olm", "push", str(catalog), f"{registry.host}/catalogs/cli:v1", "-o", "json")
    assert pushed.returncode == 0, pushed.stderr
    spec = json.loads(pushed.stdout)["pullSpec"]
    assert spec.startswith(f"{registry.host}/catalogs/cli@sha256:")
    heads = json.loads(
        kupgrade("olm", "heads", f"{registry.host}/catalogs/cli:v1", "-o", "json").stdout
    )
    assert heads == json.loads(kupgrade("olm", "heads", str(catalog), "-o", "json").stdout)
    resolved = kupgrade(
        "olm",
        "resolve",
        "--source",
        f"cli={spec}",
        "--package",
        "app",
        "--from-source",
        "cli",
        "-o",
        "json",
    )
    assert json.loads(resolved.stdout)["walk"] == ["app.v1.1.0"]
