"""The columns `oc get` and `kubectl get` print for each kind kupgrade serves, and the
names those clients accept for it: one source for `kupgrade get` and for the Table
output of the Kubernetes API facade (`Accept: application/json;as=Table`). The pool
columns are SPEC E6's; ClusterVersion's follow `oc adm upgrade` (SPEC A)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kupgrade.cluster import mco
from kupgrade.cluster.conditions import find
from kupgrade.cluster.gdc import (
    BOOTSTRAP,
    NODE_VERSION,
    cluster_columns,
    nodepool_columns,
    preflight_columns,
)
from kupgrade.cluster.kubeadm import POOL_LABEL
from kupgrade.cluster.olm import OLM_HEADS, olm_columns
from kupgrade.versions.times import parse_rfc3339

# The ClusterVersion and MachineConfigPool columns come from their controllers' modules,
# imported in their branches below: `kupgrade get nodes` should not pay ~20 ms of its
# start for the controllers (bench/cli_start.py).

# kind -> (singular, plural, short names, API group): the names `oc get` accepts, as the
# API server's discovery lists them (config.openshift.io and machineconfiguration CRDs,
# core nodes), also qualified by group (`clusteroperators.config.openshift.io`).
RESOURCES = {
    "ClusterVersion": ("clusterversion", "clusterversions", (), "config.openshift.io"),
    "ClusterOperator": ("clusteroperator", "clusteroperators", ("co",), "config.openshift.io"),
    "MachineConfigPool": (
        "machineconfigpool",
        "machineconfigpools",
        ("mcp",),
        "machineconfiguration.openshift.io",
    ),
    "Node": ("node", "nodes", ("no",), ""),
    "Cluster": ("cluster", "clusters", (), "baremetal.cluster.gke.io"),
    "NodePool": ("nodepool", "nodepools", (), "baremetal.cluster.gke.io"),
    "PreflightCheck": ("preflightcheck", "preflightchecks", (), "baremetal.cluster.gke.io"),
    "HealthCheck": ("healthcheck", "healthchecks", (), "baremetal.cluster.gke.io"),
    "CatalogSource": ("catalogsource", "catalogsources", ("catsrc",), "operators.coreos.com"),
    "Subscription": ("subscription", "subscriptions", ("sub", "subs"), "operators.coreos.com"),
    "InstallPlan": ("installplan", "installplans", ("ip",), "operators.coreos.com"),
    "ClusterServiceVersion": (
        "clusterserviceversion",
        "clusterserviceversions",
        ("csv", "csvs"),
        "operators.coreos.com",
    ),
    "Pod": ("pod", "pods", ("po",), ""),
    "PodDisruptionBudget": ("poddisruptionbudget", "poddisruptionbudgets", ("pdb",), "policy"),
    "Deployment": ("deployment", "deployments", ("deploy",), "apps"),
    "ReplicaSet": ("replicaset", "replicasets", ("rs",), "apps"),
    "DaemonSet": ("daemonset", "daemonsets", ("ds",), "apps"),
    "StatefulSet": ("statefulset", "statefulsets", ("sts",), "apps"),
    "Event": ("event", "events", ("ev",), ""),
}
# Distributed-cloud kinds, listed across namespaces as `kubectl get -A` does.
GDC_COLUMNS = {
    "Cluster": cluster_columns,
    "NodePool": nodepool_columns,
    "PreflightCheck": preflight_columns,
    "HealthCheck": preflight_columns,
}


def _names() -> dict[str, str]:
    names: dict[str, str] = {}
    for kind, (singular, plural, shorts, group) in RESOURCES.items():
        for name in (singular, plural, *shorts):
            names[name] = kind
            if group:
                names[f"{name}.{group}"] = kind
    return names


KINDS = _names()


def age(created: str, now: float) -> str:
    """How long ago `created` was, as kubectl and oc print an age."""
    return human_duration(now - parse_rfc3339(created) if created else 0.0)


def human_duration(seconds_ago: float) -> str:
    """apimachinery's duration.HumanDuration (pkg/util/duration/duration.go), the one
    format of every AGE and LAST SEEN column: 90s, 5m30s, 3h20m, 5d3h, 2y45d."""
    seconds = int(seconds_ago)
    if seconds < -1:
        return "<invalid>"
    if seconds < 120:
        return f"{max(seconds, 0)}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def oc_rows(kind: str, objs: list[dict[str, Any]], now: float) -> tuple[list[str], list[list[str]]]:
    """`kupgrade get`'s columns: oc's, and NAMESPACE first for the namespaced kinds it
    lists across namespaces."""
    if kind in OTHER_COLUMNS or kind == "Event":
        head, rows = table_rows(kind, objs, now)
        return ["NAMESPACE", *head], [
            [o["metadata"].get("namespace", ""), *r] for o, r in zip(objs, rows, strict=True)
        ]
    if kind in GDC_COLUMNS:
        columns = GDC_COLUMNS[kind]
        sample = list(columns({"spec": {}, "status": {}}))
        return ["NAMESPACE", "NAME", *sample, "AGE"], [
            [
                o["metadata"].get("namespace", "").removeprefix(BOOTSTRAP),
                o["metadata"]["name"],
                *columns(o).values(),
                age(o["metadata"].get("creationTimestamp", ""), now),
            ]
            for o in objs
        ]
    if kind == "Node" and any(
        NODE_VERSION in (o["metadata"].get("annotations") or {})
        or POOL_LABEL in (o["metadata"].get("labels") or {})  # a kubeadm cluster's
        for o in objs
    ):
        return kubectl_nodes(objs, now)
    return OPENSHIFT_ROWS.get(kind, _openshift_nodes)(objs, now)


def _clusterversions(objs: list[dict[str, Any]], now: float) -> tuple[list[str], list[list[str]]]:
    from kupgrade.controllers.version.status import clusterversion_columns  # noqa: PLC0415

    head = ["NAME", "VERSION", "AVAILABLE", "PROGRESSING", "SINCE", "STATUS"]
    rows = []
    for o in objs:
        c = clusterversion_columns(o["status"])
        since = age(c["SINCE"], now) if c["SINCE"] else ""
        rows.append(
            [
                o["metadata"]["name"],
                c["VERSION"],
                c["AVAILABLE"],
                c["PROGRESSING"],
                since,
                c["STATUS"],
            ]
        )
    return head, rows


def _clusteroperators(objs: list[dict[str, Any]], now: float) -> tuple[list[str], list[list[str]]]:
    head = ["NAME", "VERSION", "AVAILABLE", "PROGRESSING", "DEGRADED", "SINCE", "MESSAGE"]
    rows = []
    for o in objs:
        conds = o["status"].get("conditions") or []
        version = next(
            (v["version"] for v in o["status"].get("versions") or [] if v["name"] == "operator"),
            "",
        )
        status = [
            (find(conds, k) or {}).get("status", "")
            for k in ("Available", "Progressing", "Degraded")
        ]
        times = [c.get("lastTransitionTime", "") for c in conds if c.get("lastTransitionTime")]
        message = next(
            (c.get("message", "") for c in conds if c.get("message") and c["status"] != "False"),
            "",
        )
        rows.append(
            [
                o["metadata"]["name"],
                version,
                *status,
                age(max(times), now) if times else "",
                message,
            ]
        )
    return head, rows


def _machineconfigpools(
    objs: list[dict[str, Any]], now: float
) -> tuple[list[str], list[list[str]]]:
    from kupgrade.controllers.nodes.pool import MCP_COLUMNS, mcp_columns  # noqa: PLC0415

    head = ["NAME", *MCP_COLUMNS, "AGE"]
    rows = [
        [
            o["metadata"]["name"],
            *[str(v) for v in mcp_columns(o).values()],
            age(o["metadata"].get("creationTimestamp", ""), now),
        ]
        for o in objs
    ]
    return head, rows


def _openshift_nodes(objs: list[dict[str, Any]], now: float) -> tuple[list[str], list[list[str]]]:
    """`oc get nodes` with the machine-config daemon's columns."""
    head = ["NAME", "STATUS", "ROLES", "AGE", "CONFIG", "STATE"]
    rows: list[list[str]] = []
    for o in objs:
        ready = (find(o["status"].get("conditions"), "Ready") or {}).get("status") == "True"
        node_status = "Ready" if ready else "NotReady"
        if o["spec"].get("unschedulable"):
            node_status += ",SchedulingDisabled"
        roles = ",".join(
            sorted(
                k.split("/", 1)[1]
                for k in o["metadata"].get("labels", {})
                if k.startswith("node-role.kubernetes.io/")
            )
        )
        notes = o["metadata"].get("annotations", {})
        rows.append(
            [
                o["metadata"]["name"],
                node_status,
                roles,
                age(o["metadata"].get("creationTimestamp", ""), now),
                notes.get(mco.CURRENT, ""),
                notes.get(mco.STATE, ""),
            ]
        )
    return head, rows


