"""Distributed-cloud version rules (SPEC G2-G4) and the verdict on one upgrade request.

Minor distance is counted along the release line (1.16 -> 1.28 is one minor). A state is
checked per management group (a management cluster and its user clusters) and per
cluster (its node pools), so a step only needs its own group checked again: that keeps
fleet plans linear in the fleet's size.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from kupgrade.errors import InputError
from kupgrade.skew.fleet import PREVIEW_TWO_MINOR_POOLS, Cluster, Fleet, History
from kupgrade.skew.verdict import Verdict, Violation
from kupgrade.versions import GdcVersion

WARNINGS = frozenset({"G2.user-mixed-minors"})
LAST_STRICT = (1, 28)  # management clusters up to 1.28: n-1 and one shared minor (SPEC G2)


def minor_of(v: GdcVersion) -> str:
    return f"{v.major}.{v.minor}"


def strict(v: GdcVersion) -> bool:
    return (v.major, v.minor) <= LAST_STRICT


def user_limit(manager: GdcVersion) -> int:
    """SPEC G2: how many release-line minors a user cluster may trail its manager."""
    return 1 if strict(manager) else 2


def pool_limit(cluster: Cluster) -> int:
    """SPEC G4: how many minors a node pool may trail its cluster."""
    if (cluster.version.major, cluster.version.minor) >= (1, 29):
        return 2
    if (cluster.version.major, cluster.version.minor) == (1, 28) and cluster.preview_pools:
        return 2
    return 1


def user_rules(manager: Cluster, user: Cluster, history: History) -> Iterator[Violation]:
    """SPEC G2: a user cluster is never newer than its manager, nor too far behind."""
    obj, mgr = f"cluster/{user.name}", f"cluster/{manager.name}"
    if user.version > manager.version:
        yield Violation(
            "G2.user-newer",
            obj,
            f"{obj} at {user.version} is newer than its management cluster {mgr} at "
            f"{manager.version}",
            f"upgrade {mgr} to {user.version} or later first",
            (mgr,),
        )
        return
    behind, limit = history.distance(user.version, manager.version), user_limit(manager.version)
    if behind > limit:
        yield Violation(
            "G2.user-too-old",
            obj,
            f"{obj} at {user.version} is {behind} release-line minors behind {mgr} at "
            f"{manager.version}; a management cluster at {minor_of(manager.version)} allows "
            f"{limit}",
            f"upgrade {obj} one minor at a time to within {limit} of "
            f"{minor_of(manager.version)}; in a plan, before {mgr} moves to a new minor",
            (mgr,),
        )


def mixed_minors(manager: Cluster, users: list[Cluster]) -> Iterator[Violation]:
    """SPEC G2 (warning): up to 1.28 a manager's user clusters should share one minor; the
    state is legal in passing, and blocks the manager's next minor (G3.users-first)."""
    minors = sorted({(u.version.major, u.version.minor) for u in users})
    if strict(manager.version) and len(minors) > 1:
        obj = f"cluster/{manager.name}"
        yield Violation(
            "G2.user-mixed-minors",
            obj,
            f"the user clusters of {obj} run {len(minors)} minors ("
            + ", ".join(f"{a}.{b}" for a, b in minors)
            + f"); a management cluster at {minor_of(manager.version)} expects one",
            "bring every user cluster to the same minor before the management cluster's next "
            "minor upgrade",
            tuple(f"cluster/{u.name}" for u in users),
        )


def pool_rules(cluster: Cluster, history: History) -> Iterator[Violation]:
    """SPEC G4: cluster >= node pool, bounded skew, nothing released after the cluster."""
    for name, version in cluster.pools.items():
        yield from pool_rule(cluster, name, version, history)


