"""Create a simulated cluster from a profile: its home, its store, its objects settled at
the first release, as its platform lays them out (sim/platform.py).

The home is made under a hidden name and renamed into place only once the cluster is
whole, so a failed or interrupted create leaves nothing behind.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec

from kupgrade.collector import paused
from kupgrade.errors import InputError
from kupgrade.sim.platforms import platform_of
from kupgrade.sim.profile import Profile
from kupgrade.sim.profiles import check_profile
from kupgrade.sim.store import Store


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
    store = Store(root / "cluster.db")
    try:
        store.set_meta("profile", msgspec.to_builtins(profile))
        platform_of(profile.spec).populate(root, store, name, profile)
        store.commit()
    finally:
        store.close()
