"""Where simulated clusters live: `$KUPGRADE_HOME/clusters/NAME` (default `~/.kupgrade`),
each with its store, its release mirror and its extracted payloads; and how a cluster's
controllers are wired to them (release sources, signature verification)."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

from kupgrade.errors import InputError
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.store import Store, read_meta
from kupgrade.sim.store_errors import StoreError

# A directory name on every file system and a Kubernetes-style name: letters, digits,
# dashes and dots inside, at most 63 characters.
CLUSTER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?")


# A twin's store keeps its import under this key (twin/importer.py): what the import
# said and its calibration, read back by `cluster calibration`, preflights and rollouts.
IMPORT_META = "import"


def twin_figure(name: str, figure: str) -> tuple[float, float] | None:
    """A measured figure of twin `name`'s calibration (None: no such twin or figure)."""
    path = home() / "clusters" / name / "cluster.db"
    if not CLUSTER_NAME.fullmatch(name) or not path.is_file():
        return None
    record = read_meta(path, IMPORT_META) or {}
    for found in record.get("calibration") or []:
        if found.get("name") == figure and found.get("measured"):
            low, high = found["seconds"]
            return float(low), float(high)
    return None


def home() -> Path:
    return Path(os.environ.get("KUPGRADE_HOME") or Path.home() / ".kupgrade")


def cluster_names() -> list[str]:
    root = home() / "clusters"
    return (
        sorted(p.name for p in root.iterdir() if (p / "cluster.db").exists())
        if root.is_dir()
        else []
    )


def pick(kind: str, names: list[str], name: str | None, field: str, create: str) -> str:
    """The one named (or the only one there is) among `names`, or an error saying which
    exist and how to make or name one: for clusters and fleets alike."""
    if name is None:
        if len(names) != 1:
            raise InputError(
                f"no {kind} named and "
                + ("none exists" if not names else f"there are {len(names)}: {', '.join(names)}"),
                field=field,
                hint=f"create one with `{create}`" if not names else f"pass {field} NAME",
            )
        name = names[0]
    if name not in names:
        raise InputError(
            f"no {kind} named {name!r}", field=field, hint=f"see `kupgrade {kind} list`"
        )
    return name


def cluster_root(name: str | None, field: str = "--cluster") -> Path:
    name = pick("cluster", cluster_names(), name, field, "kupgrade cluster create NAME")
    return home() / "clusters" / name


@contextmanager
def opened(name: str | None) -> Iterator[tuple[Path, Store, Spec]]:
    with opened_root(cluster_root(name)) as found:
        yield found


@contextmanager
def opened_root(root: Path) -> Iterator[tuple[Path, Store, Spec]]:
    """The cluster at `root` (known to be one), its store open."""
    store = Store(root / "cluster.db", shared=True)
    try:
        yield root, store, _spec(root, store.meta("profile"))
    finally:
        store.close()


def spec_in(root: Path, store: Store) -> Spec:
    """The profile of the cluster at `root` whose store is open."""
    return _spec(root, store.meta("profile"))


def spec_at(name: str | None) -> tuple[Path, Spec]:
    """A cluster's home and profile, read without loading the cluster."""
    root = cluster_root(name)
    return root, _spec(root, read_meta(root / "cluster.db", "profile"))


def _spec(root: Path, raw: object) -> Spec:
    try:
        return msgspec.convert(raw, Profile).spec
    except msgspec.ValidationError as exc:
        raise StoreError(
            f"the store of cluster {root.name} is damaged (its profile: {exc})",
            file=str(root / "cluster.db"),
            hint=f"delete the cluster with `kupgrade cluster delete {root.name}` and "
            "create it again",
        ) from None


def copy_cluster(root: Path, copy: Path, db: str = "cluster.db") -> None:
    """A simulated cluster's home (or a fleet's), its store copied consistently with
    SQLite's backup, so a copy taken while another process commits is never torn."""
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(f"{db}*", "*.lock", "requests"))
    source = sqlite3.connect(f"file:{root / db}?mode=ro", uri=True)
    target = sqlite3.connect(copy / db)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
