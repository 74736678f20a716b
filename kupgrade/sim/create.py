"""Create a simulated cluster from a profile: its home, its store, its objects settled at
the first release, as its platform lays them out (sim/platform.py).

The home is made under a hidden name and renamed into place only once the cluster is
whole, so a failed or interrupted create leaves nothing behind.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec

from kupgrade.cluster.objects import merge_patch
from kupgrade.collector import paused
from kupgrade.errors import InputError
from kupgrade.sim.platforms import platform_of
from kupgrade.sim.profile import Profile
from kupgrade.sim.profiles import check_profile
from kupgrade.sim.store import Store


def create_cluster(
    home: Path, name: str, profile: Profile, meta: dict[str, Any] | None = None
) -> Path:
    """The cluster made and settled; `meta`: what else its store keeps from the start
    (a twin's import record)."""
    check_profile(profile, "the profile")
    target = refuse_existing(home, name)
    tmp = home / "clusters" / f".{name}.creating"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        with paused():  # a big cluster's pods, nodes and manifests: acyclic documents
            _populate(tmp, name, profile, meta or {})
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def refuse_existing(home: Path, name: str) -> Path:
    """Where cluster `name` goes, refused when one is there already."""
    target = home / "clusters" / name
    if target.exists():
        raise InputError(
            f"cluster {name!r} already exists", file=str(target), hint="delete it first"
        )
    return target


def _populate(root: Path, name: str, profile: Profile, meta: dict[str, Any]) -> None:
    store = Store(root / "cluster.db")
    try:
        store.set_meta("profile", msgspec.to_builtins(profile))
        for key, value in meta.items():
            store.set_meta(key, value)
        platform_of(profile.spec).populate(root, store, name, profile)
        add_objects(store, profile.spec.objects)
        store.commit()
    finally:
        store.close()


def add_objects(store: Store, objects: list[dict[str, Any]]) -> None:
    """A profile's objects: stored as they are, or merged into the object of that kind and
    name the platform made (a twin's ClusterVersion history, its cordoned nodes)."""
    for obj in objects:
        meta = obj["metadata"]
        made = store.get(obj["kind"], meta["name"], meta.get("namespace") or "")
        store.put(merge_patch(made, obj) if made is not None else obj)
