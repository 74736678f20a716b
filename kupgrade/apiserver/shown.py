"""Objects as the simulated API serves them: what a real cluster's controllers would have
written on them (a budget's and a workload's status, owners' uids, a pod's container),
and the server-side Table of a list (kubectl's `get` columns, on the simulator's clock).
"""

from __future__ import annotations

from typing import Any

from kupgrade.apiserver.resources import BY_KIND, Resource
from kupgrade.cluster.objects import NODE_SYSTEM, node_info
from kupgrade.cluster.workloads import (
    OWNERS,
    PodCounts,
    owner_references,
    uid_of,
    workload_status,
)
from kupgrade.sim.changelog import ChangeLog
from kupgrade.sim.cluster import SimCluster
from kupgrade.views.tables import table_rows

PAUSE = "registry.k8s.io/pause:3.9"  # the image a simulated pod's container shows


class Shown:
    def __init__(self, sim: SimCluster, changes: ChangeLog) -> None:
        self.sim = sim
        self.store = sim.store
        self.changes = changes
        self._counts: tuple[int, PodCounts] | None = None

    def table(
        self, r: Resource, objs: list[dict[str, Any]], version: str, include: str = "Metadata"
    ) -> dict[str, Any]:
        """A server-side Table (meta.k8s.io/v1); each row carries the object as
        `includeObject` asks: its metadata (the default), all of it, or nothing."""
        objs = [self.out(o) for o in objs]  # as served: budgets with their status
        head, rows = table_rows(r.kind, objs, self.sim.now())
        return {
            "kind": "Table",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": {"resourceVersion": version},
            "columnDefinitions": [
                {
                    "name": h.title() if h != "NAME" else "Name",
                    "type": "string",
                    "format": "name" if h == "NAME" else "",
                    "description": h.lower(),
                    "priority": 0,
                }
                for h in head
            ],
            "rows": [
                {"cells": cells, **_row_object(o, include)}
                for o, cells in zip(objs, rows, strict=True)
            ],
        }

    def out(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The object as served: apiVersion and kind, a stable uid and a resourceVersion,
        its owners' uids, and the status its controller would keep (a budget's, a
        workload's)."""
        r = BY_KIND.get(obj["kind"])
        meta = dict(obj["metadata"])
        meta["uid"] = uid_of(obj)
        meta.setdefault("resourceVersion", "1")
        refs = owner_references(meta, self.store.get)
        if refs is not None:
            meta["ownerReferences"] = refs
        out = {**obj, "metadata": meta}
        if r is not None:
            out["apiVersion"] = r.group_version
        if obj["kind"] == "PodDisruptionBudget":
            out["status"] = {**(obj.get("status") or {}), **self.sim.budget(obj)}
        elif obj["kind"] in OWNERS:
            out["status"] = workload_status(obj, self._pod_counts())
        elif obj["kind"] == "Node":
            out["status"] = _with_node_info(obj.get("status") or {}, meta["name"])
        elif obj["kind"] == "Pod" and not (obj.get("spec") or {}).get("containers"):
            # A pod always has a container (kubectl logs and describe index the first);
            # the simulator's pods keep none, so one is shown as the pod's workload's.
            labels = meta.get("labels") or {}
            name = labels.get("app") or labels.get("component") or meta["name"]
            out["spec"] = {
                **(obj.get("spec") or {}),
                "containers": [{"name": name, "image": PAUSE}],
            }
        return out

    def _pod_counts(self) -> PodCounts:
        """The pods per owner, counted again only when the store has changed."""
        version = self.changes.version
        if self._counts is None or self._counts[0] != version:
            counts = PodCounts(self.store.list("Pod"), self.store.list("ReplicaSet"))
            self._counts = (version, counts)
        return self._counts[1]


def _row_object(obj: dict[str, Any], include: str) -> dict[str, Any]:
    if include == "None":
        return {}
    if include == "Object":
        return {"object": obj}
    partial = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1"}
    return {"object": {**partial, "metadata": obj["metadata"]}}


def _with_node_info(status: dict[str, Any], name: str) -> dict[str, Any]:
    """The node's status with every required nodeInfo field: a store an older kupgrade
    wrote has only the kubelet's version."""
    info = status.get("nodeInfo") or {}
    if all(k in info for k in NODE_SYSTEM):
        return status
    return {**status, "nodeInfo": {**node_info(name, info.get("kubeletVersion", "")), **info}}
