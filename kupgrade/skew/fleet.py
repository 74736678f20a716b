"""A distributed-cloud fleet as a user writes it down: clusters with their role, the
management cluster of each user cluster, node pools, annotations, and the release
history the chronology rule needs (SPEC G2-G4).

The release history is data the user supplies (an order, or dates): kupgrade ships no
release dates of its own, since they are facts about someone else's product that change
with every release.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import msgspec

from kupgrade.errors import InputError, VersionError
from kupgrade.skew.inventory import read_yaml
from kupgrade.versions import GDC_RELEASE_LINE, GdcVersion, ReleaseLine

MANAGERS = ("admin", "hybrid")
PREVIEW_TWO_MINOR_POOLS = "preview.baremetal.cluster.gke.io/two-minor-version-node-pool"

_T = TypeVar("_T")
Role = Literal["admin", "hybrid", "user", "standalone"]


class _Base(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    pass


class ClusterDoc(_Base):
    version: str
    role: Role = "standalone"
    managed_by: str | None = None
    pools: dict[str, str] = msgspec.field(default_factory=dict)
    annotations: dict[str, str] = msgspec.field(default_factory=dict)
    labels: dict[str, str] = msgspec.field(default_factory=dict)  # what rollouts select by


class Release(_Base):
    version: str
    date: dt.date


class FleetDoc(_Base):
    clusters: dict[str, Any]  # ClusterDoc each, converted one by one to name the cluster
    release_line: list[str] | None = None
    release_order: list[str] | None = None
    releases: list[Release] | None = None


# Keys a conformance case or a plan file carries beside the fleet; they are read by the
# commands that need them (plan: target, available; fleet create: simulation) and
# otherwise left alone.
CASE_KEYS = frozenset(
    {
        "id",
        "origin",
        "kind",
        "note",
        "expect",
        "request",
        "schema_version",
        "platform",
        "policy",
        "target",
        "available",
        "release_order_status",
        "bmctl",
        "simulation",
    }
)


@dataclass(frozen=True)
class Cluster:
    name: str
    role: str
    version: GdcVersion
    managed_by: str | None = None
    pools: dict[str, GdcVersion] = field(default_factory=dict)
    preview_pools: bool = False  # the two-minor node-pool preview is enabled (SPEC G4)

    @property
    def manages(self) -> bool:
        return self.role in MANAGERS


@dataclass(frozen=True)
class History:
    """The release line and the order releases came out in (oldest first)."""

    line: ReleaseLine = GDC_RELEASE_LINE
    rank: dict[GdcVersion, int] = field(default_factory=dict)

    def parse(self, text: str) -> GdcVersion:
        """A version whose minor is on this release line."""
        version = GdcVersion.parse(str(text))
        self.line.index((version.major, version.minor))
        return version

    def field(self, text: str, field: str, file: str | None = None) -> GdcVersion:
        """`parse`, with a user's mistake named by where it was written."""
        try:
            return self.parse(text)
        except VersionError as exc:
            raise InputError(exc.message, file=file, field=field) from None

    def distance(self, older: GdcVersion, newer: GdcVersion) -> int:
        """Release-line minors from `older` to `newer` (1.16 -> 1.28 is one)."""
        return self.line.distance((older.major, older.minor), (newer.major, newer.minor))

    def released_after(self, pool: GdcVersion, cluster: GdcVersion) -> bool | None:
        """Was `pool` released after `cluster`? None when the history does not say.

        Patches of one minor come out in patch order (a sourced fact), so within a minor
        the versions themselves answer; across minors only the supplied history can.
        """
        if (pool.major, pool.minor) == (cluster.major, cluster.minor):
            return pool > cluster
        a, b = self.rank.get(pool), self.rank.get(cluster)
        if a is None or b is None:
            return None
        return a > b


@dataclass
class Fleet:
    clusters: dict[str, Cluster]
    history: History = field(default_factory=History)
    users: dict[str, list[str]] = field(default_factory=dict)  # manager -> its user clusters

    def __post_init__(self) -> None:
        if not self.users:
            for cluster in self.clusters.values():
                if cluster.managed_by is not None:
                    self.users.setdefault(cluster.managed_by, []).append(cluster.name)

    def group(self, name: str) -> list[str]:
        """The clusters whose rules a change to `name` can affect: its manager and siblings,
        or itself and its users."""
        cluster = self.clusters[name]
        head = cluster.managed_by or name
        return [head, *self.users.get(head, [])]

    def with_cluster(self, cluster: Cluster) -> Fleet:
        return Fleet({**self.clusters, cluster.name: cluster}, self.history, self.users)


def is_fleet_document(data: Any) -> bool:
    """A fleet inventory lists `clusters` (at the top or under `fleet`)."""
    return isinstance(data, dict) and ("clusters" in data or "fleet" in data)


def parse_fleet(data: Any, where: str, history: History | None = None) -> Fleet:
    """Check the shape, every version and every management link.

    `history` (from `--releases`) replaces the one the document carries, if any.
    """
    doc = _document(data, where)
    if history is None:
        history = parse_history(doc, where)
    clusters: dict[str, Cluster] = {}
    for name, c in doc.clusters.items():
        at = f"clusters.{name}"
        pools = {p: history.field(v, f"{at}.pools.{p}", where) for p, v in c.pools.items()}
        clusters[name] = Cluster(
            name=name,
            role=c.role,
            version=history.field(c.version, f"{at}.version", where),
            managed_by=c.managed_by,
            pools=pools,
            preview_pools=c.annotations.get(PREVIEW_TWO_MINOR_POOLS, "").lower() == "enable",
        )
    _check_links(clusters, where)
    return Fleet(clusters, history)


