"""Create a simulated cluster from a profile: its store, its first release, its objects.

The cluster starts settled at the profile's release: every operator Available at that
version, every node Done with the pool's rendered config, the release's manifests
applied, a Completed history entry — what a freshly installed cluster looks like.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import msgspec

from kupgrade import intake
from kupgrade.cluster import mco
from kupgrade.cluster import objects as o
from kupgrade.collector import paused
from kupgrade.controllers.nodes.controller import NodeController
from kupgrade.errors import InputError
from kupgrade.release.payload import LoadOptions, load_payload
from kupgrade.release.sources import open_payload
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.gdc import populate_gdc
from kupgrade.sim.kube_create import populate_kube
from kupgrade.sim.olm import start_with
from kupgrade.sim.profile import (
    Machine,
    Profile,
    Spec,
    check_profile,
    node_names,
    operators_of,
)
from kupgrade.sim.releases import build_release, rendered_config
from kupgrade.sim.store import Store
from kupgrade.sim.workloads import add_workloads, schedule_changes

MODEL_REGISTRY = "sim.kupgrade.local/ocp-release"


def layout_digest(index: Path) -> str:
    """The image digest an OCI layout's index.json names (the cluster's own mirror)."""
    doc = intake.decode_json(intake.read_file(index, "index.json"), str(index))
    manifests = doc.get("manifests") if isinstance(doc, dict) else None
    first = manifests[0] if isinstance(manifests, list) and manifests else None
    digest = first.get("digest") if isinstance(first, dict) else None
    if not isinstance(digest, str):
        raise InputError(
            "is not an OCI image index with a manifest digest",
            file=str(index),
            hint="delete the release mirror directory; it is rebuilt on demand",
        )
    return digest


def model_image(spec: Spec, version: str, home: Path) -> str:
    """The pull spec of the model release of `version`, built into the cluster's mirror."""
    out = home / "releases" / version
    index = out / "index.json"
    digest = layout_digest(index) if index.exists() else build_release(spec, version, out)
    return f"{MODEL_REGISTRY}@{digest}"


def release_source(spec: Spec, home: Path, image: str, version: str) -> str:
    """Where the cluster reads `image` from: a mirror, a model release, or the image itself."""
    if image in spec.mirrors:
        return spec.mirrors[image]
    if image.startswith(MODEL_REGISTRY + "@"):
        for candidate in (home / "releases").glob("*/index.json"):
            if image.endswith(layout_digest(candidate)):
                return str(candidate.parent)
    host = image.split("/", 1)[0]
    if host.split(":")[0] in ("127.0.0.1", "localhost") or not version:
        return image
    # A release the simulated world has never seen: its registry serves the model of it.
    model_image(spec, version, home)
    return str(home / "releases" / version)