Rows = Callable[[list[dict[str, Any]], float], tuple[list[str], list[list[str]]]]
# oc's columns of OpenShift's own kinds; any other kind falls back to the nodes' columns.
OPENSHIFT_ROWS: dict[str, Rows] = {
    "ClusterVersion": _clusterversions,
    "ClusterOperator": _clusteroperators,
    "MachineConfigPool": _machineconfigpools,
}


def node_status(node: dict[str, Any]) -> str:
    ready = (find(node["status"].get("conditions"), "Ready") or {}).get("status") == "True"
    text = "Ready" if ready else "NotReady"
    return text + (",SchedulingDisabled" if node["spec"].get("unschedulable") else "")


def node_roles(node: dict[str, Any]) -> str:
    roles = sorted(
        k.split("/", 1)[1]
        for k in node["metadata"].get("labels", {})
        if k.startswith("node-role.kubernetes.io/")
    )
    return ",".join(roles) or "<none>"


def kubectl_nodes(objs: list[dict[str, Any]], now: float) -> tuple[list[str], list[list[str]]]:
    """`kubectl get nodes`: NAME, STATUS, ROLES, AGE and the kubelet's VERSION."""
    return ["NAME", "STATUS", "ROLES", "AGE", "VERSION"], [
        [
            o["metadata"]["name"],
            node_status(o),
            node_roles(o),
            age(o["metadata"].get("creationTimestamp", ""), now),
            str((o["status"].get("nodeInfo") or {}).get("kubeletVersion", "")),
        ]
        for o in objs
    ]


