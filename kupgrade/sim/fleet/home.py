"""Where fleets live: `$KUPGRADE_HOME/fleets/NAME/fleet.db` (the fleet file, the
rehearsal, its step records and event log) beside the member clusters, which are
ordinary simulated clusters under `$KUPGRADE_HOME/clusters/` so that every cluster
command works on them.

A fleet is created whole or not at all: its members are made one by one, and the first
failure removes those already made before the error is said.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from kupgrade.errors import InputError
from kupgrade.sim.create import create_cluster
from kupgrade.sim.fleet.doc import FleetFile
from kupgrade.sim.fleet.install import put_in_place
from kupgrade.sim.homes import CLUSTER_NAME, cluster_names, cluster_root, home, opened_root, pick
from kupgrade.sim.lock import ControllerLock
from kupgrade.sim.profile import Spec
from kupgrade.sim.store import Store

FLEET_DB = "fleet.db"
INFO = "fleet"


def fleets_root() -> Path:
    return home() / "fleets"


def fleet_names() -> list[str]:
    root = fleets_root()
    return (
        sorted(p.name for p in root.iterdir() if (p / FLEET_DB).exists()) if root.is_dir() else []
    )


def fleet_root(name: str | None) -> Path:
    return fleets_root() / pick(
        "fleet", fleet_names(), name, "--fleet", "kupgrade fleet create FLEET.yaml"
    )


def create_fleet(name: str, fleet: FleetFile) -> Path:
    if not CLUSTER_NAME.fullmatch(name):
        raise InputError(
            f"invalid fleet name {name!r}", field="--name", hint="use letters, digits and dashes"
        )
    root = fleets_root() / name
    if root.exists():
        raise InputError(
            f"fleet {name!r} already exists",
            file=str(root),
            hint=f"delete it first: `kupgrade fleet delete {name}`",
        )
    for member in fleet.members:
        if not CLUSTER_NAME.fullmatch(member.name):
            raise InputError(
                f"invalid cluster name {member.name!r}",
                field=f"clusters.{member.name}",
                hint="a simulated cluster's name has letters, digits, dots and dashes",
            )
    taken = sorted({m.name for m in fleet.members} & set(cluster_names()))
    if taken:
        raise InputError(
            f"a cluster named {taken[0]!r} already exists",
            field="clusters",
            hint=f"delete it (`kupgrade cluster delete {taken[0]}`) or rename it in the fleet file",
        )
    made: list[Path] = []
    tmp = fleets_root() / f".{name}.creating"
    try:
        for member in fleet.members:
            made.append(create_cluster(home(), member.name, member.profile))
            _join(made[-1], name)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        store = Store(tmp / FLEET_DB)
        try:
            start = min(float(_clock_of(p)) for p in made)
            store.set_meta(
                INFO,
                {
                    "platform": fleet.platform,
                    "members": [m.name for m in fleet.members],
                    "document": fleet.document,
                    "target": fleet.target,
                    "available": fleet.available,
                    "policy": fleet.policy,
                },
            )
            store.set_meta("now", start)
            store.commit()
        finally:
            store.close()
        tmp.rename(root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        for path in made:
            shutil.rmtree(path, ignore_errors=True)
        raise
    return root


MEMBER_OF = "fleet"  # a member cluster's store names its fleet


def _join(root: Path, fleet: str) -> None:
    store = Store(root / "cluster.db")
    try:
        store.set_meta(MEMBER_OF, fleet)
        store.commit()
    finally:
        store.close()


def rehearsing(store: Store) -> str | None:
    """The fleet whose rehearsal is carrying this member cluster along, if any."""
    fleet = store.meta(MEMBER_OF)
    if not fleet or fleet not in fleet_names():
        return None
    other = Store(fleets_root() / str(fleet) / FLEET_DB)
    try:
        running = (other.meta("rehearsal") or {}).get("status") == "running"
    finally:
        other.close()
    return str(fleet) if running else None


def _clock_of(root: Path) -> float:
    store = Store(root / "cluster.db")
    try:
        return float(store.meta("now", 0))
    finally:
        store.close()


@contextmanager
def opened_fleet(
    name: str | None, *, simulated: bool = True
) -> Iterator[tuple[Path, Store, dict[str, Any], dict[str, tuple[Path, Store, Spec]]]]:
    """The fleet's store and info, and every member opened; refused for a fleet of real
    clusters (sim/fleet/live.py) unless `simulated` is False."""
    root = fleet_root(name)
    store = Store(root / FLEET_DB)
    try:
        info = dict(store.meta(INFO) or {})
        put_in_place(root, store, home() / "clusters")  # a distributed run's last move
        if simulated and info.get("platform") == "live":
            raise InputError(
                f"fleet {root.name} is the clusters of a kubeconfig: it has a rollout, not "
                "simulated clusters",
                hint=f"see it with `kupgrade fleet rollout status --fleet {root.name}`",
            )
        with ExitStack() as stack:
            members = {}
            present = set(cluster_names())  # listed once: a fleet has up to 1,000 members
            for member in info.get("members", []):
                if member not in present:
                    raise InputError(
                        f"cluster {member} of fleet {root.name} is gone",
                        file=str(root / FLEET_DB),
                        hint=f"delete the fleet (`kupgrade fleet delete {root.name}`) "
                        "and create it again",
                    )
                members[member] = stack.enter_context(opened_root(home() / "clusters" / member))
            yield root, store, info, members
    finally:
        store.close()


@contextmanager
def locked(root: Path, members: list[str]) -> Iterator[None]:
    """The fleet's lock and every member's controller lock, for one rehearsal."""
    with ExitStack() as stack:
        held = ControllerLock.acquire(root)
        stack.callback(held.release)
        for member in members:
            lock = ControllerLock.acquire(home() / "clusters" / member)
            stack.callback(lock.release)
        yield


def delete_fleet(name: str) -> list[str]:
    root = fleet_root(name)
    store = Store(root / FLEET_DB)
    try:
        members = list((store.meta(INFO) or {}).get("members", []))
    finally:
        store.close()
    with locked(root, [m for m in members if m in cluster_names()]):
        for member in members:
            if member in cluster_names():
                shutil.rmtree(cluster_root(member))
    shutil.rmtree(root)
    return members