def create_cluster(home: Path, name: str, profile: Profile) -> Path:
    check_profile(profile, "the profile")
    target = home / "clusters" / name
    if target.exists():
        raise InputError(
            f"cluster {name!r} already exists", file=str(target), hint="delete it first"
        )
    tmp = home / "clusters" / f".{name}.creating"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        with paused():  # a big cluster's pods, nodes and manifests: acyclic documents
            _populate(tmp, name, profile)
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _populate(root: Path, name: str, profile: Profile) -> None:
    spec = profile.spec
    store = Store(root / "cluster.db")
    if spec.platform in ("gdc", "kubernetes"):
        try:
            store.set_meta("profile", msgspec.to_builtins(profile))
            (populate_gdc if spec.platform == "gdc" else populate_kube)(store, name, profile)
            store.commit()
        finally:
            store.close()
        return
    try:
        now = o.parse_rfc3339(spec.start)
        stamp = o.rfc3339(now)
        store.set_meta("name", name)
        store.set_meta("now", now)
        store.set_meta("seed", spec.seed)
        store.set_meta("profile", msgspec.to_builtins(profile))
        image = model_image(spec, spec.version, root)
        payload = load_payload(
            open_payload(str(root / "releases" / spec.version)).files,
            LoadOptions(release_image=image),
        )
        release = {**payload.release_json(), "image": image}
        cv = o.cluster_version(
            str(uuid.UUID(int=spec.seed)), spec.channel, spec.upstream, release, stamp
        )
        cv["status"]["history"] = [
            {
                "state": "Completed",
                "version": spec.version,
                "image": image,
                "startedTime": stamp,
                "completionTime": stamp,
                "verified": False,
                "acceptedRisks": "",
            }
        ]
        cv["status"]["versionHash"] = payload.version_hash
        cv["status"]["conditions"] = [
            {
                "type": "Available",
                "status": "True",
                "message": f"Done applying {spec.version}",
                "lastTransitionTime": stamp,
            },
            {"type": "Failing", "status": "False", "lastTransitionTime": stamp},
            {
                "type": "Progressing",
                "status": "False",
                "message": f"Cluster version is {spec.version}",
                "lastTransitionTime": stamp,
            },
            {"type": "RetrievedUpdates", "status": "False", "lastTransitionTime": stamp},
        ]
        store.put(cv)
        for manifest in payload.included:
            obj = {k: v for k, v in manifest.obj.items() if k != "status"}
            obj["metadata"] = {**obj["metadata"], "creationTimestamp": stamp}
            if obj["kind"] != "ClusterOperator":
                store.put(obj)
        profiles = {
            m.obj["metadata"]["name"]: m.obj["metadata"].get("annotations") or {}
            for m in payload.included
            if m.obj["kind"] == "ClusterOperator"
        }
        for op in operators_of(spec):
            store.put(o.cluster_operator(op.name, spec.version, stamp, profiles.get(op.name)))
            store.set_meta(
                f"op:{op.name}", {"target": spec.version, "rolled": True, "reported": True}
            )
        _nodes(store, spec, stamp, now)
        add_workloads(store, spec, stamp)
        schedule_changes(store, spec, now)
        store.set_meta(
            "state:version",
            {
                "image": image,
                "version": spec.version,
                "completed": True,
                "release": release,
                "versionHash": payload.version_hash,
                "mode": "Reconciling",
                "done": payload.total,
                "total": payload.total,
            },
        )
        _settle_pools(store)
        if spec.olm is not None:  # the first `controller run` installs them (SPEC F)
            start_with(SimCluster(store), spec.olm)
        store.commit()
    finally:
        store.close()


def _settle_pools(store: Store) -> None:
    """Pool status as the node controller reports it for the settled nodes."""

    NodeController(SimCluster(store)).sync()


def _nodes(store: Store, spec: Spec, stamp: str, now: float) -> None:
    for pool in spec.pools:
        rendered = rendered_config(pool.name, spec.version)
        store.put(o.machine_config_pool(pool.name, rendered, pool.max_unavailable, stamp))
        store.put(o.machine_config(rendered, spec.version, stamp))
        store.set_meta(f"release-of:{rendered}", spec.version)
        store.get("MachineConfigPool", pool.name)["metadata"].setdefault("annotations", {})[  # type: ignore[index]
            mco.DRAIN_FLAGS
        ] = " ".join(pool.drain.args())
        if pool.paused:
            store.get("MachineConfigPool", pool.name)["spec"]["paused"] = True  # type: ignore[index]
        machines = pool.machines or [Machine(name) for name in node_names(pool)]
        for i, machine in enumerate(machines):
            zone = machine.zone or (pool.zones[i % len(pool.zones)] if pool.zones else None)
            created = machine.created or (
                pool.created[i] if i < len(pool.created) else o.rfc3339(now - 86400 + i)
            )
            made = o.node(machine.name, pool.name, zone, rendered, created)
            made["status"]["nodeInfo"] = {"kubeletVersion": o.openshift_kubelet(spec.version)}
            store.put(made)