def oc_table(kind: str, objs: list[dict[str, Any]], now: float) -> str:
    head, rows = oc_rows(kind, objs, now)
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)
    ]
    return "".join(
        "   ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() + "\n"
        for line in [head, *rows]
    )


def _pod_columns(pod: dict[str, Any], now: float) -> list[str]:
    conditions = pod.get("status", {}).get("conditions")
    ready = (find(conditions, "Ready") or {}).get("status") == "True"
    phase = pod.get("status", {}).get("phase", "Pending")
    status = "Terminating" if pod["metadata"].get("deletionTimestamp") else phase
    return [f"{int(ready)}/1", status, "0", age(pod["metadata"].get("creationTimestamp", ""), now)]


def _pdb_columns(pdb: dict[str, Any], now: float) -> list[str]:
    spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
    return [
        str(spec.get("minAvailable", "N/A")),
        str(spec.get("maxUnavailable", "N/A")),
        str(status.get("disruptionsAllowed", 0)),
        age(pdb["metadata"].get("creationTimestamp", ""), now),
    ]


def _made(obj: dict[str, Any], now: float) -> str:
    return age(obj["metadata"].get("creationTimestamp", ""), now)


def _deployment_columns(d: dict[str, Any], now: float) -> list[str]:
    spec, status = d.get("spec") or {}, d.get("status") or {}
    ready = f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}"
    return [
        ready,
        str(status.get("updatedReplicas", 0)),
        str(status.get("availableReplicas", 0)),
        _made(d, now),
    ]