def listed_fleet(data: Any, where: str, history: History | None = None) -> Fleet:
    """`parse_fleet` for a user's fleet file: one that lists no cluster is refused.

    Nothing would be checked or planned, and "no violations" or an empty plan with exit 0
    would pass an empty or mistaken file; `fleet create` and Kubernetes fleets refuse the
    same (sim/fleet/doc.py, plan/kube_fleet.py)."""
    fleet = parse_fleet(data, where, history)
    if not fleet.clusters:
        raise InputError(
            "the fleet lists no cluster",
            file=where,
            field="clusters",
            hint="see `kupgrade skew reference fleet` for the format",
        )
    return fleet


def _document(data: Any, where: str) -> FleetDoc:
    if isinstance(data, dict) and "fleet" in data:
        fleet = data["fleet"]
        data = {**data, **(fleet if isinstance(fleet, dict) else {"clusters": fleet})}
        del data["fleet"]
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in CASE_KEYS}
        synthetic = data.pop("release_order_synthetic", None)
        data.setdefault("release_order", synthetic)
    doc = _convert(data, FleetDoc, where, None)
    doc.clusters = {
        str(name): _convert(c, ClusterDoc, where, f"clusters.{name}")
        for name, c in doc.clusters.items()
    }
    return doc


def _convert(data: Any, kind: type[_T], where: str, at: str | None) -> _T:
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        text = str(exc).replace(" - at `$`", "")
        if at:
            text = text.replace("`$.", f"`{at}.").replace("`$`", f"`{at}`")
        hint = (
            "quote versions in YAML ('1.30' is a number)"
            if "float" in text
            else "a cluster has version, role (admin, hybrid, user, standalone), managed_by, "
            "pools {name: version} and annotations"
            if "unknown field" in text
            else None
        )
        raise InputError(text, file=where, hint=hint) from None


def parse_history(data: FleetDoc | Any, where: str) -> History:
    """The release line and the release order, from `release_order` (oldest first) or
    `releases` ([{version, date}])."""
    doc = data if isinstance(data, FleetDoc) else _history_doc(data, where)
    try:
        line = ReleaseLine.of(doc.release_line) if doc.release_line else GDC_RELEASE_LINE
    except VersionError as exc:
        raise InputError(exc.message, file=where, field="release_line") from None
    if list(line.minors) != sorted(line.minors):
        raise InputError(
            "the release line must list minors oldest first", file=where, field="release_line"
        )
    history = History(line)
    if doc.release_order and doc.releases:
        raise InputError(
            "give the release history once: release_order or releases, not both", file=where
        )
    order: list[str] = list(doc.release_order or [])
    if doc.releases:
        dated = sorted(
            doc.releases, key=lambda r: (r.date, history.field(r.version, "releases", where))
        )
        order = [r.version for r in dated]
    rank: dict[GdcVersion, int] = {}
    for i, text in enumerate(order):
        version = history.field(text, f"release_order[{i}]", where)
        if version in rank:
            raise InputError(f"{text} is listed twice", file=where, field=f"release_order[{i}]")
        rank[version] = i
    return History(line, rank)


def _history_doc(data: Any, where: str) -> FleetDoc:
    if not isinstance(data, dict):
        raise InputError("a release history is a mapping (release_line, release_order)", file=where)
    keys = {"release_line", "release_order", "releases"}
    picked = {k: v for k, v in data.items() if k in keys}
    if "release_order" not in picked and "release_order_synthetic" in data:
        picked["release_order"] = data["release_order_synthetic"]
    return _document({"clusters": {}, **picked}, where)


def _check_links(clusters: dict[str, Cluster], where: str) -> None:
    """Every user cluster names an existing management (admin or hybrid) cluster, and the
    links form no cycle (SPEC G2)."""
    for name, cluster in clusters.items():
        seen = [name]
        link = cluster.managed_by
        while link is not None and link in clusters:
            if link in seen:
                loop = " -> ".join([*seen[seen.index(link) :], link])
                raise InputError(
                    f"management links form a cycle: {loop}",
                    file=where,
                    field=f"clusters.{name}.managed_by",
                    rule="SPEC G2",
                )
            seen.append(link)
            link = clusters[link].managed_by
    for name, cluster in clusters.items():
        at = f"clusters.{name}.managed_by"
        if cluster.managed_by is None:
            if cluster.role == "user":
                raise InputError(
                    f"user cluster {name} names no management cluster",
                    file=where,
                    field=at,
                    rule="SPEC G2",
                    hint="add managed_by: <admin or hybrid cluster>",
                )
            continue
        if cluster.role != "user":
            raise InputError(
                f"{cluster.role} cluster {name} manages itself and cannot name a management cluster",
                file=where,
                field=at,
                rule="SPEC G2",
            )
        manager = clusters.get(cluster.managed_by)
        if manager is None:
            raise InputError(
                f"user cluster {name} names management cluster {cluster.managed_by!r}, "
                "which the fleet does not list",
                file=where,
                field=at,
                rule="SPEC G2",
                hint="clusters: " + ", ".join(sorted(clusters)),
            )
        if not manager.manages:
            raise InputError(
                f"user cluster {name} names {cluster.managed_by}, a {manager.role} cluster; "
                "only admin and hybrid clusters manage others",
                file=where,
                field=at,
                rule="SPEC G2",
            )


def load_history(path: Path) -> History:
    return parse_history(read_yaml(path, "release history"), str(path))