def pool_rule(
    cluster: Cluster, name: str, version: GdcVersion, history: History
) -> Iterator[Violation]:
    obj, owner = f"nodepool/{cluster.name}/{name}", f"cluster/{cluster.name}"
    if version > cluster.version:
        yield Violation(
            "G4.pool-newer",
            obj,
            f"{obj} at {version} is newer than its cluster at {cluster.version}",
            f"upgrade {owner} to {version} or later first, or keep the pool at "
            f"{cluster.version} or older",
            (owner,),
        )
        return
    behind, limit = history.distance(version, cluster.version), pool_limit(cluster)
    if behind > limit:
        preview = (
            f"; enable the preview with the annotation {PREVIEW_TWO_MINOR_POOLS}: enable"
            if (cluster.version.major, cluster.version.minor) == (1, 28) and behind == 2
            else ""
        )
        yield Violation(
            "G4.pool-skew",
            obj,
            f"{obj} at {version} is {behind} release-line minors behind its cluster at "
            f"{cluster.version}; {limit} allowed",
            f"upgrade {obj} to {cluster.version}{preview}",
            (owner,),
        )
    if history.released_after(version, cluster.version):
        yield Violation(
            "G4.pool-released-after",
            obj,
            f"{obj} at {version} was released after its cluster's version {cluster.version}",
            f"upgrade {obj} to {cluster.version}, or the cluster to a release that came out "
            f"after {version}",
            (owner,),
        )


def check_group(fleet: Fleet, head: str) -> list[Violation]:
    """Violations and warnings of one management group (or one standalone cluster)."""
    manager = fleet.clusters[head]
    users = [fleet.clusters[u] for u in fleet.users.get(head, [])]
    out = list(pool_rules(manager, fleet.history))
    for user in users:
        out.extend(user_rules(manager, user, fleet.history))
        out.extend(pool_rules(user, fleet.history))
    out.extend(mixed_minors(manager, users))
    return out


def heads(fleet: Fleet) -> Iterable[str]:
    return (name for name, c in fleet.clusters.items() if c.managed_by is None)


def check_fleet(fleet: Fleet) -> list[Violation]:
    """Every violation and warning, group by group in fleet order."""
    return [v for head in heads(fleet) for v in check_group(fleet, head)]


# --- one request (SPEC G3) ---------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """A cluster upgrade (pool is None; bmctl is the tool used) or a node-pool upgrade."""

    cluster: str
    to: GdcVersion
    pool: str | None = None
    bmctl: GdcVersion | None = None  # None: the bmctl of the target version
    leave_pools: tuple[str, ...] = ()

    @property
    def object(self) -> str:
        return f"nodepool/{self.cluster}/{self.pool}" if self.pool else f"cluster/{self.cluster}"


def apply_request(fleet: Fleet, request: Request) -> Fleet:
    """The fleet after the request: a cluster upgrade takes its pools along except those
    left behind (a selective upgrade)."""
    cluster = fleet.clusters[request.cluster]
    if request.pool is not None:
        pools = {**cluster.pools, request.pool: request.to}
        return fleet.with_cluster(replace(cluster, pools=pools))
    pools = {p: v if p in request.leave_pools else request.to for p, v in cluster.pools.items()}
    return fleet.with_cluster(replace(cluster, version=request.to, pools=pools))


def own_rules(fleet: Fleet, request: Request) -> list[Violation]:
    """What the request breaks by itself (SPEC G3), whatever state it leaves."""
    cluster = fleet.clusters[request.cluster]
    obj, to = request.object, request.to
    current = cluster.pools[request.pool] if request.pool else cluster.version
    out: list[Violation] = []
    if to < current:
        out.append(
            Violation(
                "G3.downgrade",
                obj,
                f"{obj} would go down from {current} to {to}",
                f"pick a version at or above {current}; downgrades are not supported",
            )
        )
    if request.pool is not None:
        return out
    bmctl = request.bmctl or to
    if bmctl != to:
        out.append(
            Violation(
                "G3.tool-version",
                obj,
                f"bmctl {bmctl} can only upgrade to {bmctl}, not {to}",
                f"download bmctl {to} and run the upgrade with it",
            )
        )
    ahead = fleet.history.distance(current, to)
    if ahead >= 2:
        out.append(
            Violation(
                "G3.skip-minor",
                obj,
                f"{obj} would move {ahead} release-line minors ({minor_of(current)} to "
                f"{minor_of(to)}); one at a time",
                f"upgrade to the next minor after {minor_of(current)} first",
            )
        )
    if cluster.manages and ahead >= 1:
        out.extend(users_first(fleet, cluster, to))
    return out