def _replicaset_columns(rs: dict[str, Any], now: float) -> list[str]:
    spec, status = rs.get("spec") or {}, rs.get("status") or {}
    counts = (spec.get("replicas", 1), status.get("replicas", 0), status.get("readyReplicas", 0))
    return [*map(str, counts), _made(rs, now)]


def _daemonset_columns(ds: dict[str, Any], now: float) -> list[str]:
    status = ds.get("status") or {}
    fields = (
        "desiredNumberScheduled",
        "currentNumberScheduled",
        "numberReady",
        "updatedNumberScheduled",
        "numberAvailable",
    )
    selector = ((ds.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeSelector")
    shown = ",".join(f"{k}={v}" for k, v in (selector or {}).items()) or "<none>"
    return [*(str(status.get(f, 0)) for f in fields), shown, _made(ds, now)]


def _statefulset_columns(sts: dict[str, Any], now: float) -> list[str]:
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    return [f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}", _made(sts, now)]


def _lease_columns(lease: dict[str, Any], now: float) -> list[str]:
    return [str((lease.get("spec") or {}).get("holderIdentity") or ""), _made(lease, now)]


def event_rows(events: list[dict[str, Any]], now: float) -> tuple[list[str], list[list[str]]]:
    """kubectl's event columns (pkg/printers/internalversion printEvent): LAST SEEN from
    lastTimestamp (or eventTime), the involved object as kind/name, on the same clock as
    every other age here."""
    head = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    rows = []
    for e in events:
        seen = e.get("lastTimestamp") or e.get("eventTime") or ""
        involved = e.get("involvedObject") or {}
        what = f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"
        rows.append(
            [age(seen, now), e.get("type", ""), e.get("reason", ""), what, e.get("message", "")]
        )
    return head, rows


def _olm(kind: str) -> tuple[list[str], Any]:
    """oc's columns of an OLM kind (its CRDs' additionalPrinterColumns)."""
    head = OLM_HEADS[kind]

    def columns(obj: dict[str, Any], now: float) -> list[str]:
        cells = olm_columns(kind, obj)
        if head[-1] == "AGE":
            cells.append(age(obj["metadata"].get("creationTimestamp", ""), now))
        return cells

    return head, columns


# kubectl's columns of the core kinds (its printers in pkg/printers/internalversion).
OTHER_COLUMNS = {
    **{kind: _olm(kind) for kind in OLM_HEADS},
    "Pod": (["READY", "STATUS", "RESTARTS", "AGE"], _pod_columns),
    "PodDisruptionBudget": (
        ["MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"],
        _pdb_columns,
    ),
    "Deployment": (["READY", "UP-TO-DATE", "AVAILABLE", "AGE"], _deployment_columns),
    "ReplicaSet": (["DESIRED", "CURRENT", "READY", "AGE"], _replicaset_columns),
    "DaemonSet": (
        ["DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"],
        _daemonset_columns,
    ),
    "StatefulSet": (["READY", "AGE"], _statefulset_columns),
    "Lease": (["HOLDER", "AGE"], _lease_columns),
}


def table_rows(
    kind: str, objs: list[dict[str, Any]], now: float
) -> tuple[list[str], list[list[str]]]:
    """The columns a server-side Table has for `kind` (NAME first; kubectl adds NAMESPACE
    itself when it lists across namespaces)."""
    if kind == "Event":
        return event_rows(objs, now)
    if kind in OTHER_COLUMNS:
        head, columns = OTHER_COLUMNS[kind]
        return ["NAME", *head], [[o["metadata"]["name"], *columns(o, now)] for o in objs]
    if kind == "Node":  # oc and kubectl: NAME STATUS ROLES AGE VERSION
        return kubectl_nodes(objs, now)
    if kind in GDC_COLUMNS or kind in RESOURCES:
        head, rows = oc_rows(kind, objs, now)
        if head[0] == "NAMESPACE":
            return head[1:], [r[1:] for r in rows]
        return head, rows
    return ["NAME", "AGE"], [
        [o["metadata"]["name"], age(o["metadata"].get("creationTimestamp", ""), now)] for o in objs
    ]
