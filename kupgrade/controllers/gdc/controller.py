"""The distributed-cloud upgrade controller: `bmctl upgrade cluster` and the cluster
operator together, carried out stage by stage (SPEC G1, G6-G11).

Stages follow `plan.stages` (SPEC G8): the preflight check first (a blocking finding stops
the upgrade, the reason in status), then the spec version (G1), the control-plane load
balancer, the control-plane pool, then the connect agent, add-ons and load-balancer pool
in parallel, worker pools after the load-balancer pool, health checks repeated until they
all pass. Self-managed clusters add their own steps (G10): in place, the new
preflight-check operator first and the lifecycle controllers upgrading themselves before
the cluster operator does the rest; or through a bootstrap cluster that takes the
cluster's resources for the upgrade (they stay stale meanwhile) and hands them back.
Status fields are written in G9's order. Everything the controller knows is in the store
(objects and its state), so a killed run picks up where the last commit left it.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import msgspec

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import set_condition
from kupgrade.cluster.gdc import (
    BOOTSTRAP,
    COMPONENT_DESIRED,
    COMPONENT_LABEL,
    COMPONENT_STAGE,
    COMPONENT_VERSION,
    CONTROL_PLANE,
    LOAD_BALANCER,
    NODE_STATE,
    WORKER,
    bundled_load_balancer,
    check_object,
    node_version,
    pool_of,
    pool_role,
)
from kupgrade.cluster.objects import Obj
from kupgrade.controllers import saved
from kupgrade.controllers.gdc.request import (
    STATE,
    GdcUpgrade,
    StageRecord,
    in_progress,
    upgrade_record,
)
from kupgrade.controllers.gdc.rollout import PoolRollout, pool_status
from kupgrade.controllers.protocol import Progress
from kupgrade.plan.stages import SELF_MANAGED, Stage, StageCluster, stages
from kupgrade.versions.times import parse_rfc3339, rfc3339

COMPONENT_STAGES = frozenset(
    {
        "preflight-check-operator",
        "lifecycle-controllers",
        "cluster-operator",
        "control-plane-load-balancer",
        "connect-agent",
        "cluster-addons",
    }
)
F_CP = "controlPlaneNodepoolStatus"
F_LIFECYCLE = "anthosBareMetalLifecycleControllersManifestsVersion"
F_MANIFESTS = "anthosBareMetalManifestsVersion"
F_LB = "controlPlaneLoadBalancerNodepoolStatus"
F_VERSIONS = "anthosBareMetalVersions"
F_VERSION = "anthosBareMetalVersion"


def rolls_a_pool(stage_id: str) -> bool:
    """The stage rolls a node pool (control plane, load balancer or a worker pool)."""
    return stage_id.endswith("node-pool") or "-node-pool/" in stage_id


def one_pool_at_a_time(planned: list[Stage]) -> list[Stage]:
    """`nodePoolUpgradeStrategy.concurrentNodePools: 0`: each worker pool waits for the
    one before it (by default they upgrade together)."""
    out: list[Stage] = []
    previous = None
    for stage in planned:
        worker = stage.id.startswith("worker-node-pool/")
        out.append(replace(stage, after=[previous]) if worker and previous else stage)
        previous = stage.id if worker else previous
    return out


class GdcController:
    def __init__(self, api: Backend, health_every: float = 60.0) -> None:
        """`health_every`: seconds between rounds of health checks that did not all pass."""
        self.api = api
        self.health_every = health_every
        self._members: dict[str, list[str]] | None = None
        # Pools whose nodes changed since their status was last written: a pool's status
        # is recounted only then (a 500-node rollout syncs tens of thousands of times).
        self._nodes = api.watch("Node")
        self._changed: set[str] = set()
        self._pool_of: dict[str, str] = {}
        # The stage plan of one cluster shape: it depends only on the shape, and a pass
        # asks for it twice (a fleet rehearsal syncs its clusters tens of thousands of
        # times); planned again whenever the shape differs.
        self._planned: dict[tuple[Any, ...], list[Stage]] = {}

    # --- the loop ---------------------------------------------------------------------

    def sync(self) -> None:
        running = in_progress(self.api)
        if running is None:
            return
        st = running  # read anew from the store: the stored state is compared with it when saved
        wake: list[float] = []
        self._note_changes()
        for _ in range(50):  # a finished stage lets the next start at the same moment
            if not self._pass(st, wake) or not st.running:
                break
        self._save(st, wake)

    def _save(self, st: GdcUpgrade, wake: list[float]) -> None:
        now = self.api.now()
        due = min((w for w in wake if w > now), default=None)
        queued = st.wake_at
        if due is not None and (queued is None or queued <= now or due < queued):
            st.wake_at = due
            self.api.requeue_at(due, "Cluster", st.cluster, st.namespace)
        saved.save(self.api, STATE, st)

    def _pass(self, st: GdcUpgrade, wake: list[float]) -> bool:
        """Run every stage whose predecessors are done; True when one finished."""
        finished = False
        records = st.stages
        for stage in self.stages(st):
            info = records.get(stage.id)
            if info is not None and info.done is not None:
                continue
            if not all(a in records and records[a].done is not None for a in stage.after):
                continue
            if info is None:
                info = records[stage.id] = StageRecord(started=self.api.now())
                self.api.record(f"stage/{stage.id}", "StageStarted", stage.upgrades)
            if self._run(stage, st, wake):
                info.done = self.api.now()
                self.api.record(f"stage/{stage.id}", "StageDone", stage.upgrades)
                finished = True
            if st.failed:
                return False
        self._fields(st)
        return finished

    def stages(self, st: GdcUpgrade) -> list[Stage]:
        if st.pool:
            worker = f"worker-node-pool/{st.pool}"
            return [
                Stage("preflight", [], "cluster upgrade, network health and node checks", "none"),
                Stage(
                    worker,
                    ["preflight"],
                    "worker nodes (kubelet, container runtime)",
                    "user workloads, drained node by node",
                ),
                Stage("health-checks", [worker], "repeated until every check passes", "none"),
            ]
        cluster = self.cluster(st)
        pools = self.pools(st)
        shape = StageCluster(
            version=st.target,
            role=cluster["spec"].get("type"),
            controlPlaneLoadBalancer=bundled_load_balancer(cluster),
            loadBalancerNodePool=any(pool_role(p) == LOAD_BALANCER for p in pools),
            workerNodePools=[
                p["metadata"]["name"]
                for p in pools
                if pool_role(p) == WORKER and p["metadata"]["name"] not in st.leave_pools
            ],
        )
        strategy = cluster["spec"].get("nodePoolUpgradeStrategy") or {}
        one_by_one = strategy.get("concurrentNodePools", 1) == 0
        # The whole shape, encoded: every field of it counts, whatever fields it gains.
        key = (msgspec.msgpack.encode(shape), st.method, one_by_one)
        planned = self._planned.get(key)
        if planned is None:
            planned = stages(shape, st.method)
            if one_by_one:
                planned = one_pool_at_a_time(planned)
            self._planned = {key: planned}  # one shape at a time: nothing grows
        return planned

    def _run(self, stage: Stage, st: GdcUpgrade, wake: list[float]) -> bool:
        if stage.id in COMPONENT_STAGES:
            return self._components(stage.id, st.target)
        if stage.id == "preflight":
            return self._check("PreflightCheck", st, wake)
        if stage.id == "health-checks":
            return self._check("HealthCheck", st, wake)
        if stage.id == "set-spec-version":
            return self._set_spec(st)
        if stage.id == "bootstrap-pivot":
            return self._pivot(st, to_bootstrap=True)
        if stage.id == "bootstrap-pivot-back":
            return self._pivot(st, to_bootstrap=False)
        return self._pool(stage.id, st, wake)

    # --- objects ------------------------------------------------------------------------

    def namespace(self, st: GdcUpgrade) -> str:
        """Where the Cluster and NodePools are read and written: the bootstrap cluster's
        copy while it owns them (SPEC G10), else the cluster's own namespace."""
        return (BOOTSTRAP if st.pivoted else "") + st.namespace

    def cluster(self, st: GdcUpgrade) -> Obj:
        found = self.api.get("Cluster", st.cluster, self.namespace(st))
        assert found is not None, "the Cluster object is gone"
        return found

    def pools(self, st: GdcUpgrade) -> list[Obj]:
        ns = self.namespace(st)
        return [p for p in self.api.list("NodePool") if p["metadata"].get("namespace") == ns]

    def pool(self, st: GdcUpgrade, stage_id: str) -> Obj:
        role = {"control-plane-node-pool": CONTROL_PLANE, "load-balancer-node-pool": LOAD_BALANCER}
        for p in self.pools(st):
            if stage_id in role and pool_role(p) == role[stage_id]:
                return p
            if stage_id == f"worker-node-pool/{p['metadata']['name']}":
                return p
        raise AssertionError(f"no node pool for stage {stage_id}")

    def members(self, pool: str) -> list[Obj]:
        """The pool's nodes (membership is fixed: looked up once per controller)."""
        if self._members is None:
            self._members = {}
            for node in self.api.list("Node"):
                self._members.setdefault(pool_of(node), []).append(node["metadata"]["name"])
                self._pool_of[node["metadata"]["name"]] = pool_of(node)
        return [
            n
            for name in self._members.get(pool, [])
            if (n := self.api.get("Node", name)) is not None
        ]

    # --- stages -------------------------------------------------------------------------

    def _components(self, stage: str, target: str) -> bool:
        """Ask each component of the stage for the target; done when all run it."""
        done = True
        for dep in self.api.list("Deployment"):
            notes = dep["metadata"].get("annotations") or {}
            if COMPONENT_LABEL not in (dep["metadata"].get("labels") or {}):
                continue
            if notes.get(COMPONENT_STAGE) != stage:
                continue
            if notes.get(COMPONENT_DESIRED) != target:
                notes[COMPONENT_DESIRED] = target
                self.api.write(dep)
            done = done and notes.get(COMPONENT_VERSION) == target
        return done

    def _check(self, kind: str, st: GdcUpgrade, wake: list[float]) -> bool:
        """A PreflightCheck (once: a failure stops the upgrade) or a HealthCheck (again
        every `health_every` seconds until it passes)."""
        ns = self.namespace(st)
        name = f"{st.cluster}-upgrade-{st.serial}"
        obj = self.api.get(kind, name, ns)
        if obj is None:
            made = check_object(kind, st.cluster, name, st.target, rfc3339(self.api.now()))
            made["metadata"]["namespace"] = ns
            self.api.write(made)
            return False
        status = obj.get("status") or {}
        if "pass" not in status or status.get("round", 1) != obj["spec"].get("round", 1):
            return False  # the checkers are still at it
        if status["pass"]:
            return True
        if kind == "PreflightCheck":
            self._fail(st, f"preflight check {name} failed: {status.get('message', '')}")
            return False
        due = parse_rfc3339(status["completionTime"]) + self.health_every
        if self.api.now() < due:
            wake.append(due)
            return False
        obj["spec"]["round"] = int(obj["spec"].get("round", 1)) + 1
        self.api.write(obj)
        return False

    def _set_spec(self, st: GdcUpgrade) -> bool:
        """SPEC G1: the target goes into spec.anthosBareMetalVersion; worker pools that
        are not left behind follow the cluster."""
        cluster = self.cluster(st)
        cluster["spec"]["anthosBareMetalVersion"] = st.target
        cluster["status"]["clusterState"] = "Reconciling"
        set_condition(
            cluster["status"].setdefault("conditions", []),
            {
                "type": "Reconciling",
                "status": "True",
                "reason": "ClusterUpgradeInProgress",
                "message": f"upgrading to {st.target}",
            },
            rfc3339(self.api.now()),
        )
        self.api.write(cluster)
        for pool in self.pools(st):
            if pool_role(pool) == WORKER and pool["metadata"]["name"] not in st.leave_pools:
                pool["spec"]["anthosBareMetalVersion"] = st.target
                self.api.write(pool)
        return True

    def _pool(self, stage_id: str, st: GdcUpgrade, wake: list[float]) -> bool:
        pool = self.pool(st, stage_id)
        if st.pool and pool["spec"].get("anthosBareMetalVersion") != st.target:
            pool["spec"]["anthosBareMetalVersion"] = st.target  # a selective upgrade
            self.api.write(pool)
        name = pool["metadata"]["name"]
        done = PoolRollout(self.api, pool, self.members(name), st.target, wake).step()
        self._note_changes()
        if name in self._changed:
            status = {
                **pool_status(self.members(name), st.target),
                "conditions": pool["status"].get("conditions") or [],
            }
            if pool["status"] != status:
                pool["status"] = status
                self.api.write(pool)
            self._changed.discard(name)
        return done

    def _note_changes(self) -> None:
        """Which pools' nodes changed (a new watch starts with every node: all pools)."""
        keys = self._nodes.drain()
        self.members("")
        self._changed.update(self._pool_of.get(key[2], "") for key in keys)

    def _pivot(self, st: GdcUpgrade, *, to_bootstrap: bool) -> bool:
        """SPEC G10: move the Cluster and NodePools to the bootstrap cluster (the
        cluster's own copies stay as they were), or back at the end."""
        objs = [self.cluster(st), *self.pools(st)]
        source = self.namespace(st)
        st.pivoted = to_bootstrap
        target = self.namespace(st)
        for obj in objs:
            moved = copy.deepcopy(obj)
            moved["metadata"]["namespace"] = target
            self.api.write(moved)
        if not to_bootstrap:  # the bootstrap cluster goes, with everything it held
            for kind in ("Cluster", "NodePool", "PreflightCheck", "HealthCheck"):
                for obj in self.api.list(kind):
                    if obj["metadata"].get("namespace") == source:
                        self.api.delete(kind, obj["metadata"]["name"], source)
        self.api.record(
            f"cluster/{st.cluster}",
            "Pivot" if to_bootstrap else "PivotBack",
            "the bootstrap cluster owns the cluster's resources for the upgrade"
            if to_bootstrap
            else "the upgraded cluster owns its resources again; the bootstrap cluster is deleted",
        )
        return True

    def _fail(self, st: GdcUpgrade, why: str) -> None:
        st.failed = why
        cluster = self.cluster(st)
        set_condition(
            cluster["status"].setdefault("conditions", []),
            {
                "type": "Reconciling",
                "status": "False",
                "reason": "PreflightCheckFailed",
                "message": why,
            },
            rfc3339(self.api.now()),
        )
        self.api.write(cluster)
        self.api.record(f"cluster/{st.cluster}", "UpgradeBlocked", why)

    # --- SPEC G9: status fields in order ----------------------------------------------

    def _fields(self, st: GdcUpgrade) -> None:
        done = {k for k, v in st.stages.items() if v.done is not None}
        ids = [s.id for s in self.stages(st)]
        if st.pool:
            if "health-checks" in done:
                self._complete(st)
            return
        cluster = self.cluster(st)
        pools = {pool_role(p): p for p in self.pools(st) if pool_role(p) != WORKER}
        wanted: list[tuple[str, bool, Any]] = [
            (F_CP, "control-plane-node-pool" in done, lambda: dict(pools[CONTROL_PLANE]["status"])),
        ]
        second: list[tuple[str, bool, Any]] = [
            (F_MANIFESTS, "cluster-addons" in done, lambda: st.target),
            (
                F_LB,
                "load-balancer-node-pool" in done or "load-balancer-node-pool" not in ids,
                lambda: dict(pools[LOAD_BALANCER]["status"]) if LOAD_BALANCER in pools else {},
            ),
        ]
        if cluster["spec"].get("type") in SELF_MANAGED:
            second.insert(0, (F_LIFECYCLE, True, lambda: st.target))
        pools_done = all(i in done for i in ids if rolls_a_pool(i))
        groups = [
            wanted,
            second,
            [(F_VERSIONS, pools_done, self._versions)],
            [(F_VERSION, "health-checks" in done, lambda: st.target)],
        ]
        for group in groups:
            for field, ready, value in group:
                if field not in st.fields and ready:
                    self._write_field(st, cluster, field, value())
            if not all(f in st.fields for f, _, _ in group):
                return
        if all(i in done for i in ids):  # a bootstrap cluster hands its copies back last
            self._complete(st)

    def _write_field(self, st: GdcUpgrade, cluster: Obj, field: str, value: Any) -> None:
        cluster["status"][field] = value
        st.fields.append(field)
        self.api.write(cluster)
        shown = value if isinstance(value, str) else "set"
        self.api.record(f"cluster/{st.cluster}", "StatusField", f"status.{field}: {shown}")

    def _versions(self) -> dict[str, int]:
        """status.anthosBareMetalVersions: how many nodes run each version."""
        counts: dict[str, int] = {}
        for node in self.api.list("Node"):
            version = node_version(node)
            counts[version] = counts.get(version, 0) + 1
        return dict(sorted(counts.items()))

    def _complete(self, st: GdcUpgrade) -> None:
        cluster = self.cluster(st)
        if not st.pool:
            cluster["status"]["clusterState"] = "Running"
            set_condition(
                cluster["status"].setdefault("conditions", []),
                {"type": "Reconciling", "status": "False", "reason": "ReconciliationCompleted"},
                rfc3339(self.api.now()),
            )
            self.api.write(cluster)
        st.completed = True
        st.completed_at = self.api.now()
        what = f"node pool {st.pool}" if st.pool else "cluster"
        self.api.record(f"cluster/{st.cluster}", "Completed", f"{what} upgraded to {st.target}")

    # --- what the live view shows -------------------------------------------------------

    def progress(self) -> list[Progress]:
        """(label, done, total) per stage of the upgrade under way or last run: nodes of
        a pool at the target, components of a stage at the target, or the stage itself."""
        st = upgrade_record(self.api)
        if st is None:
            return []
        rows = []
        for stage in self.stages(st):
            record = st.stages.get(stage.id)
            done, total = int(record is not None and record.done is not None), 1
            if rolls_a_pool(stage.id):
                nodes = self.members(self.pool(st, stage.id)["metadata"]["name"])
                total = len(nodes)
                done = sum(
                    1
                    for n in nodes
                    if node_version(n) == st.target
                    and not (n["metadata"].get("annotations") or {}).get(NODE_STATE)
                )
            elif stage.id in COMPONENT_STAGES:
                parts = [
                    d["metadata"].get("annotations") or {}
                    for d in self.api.list("Deployment")
                    if (d["metadata"].get("annotations") or {}).get(COMPONENT_STAGE) == stage.id
                ]
                total = len(parts) or 1
                done = sum(1 for a in parts if a.get(COMPONENT_VERSION) == st.target)
            rows.append(Progress(f"stage {stage.id}", done, total or 1))
        return rows