def users_first(fleet: Fleet, manager: Cluster, to: GdcVersion) -> Iterator[Violation]:
    """SPEC G3: before a manager moves to a new minor its users must be ready for it."""
    for name in fleet.users.get(manager.name, []):
        late = user_ready(manager, fleet.clusters[name], to, fleet.history)
        if late is not None:
            yield late


def user_ready(
    manager: Cluster, user: Cluster, to: GdcVersion, history: History
) -> Violation | None:
    """SPEC G3 for one user cluster: target minor up to 1.28, the user must be on the
    manager's current minor; from 1.29, within 2 minors of the target."""
    obj = f"cluster/{manager.name}"
    if strict(to):
        ready = (user.version.major, user.version.minor) == (
            manager.version.major,
            manager.version.minor,
        )
        need = f"on its current minor {minor_of(manager.version)}"
    else:
        ready = history.distance(user.version, to) <= 2
        need = f"within 2 minors of {minor_of(to)}"
    if ready:
        return None
    return Violation(
        "G3.users-first",
        obj,
        f"{obj} cannot move to {minor_of(to)} while cluster/{user.name} is at "
        f"{user.version}: its user clusters must be {need}",
        f"upgrade cluster/{user.name} to {minor_of(manager.version)} first",
        (f"cluster/{user.name}",),
    )


def judge_request(fleet: Fleet, request: Request) -> Verdict:
    """The request's verdict (README section 1): its own refusals plus the violations the
    state after has and the state before had not."""
    _known(fleet, request)
    head = fleet.group(request.cluster)[0]
    before = {(v.id, v.object) for v in check_group(fleet, head)}
    after = check_group(apply_request(fleet, request), head)
    new = [v for v in after if (v.id, v.object) not in before]
    refused = own_rules(fleet, request) + [v for v in new if v.id not in WARNINGS]
    warned = [v for v in new if v.id in WARNINGS]
    return Verdict(
        sorted({v.id for v in refused}), sorted({v.id for v in warned}), refused + warned
    )


def _known(fleet: Fleet, request: Request) -> None:
    cluster = fleet.clusters.get(request.cluster)
    if cluster is None:
        raise InputError(
            f"the fleet has no cluster {request.cluster!r}",
            field="--step",
            hint="clusters: " + ", ".join(fleet.clusters),
        )
    for pool in (request.pool,) if request.pool else request.leave_pools:
        if pool not in cluster.pools:
            raise InputError(
                f"cluster {request.cluster} has no node pool {pool!r}",
                field="--step" if request.pool else "--leave-pools",
                hint="pools: " + (", ".join(cluster.pools) or "none"),
            )


def parse_request(
    text: str, fleet: Fleet, *, bmctl: str | None = None, leave_pools: list[str] | None = None
) -> Request:
    """`cluster/NAME -> VERSION` or `nodepool/CLUSTER/POOL -> VERSION`."""
    target, arrow, version = text.partition("->")
    kind, _, rest = target.strip().partition("/")
    if not arrow or kind not in ("cluster", "nodepool") or not rest or not version.strip():
        raise InputError(
            f"{text!r} is not a distributed-cloud step",
            field="--step",
            hint="write 'cluster/NAME -> 1.29.100-gke.251' or 'nodepool/CLUSTER/POOL -> VERSION'",
        )
    to = fleet.history.field(version.strip(), "--step")
    if kind == "nodepool":
        cluster, _, pool = rest.partition("/")
        if not pool:
            raise InputError(
                f"{text!r} names no pool", field="--step", hint="nodepool/CLUSTER/POOL"
            )
        if bmctl or leave_pools:
            raise InputError(
                "--bmctl and --leave-pools apply to cluster steps only", field="--step"
            )
        request = Request(cluster, to, pool=pool)
    else:
        tool = fleet.history.field(bmctl, "--bmctl") if bmctl else None
        request = Request(rest, to, bmctl=tool, leave_pools=tuple(leave_pools or ()))
    _known(fleet, request)
    return request
