"""An update's progress as `oc adm upgrade status` assesses it from the ClusterVersion,
ClusterOperators, MachineConfigPools, Nodes and rendered MachineConfigs (SPEC C10, E6).

Ported from openshift/oc pkg/cli/admin/upgrade/status: controlplane.go (assessment,
completion, the duration estimate and its polynomial), workerpool.go (node phases and
assessments, pool summaries), health.go (insights, their order, shortDuration) and
mco/layered_node_state.go (why a node is unavailable). Alerts from the cluster's
Prometheus are not read: the health table holds the objects' own insights.

Times are seconds since the epoch (the cluster's clock: virtual on the simulator);
durations follow Go's time.Duration rounding so the text matches oc's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kupgrade.cluster import mco
from kupgrade.cluster.alerts import Alert
from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import find
from kupgrade.cluster.fake import MemoryBackend
from kupgrade.errors import InputError
from kupgrade.outputs.gosort import go_sort_slice
from kupgrade.versions import go_truncate
from kupgrade.versions.times import stamp_or_zero
from kupgrade.views.status_capture import read_capture
from kupgrade.views.status_health import (
    ERROR,
    INFO,
    WARNING,
    Insight,
    alert_insights,
    go_round,
    short_duration,
)

# read_capture is here too: the capture is what `upgrade status` reads most often.
__all__ = [
    "ControlPlane",
    "NodeRow",
    "Objects",
    "Pool",
    "Status",
    "assess",
    "assess_control_plane",
    "assess_nodes",
    "assess_pool",
    "baseline_duration",
    "condition_stamp",
    "estimate_completion",
    "read_capture",
    "read_objects",
    "timewise_complete",
    "vague_under",
]

Obj = dict[str, Any]
MINUTE = 60.0
CO_RUNBOOK = "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/"
MCO_DOC = (
    "https://docs.openshift.com/container-platform/latest/post_installation_configuration/"
    "machine-configuration-tasks.html#understanding-the-machine-config-operator"
)

# Node phases and assessments, in the order oc sorts them.
PHASES = ("Draining", "Updating", "Rebooting", "Paused", "Pending", "Updated")
ASSESSMENTS = ("Degraded", "Unavailable", "Progressing", "Excluded", "Outdated", "Completed")
ESTIMATES = {
    "Paused": "-",
    "Pending": "?",
    "Draining": "+10m",
    "Updating": "+5m",
    "Rebooting": "+5m",
    "Updated": "-",
}
PHASE_ASSESSMENT = {
    "Paused": "Excluded",
    "Pending": "Outdated",
    "Draining": "Progressing",
    "Updating": "Progressing",
    "Rebooting": "Progressing",
    "Updated": "Completed",
}
NOT_READY, DISK, NETWORK = "Not ready", "Disk pressure", "Network unavailable"
UNSCHEDULABLE = "Node is marked unschedulable"
MCD_WORKING = "Machine Config Daemon is processing the node"


def condition_stamp(condition: Obj | None) -> float:
    return stamp_or_zero((condition or {}).get("lastTransitionTime"))


# (condition, its bad status, what it means, minutes to a warning and to an error, runbook)
CO_PROBLEMS = (
    ("Available", "False", "unavailable", 20, "ClusterOperatorDown.md"),
    ("Degraded", "True", "degraded", 40, "ClusterOperatorDegraded.md"),
)


def _co_insights(name: str, conditions: list[Obj] | None, now: float) -> list[Insight]:
    """An operator unavailable or degraded for 5 minutes is a warning, for longer an
    error (controlplane.go coInsights)."""
    out = []
    for kind, bad, meaning, error_minutes, runbook in CO_PROBLEMS:
        found = find(conditions, kind)
        if (
            found is None
            or found.get("status") != bad
            or now <= condition_stamp(found) + 5 * MINUTE
        ):
            continue
        out.append(
            Insight(
                ERROR if now > condition_stamp(found) + error_minutes * MINUTE else WARNING,
                "API Availability",
                f"Cluster Operator {name} is {meaning} ({found.get('reason', '')})",
                found.get("message") or "<no message>",
                CO_RUNBOOK + runbook,
                condition_stamp(found),
                resources=[("clusteroperators.config.openshift.io", name)],
            )
        )
    return out


# --- the control plane -------------------------------------------------------------------


@dataclass
class ControlPlane:
    assessment: str = "Progressing"
    target: str = "unknown"
    previous: str = "unknown"
    install: bool = False
    previous_partial: bool = False
    multi_arch: bool = False
    total: int = 0
    updated: int = 0
    waiting: int = 0
    unavailable: int = 0
    degraded: int = 0
    updating: list[tuple[str, Obj]] = field(default_factory=list)
    completion: float = 0.0
    completion_at: float = 0.0
    duration: float = 0.0
    est_duration: float = 0.0
    est_remaining: float = 0.0

    def version_text(self) -> str:
        if self.install:
            return f"{self.target} (a new install)"
        if self.previous_partial:
            return f"{self.target} (from incomplete {self.previous})"
        if self.multi_arch:
            return f"{self.target} to Multi-Architecture"
        return f"{self.target} (from {self.previous})"

    def health(self) -> str:
        out = [f"{self.total - self.unavailable - self.degraded} Healthy"]
        if self.unavailable:
            out.append(f"{self.unavailable} Unavailable")
        if self.degraded:
            out.append(f"{self.degraded} Available but degraded")
        return ", ".join(out)


def _platform_operator(co: Obj) -> bool:
    return any(
        a.startswith(("exclude.release.openshift.io/", "include.release.openshift.io/"))
        for a in (co["metadata"].get("annotations") or {})
    )


def assess_control_plane(
    cv: Obj, operators: list[Obj], mco_image: str, now: float
) -> tuple[ControlPlane, list[Insight]]:
    status = cv.get("status") or {}
    target = str((status.get("desired") or {}).get("version", ""))
    cp = ControlPlane()
    insights: list[Insight] = []
    cv_scope = [("clusterversions.config.openshift.io", cv["metadata"]["name"])]
    failing = find(status.get("conditions"), "Failing")
    if failing is None:
        insights.append(
            Insight(
                WARNING,
                "Update Stalled",
                f"Cluster Version {cv['metadata']['name']} has no Failing condition",
                "Current status of Cluster Version reconciliation is unclear.  See 'oc -n "
                "openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1' to debug.",
                CO_RUNBOOK + "ClusterOperatorDegraded.md",
                now,
                resources=cv_scope,
            )
        )
    elif failing.get("status") != "False":
        verb = "may be" if failing.get("status") == "Unknown" else "is"
        insights.append(
            Insight(
                WARNING,
                "Update Stalled",
                f"Cluster Version {cv['metadata']['name']} {verb} failing to proceed with the update "
                f"({failing.get('reason', '')})",
                str(failing.get("message", "")),
                CO_RUNBOOK + "ClusterOperatorDegraded.md",
                condition_stamp(failing),
                resources=cv_scope,
            )
        )
    last_progress = 0.0
    mco_started = 0.0
    for co in operators:
        if not _platform_operator(co):
            continue
        name = co["metadata"]["name"]
        versions = (co.get("status") or {}).get("versions") or []
        image_upgrading = name == "machine-config" and any(
            v.get("name") == "operator-image" and v.get("version") != mco_image for v in versions
        )
        updated = not image_upgrading and any(
            v.get("name") == "operator" and v.get("version") == target for v in versions
        )
        cp.updated += updated
        cp.total += 1
        conditions = (co.get("status") or {}).get("conditions")
        available, degraded = find(conditions, "Available"), find(conditions, "Degraded")
        progressing = find(conditions, "Progressing")
        if progressing is not None:
            last_progress = max(last_progress, condition_stamp(progressing))
            if not updated and progressing.get("status") == "True":
                cp.updating.append((name, progressing))
                if name == "machine-config":
                    mco_started = condition_stamp(progressing)
            if not updated and progressing.get("status") == "False":
                cp.waiting += 1
        if available is None or available.get("status") != "True":
            cp.unavailable += 1
        elif degraded is not None and degraded.get("status") == "True":
            cp.degraded += 1
        insights += _co_insights(name, conditions, now)
    done = cp.updated == cp.total
    cp.assessment = "Completed" if done else "Progressing"
    if mco_started and cp.total - cp.updated == 1:
        last_progress = mco_started
    history = status.get("history") or []
    updating_for = to_last_progress = 0.0
    if history:
        started = stamp_or_zero(history[0].get("startedTime"))
        if last_progress <= started:
            last_progress = now
        to_last_progress = last_progress - started
        completed = history[0].get("state") == "Completed" and history[0].get("completionTime")
        cp.completion_at = stamp_or_zero(history[0]["completionTime"]) if completed else now
        updating_for = cp.completion_at - started
        cp.duration = go_round(updating_for, MINUTE if updating_for > 10 * MINUTE else 1.0)
    insights += _versions(cp, history, cv_scope, done)
    fraction = cp.updated / cp.total if cp.total else 0.0
    cp.completion = fraction * 100.0
    if fraction <= 1 and cp.assessment != "Completed":
        cp.est_remaining = estimate_completion(
            baseline_duration(history), to_last_progress, updating_for, fraction
        )
        cp.est_duration = go_truncate(updating_for + cp.est_remaining, MINUTE)
        if cp.est_remaining < -10 * MINUTE:
            cp.assessment = "Stalled"
        elif cp.est_remaining < 0:
            cp.assessment = "Progressing - Slow"
    return cp, insights


def _versions(
    cp: ControlPlane, history: list[Obj], scope: list[tuple[str, str]], done: bool
) -> list[Insight]:
    if history:
        cp.target = str(history[0].get("version", ""))
    if len(history) == 1:
        cp.install = True
        return []
    if len(history) < 2:
        return []
    cp.previous = str(history[1].get("version", ""))
    cp.previous_partial = history[1].get("state") == "Partial"
    cp.multi_arch = history[0].get("version") == history[1].get("version") and history[0].get(
        "image"
    ) != history[1].get("image")
    if done or not cp.previous_partial:
        return []
    last = next((h["version"] for h in history[2:] if h.get("state") == "Completed"), "unknown")
    return [
        Insight(
            WARNING,
            "None",
            f"Previous update to {cp.previous} never completed, last complete update was {last}",
            f"Current update to {cp.target} was initiated while the previous update to version "
            f"{cp.previous} was still in progress",
            "https://docs.openshift.com/container-platform/latest/updating/troubleshooting_updates/"
            "gathering-data-cluster-update.html#gathering-clusterversion-history-cli_troubleshooting_updates",
            stamp_or_zero(history[0].get("startedTime")),
            resources=scope,
        )
    ]


def baseline_duration(history: list[Obj]) -> float:
    """The last completed update's duration (the first entry is this one, the last
    the install); an hour when there is none."""
    if len(history) < 3:
        return 3600.0
    for item in history[1:-1]:
        if item.get("state") == "Completed":
            return stamp_or_zero(item.get("completionTime")) - stamp_or_zero(
                item.get("startedTime")
            )
    return 3600.0


def timewise_complete(x: float) -> float:
    """oc's fit of time elapsed against the share of operators updated (97% of the
    operators in 67% of the time)."""
    if x < 0.25:
        return -0.03078788 + 2.62886 * x - 3.823954 * x**2
    if x < 0.9:
        return 0.1851215 + 1.64994 * x - 4.676898 * x**2 + 5.451824 * x**3 - 2.125286 * x**4
    return 25053.32 - 107394.3 * x + 172527.2 * x**2 - 123107 * x**3 + 32921.81 * x**4


def estimate_completion(
    baseline: float, to_last_progress: float, updating_for: float, fraction: float
) -> float:
    if fraction >= 1:
        return 0.0
    timewise = timewise_complete(fraction)
    measured = fraction > 0 and timewise > 0 and to_last_progress > 5 * MINUTE
    total = to_last_progress / timewise if measured else baseline
    remaining = total - updating_for
    over = 1.2 if remaining >= 0 else 1 / 1.2
    estimate = float(math.trunc(remaining * over))  # time.Duration(float) truncates
    return go_round(estimate, MINUTE if estimate > 10 * MINUTE else 1.0)


def vague_under(actual: float, estimated: float, multi_arch: bool) -> str:
    if multi_arch:
        return "N/A for Multi-Architecture Migration"
    if actual < -10 * MINUTE:
        return f"N/A; estimate duration was {short_duration(estimated)}"
    if actual < 10 * MINUTE:
        return f"<{short_duration(10 * MINUTE)}"
    return short_duration(actual)


# --- nodes and pools -----------------------------------------------------------------------


@dataclass
class NodeRow:
    name: str
    assessment: str
    phase: str
    version: str
    estimate: str
    message: str
    unavailable: bool
    degraded: bool
    updating: bool
    updated: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "assessment": self.assessment,
            "phase": self.phase,
            "version": self.version or "?",
            "estimate": self.estimate,
            "message": self.message,
        }


@dataclass
class Pool:
    name: str
    assessment: str
    completion: float
    rows: list[NodeRow]
    total: int = 0
    available: int = 0
    progressing: int = 0
    outdated: int = 0
    draining: int = 0
    excluded: int = 0
    degraded: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "assessment": self.assessment,
            "completion": round(self.completion, 1),
            "total": self.total,
            "available": self.available,
            "progressing": self.progressing,
            "outdated": self.outdated,
            "draining": self.draining,
            "excluded": self.excluded,
            "degraded": self.degraded,
            "nodes": [r.as_dict() for r in self.rows],
        }

    def summary(self) -> str:
        text = (
            f"{self.available} Available, {self.progressing} Progressing, {self.draining} Draining"
        )
        for label, count in (("Excluded", self.excluded), ("Degraded", self.degraded)):
            if count:
                text += f", {count} {label}"
        return text


def _unavailable(node: Obj, pool: Obj) -> list[tuple[str, str, float]]:
    """(reason, message, since) of each reason the node is unavailable, as the MCO's
    layered node state finds them; [] when it is available."""
    notes = node["metadata"].get("annotations") or {}
    bad: list[tuple[str, str, float]] = []
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready" and c.get("status") != "True":
            bad.append((NOT_READY, str(c.get("message", "")), condition_stamp(c)))
        if c.get("type") == "DiskPressure" and c.get("status") != "False":
            bad.append((DISK, str(c.get("message", "")), condition_stamp(c)))
        if c.get("type") == "NetworkUnavailable" and c.get("status") != "False":
            bad.append((NETWORK, str(c.get("message", "")), condition_stamp(c)))
    if (node.get("spec") or {}).get("unschedulable"):
        bad.append((UNSCHEDULABLE, "", 0.0))
    if bad:
        return bad
    images = notes.get(mco.DESIRED_IMAGE), notes.get(mco.CURRENT_IMAGE)
    image_done = images == (None, None) or (bool(images[0]) and images[0] == images[1])
    done = (
        notes.get(mco.CURRENT)
        and notes.get(mco.CURRENT) == notes.get(mco.DESIRED)
        and image_done
        and notes.get(mco.STATE) == mco.DONE
    )
    if done or notes.get(mco.STATE) in (mco.DEGRADED, mco.UNRECONCILABLE):
        return []
    return [(MCD_WORKING, "", 0.0)]


def _unavailable_text(name: str, bad: list[tuple[str, str, float]]) -> tuple[str, str]:
    summaries, descriptions = [], []
    for reason, message, _ in bad:
        summary, description = reason, reason
        for kind, condition, wanted in (
            (NOT_READY, "Ready", "True"),
            (DISK, "DiskPressure", "False"),
            (NETWORK, "NetworkUnavailable", "False"),
        ):
            if reason == kind:
                summary = {
                    NOT_READY: f"Node {name} is not ready",
                    DISK: f"Node {name} has disk pressure",
                    NETWORK: f"Node {name} has unavailable network",
                }[kind]
                description = (
                    f'Node has a {condition}!={wanted} condition with Reason "{kind}" '
                    f'and message "{message}"'
                )
        summaries.append(summary)
        descriptions.append(description)
    return " | ".join(summaries), " | ".join(descriptions)


def _seriously(bad: list[tuple[str, str, float]], now: float) -> bool:
    for reason, _, since in bad:
        if reason in (UNSCHEDULABLE, MCD_WORKING):
            continue
        if reason == NOT_READY and now - since < 5 * MINUTE:
            continue
        if reason in (DISK, NETWORK) and now - since < MINUTE:
            continue
        return True
    return False


def _draining(notes: dict[str, str], updating: bool) -> bool:
    desired, applied = notes.get(mco.DESIRED_DRAIN, ""), notes.get(mco.LAST_APPLIED_DRAIN, "")
    if not desired or not applied:
        return False
    if desired != applied and desired.split("-")[0] == "drain":
        return True
    return updating and notes.get(mco.STATE) == mco.DONE


def _phase(pool: Obj, notes: dict[str, str], updating: bool, updated: bool) -> str:
    if updating and _draining(notes, updating):
        return "Draining"
    if updating:
        state = notes.get(mco.STATE, "")
        return {mco.REBOOTING: "Rebooting", mco.DONE: "Updated"}.get(state, "Updating")
    if updated:
        return "Updated"
    return "Paused" if (pool.get("spec") or {}).get("paused") else "Pending"


def assess_nodes(
    cv: Obj,
    pool: Obj,
    nodes: list[Obj],
    releases: dict[str, str],
    *,
    multi_arch: bool,
    now: float,
) -> tuple[list[NodeRow], list[Insight]]:
    history = (cv.get("status") or {}).get("history") or []
    latest = history[0].get("version") if history else None
    wanted = ((pool.get("spec") or {}).get("configuration") or {}).get("name")
    rows, insights = [], []
    scope = "ControlPlane" if pool["metadata"]["name"] == "master" else "WorkerPool"
    for node in nodes:
        name = node["metadata"]["name"]
        notes = node["metadata"].get("annotations") or {}
        desired = notes.get(mco.DESIRED)
        current = releases.get(notes.get(mco.CURRENT, ""), "")
        desired_version = releases.get(desired or "", "")
        bad = _unavailable(node, pool)
        # A pool without a layered image wants no desiredImage on its nodes (oc's
        # isDesiredImageEqualToPool); kupgrade's pools are never layered.
        unavailable = bool(bad) and not notes.get(mco.DESIRED_IMAGE)
        degraded = bool(desired) and notes.get(mco.STATE) in (mco.DEGRADED, mco.UNRECONCILABLE)
        matched = notes.get(mco.CURRENT) == desired
        desired_is_pool = desired == wanted
        updated = (
            bool(current)
            and latest == current
            and (not multi_arch or desired is None or (matched and desired_is_pool))
        )
        updating = (
            not updated
            and bool(current)
            and bool(desired_version)
            and latest == desired_version
            and not matched
            and desired_is_pool
        )
        phase = _phase(pool, notes, updating, updated)
        assessment, estimate, message = PHASE_ASSESSMENT[phase], ESTIMATES[phase], ""
        summary = description = ""
        if unavailable and not updating:
            assessment = "Unavailable"
            message = " | ".join(reason for reason, _, _ in bad)
            summary, description = _unavailable_text(name, bad)
            estimate = "-" if updated else "?"
        if degraded:
            assessment = "Degraded"
            message = description = notes.get(mco.REASON, "")
            estimate = "-" if updated else "?"
        resource = [("nodes", name)]
        if bad and _seriously(bad, now) and not updating:
            since = min((s for _, _, s in bad if s), default=None)
            insights.append(
                Insight(
                    WARNING, "Update Speed", summary, description, MCO_DOC, since, scope, resource
                )
            )
        if degraded:
            insights.append(
                Insight(
                    ERROR,
                    "Update Stalled",
                    f"Node {name} is degraded",
                    description,
                    MCO_DOC,
                    None,
                    scope,
                    resource,
                )
            )
        if len(name) >= 8:
            message = message.replace(name, "<node>")
        rows.append(
            NodeRow(
                name,
                assessment,
                phase,
                current,
                estimate,
                message,
                unavailable,
                degraded,
                updating,
                updated,
            )
        )
    rows.sort(key=lambda r: (ASSESSMENTS.index(r.assessment), PHASES.index(r.phase), r.name))
    return rows, insights


def assess_pool(pool: Obj, rows: list[NodeRow]) -> tuple[Pool, list[Insight]]:
    out = Pool(pool["metadata"]["name"], "Progressing", 0.0, rows, total=len(rows))
    updated = pending = 0
    for row in rows:
        out.available += not row.unavailable
        out.degraded += row.degraded
        if row.phase == "Paused":
            out.excluded += 1
        if row.phase == "Pending":
            pending += 1
        if row.phase == "Draining":
            out.draining += 1
        if row.phase == "Updated":
            updated += 1
        else:
            out.outdated += 1
        if row.phase in ("Draining", "Updating", "Rebooting") and not row.degraded:
            out.progressing += 1
    if updated == len(rows):
        out.assessment = "Completed"
    elif pending == len(rows):
        out.assessment = "Pending"
    elif out.degraded:
        out.assessment = "Degraded"
    elif out.excluded:
        out.assessment = "Excluded"
    insights = []
    if out.excluded and (pool.get("spec") or {}).get("paused"):
        insights.append(
            Insight(
                WARNING,
                "Update Stalled",
                f"Outdated nodes in a paused pool '{out.name}' will not be updated",
                "Pool is paused, which stops all changes to the nodes in the pool, including updates. "
                "The nodes will not be updated until the pool is unpaused by the administrator.",
                "https://docs.openshift.com/container-platform/latest/support/troubleshooting/"
                "troubleshooting-operator-issues.html#troubleshooting-disabling-autoreboot-mco_troubleshooting-operator-issues",
                None,
                "WorkerPool",
                [("machineconfigpools.machineconfiguration.openshift.io", out.name)],
            )
        )
    out.completion = updated / len(rows) * 100.0 if rows else 0.0
    return out, insights


# --- the whole -------------------------------------------------------------------------------


@dataclass
class Status:
    now: float
    control_plane: ControlPlane
    masters: Pool | None
    workers: list[Pool]
    insights: list[Insight]
    healthy: bool  # no insight: "Update is proceeding well"


@dataclass
class Objects:
    """What oc reads: the ClusterVersion, ClusterOperators, MachineConfigPools, Nodes,
    rendered MachineConfigs and the machine-config operator's image."""

    cv: Obj
    operators: list[Obj]
    pools: list[Obj]
    nodes: list[Obj]
    machine_configs: list[Obj]
    mco_image: str = ""
    # The cluster's alerts; a text when they could not be read; None when nothing was asked.
    alerts: list[Alert] | str | None = None


def assess(objects: Objects, now: float) -> Status | None:
    """The update's status, or None when the cluster is not updating."""
    cv, pools = objects.cv, objects.pools
    status = cv.get("status") or {}
    history = status.get("history") or []
    progressing = find(status.get("conditions"), "Progressing") or {}
    multi_arch = (
        len(history) > 1
        and history[0].get("version") == history[1].get("version")
        and history[0].get("image") != history[1].get("image")
        and progressing.get("status") == "True"
    )
    releases = {
        mc["metadata"]["name"]: (mc["metadata"].get("annotations") or {}).get(
            mco.RELEASE_IMAGE_VERSION, ""
        )
        for mc in objects.machine_configs
    }
    per_pool: dict[str, list[Obj]] = {}
    for node in objects.nodes:
        per_pool.setdefault(mco.pool_of(node, pools), []).append(node)
    insights: list[Insight] = []
    masters, workers = None, []
    for pool in pools:
        name = pool["metadata"]["name"]
        rows, found = assess_nodes(
            cv, pool, per_pool.get(name, []), releases, multi_arch=multi_arch, now=now
        )
        summary, more = assess_pool(pool, rows)
        insights += found + more
        if name == "master":
            masters = summary
        else:
            workers.append(summary)
    outdated = any(p.total and p.completion != 100 for p in workers)
    if progressing.get("status") != "True" and not outdated:
        return None
    started = (
        stamp_or_zero(history[0].get("startedTime")) if history else condition_stamp(progressing)
    )
    if isinstance(objects.alerts, list):
        insights += alert_insights(objects.alerts, started)
    cp, found = assess_control_plane(cv, objects.operators, objects.mco_image, now)
    insights += found
    # health.go assessUpdateInsights: newest first (sort.Slice, unstable beyond 12
    # insights), then by level (sort.SliceStable, which Python's sort is).
    kept = go_sort_slice([i for i in insights if i.complete()], _newer)
    kept.sort(key=lambda i: -i.level)
    healthy = not kept
    if healthy:
        kept = [
            Insight(
                INFO,
                "None",
                "Update is proceeding well",
                started=now - go_round(now - started, 1.0),
            )
        ]
    return Status(now, cp, masters, workers, kept, healthy)


MCO_NAMESPACE = "openshift-machine-config-operator"


def _newer(a: Insight, b: Insight) -> bool:
    """startedAt.After: an insight without a start (Go's zero time) is the oldest."""
    return (a.started if a.started is not None else -math.inf) > (
        b.started if b.started is not None else -math.inf
    )


def read_objects(api: Backend, alerts: list[Alert] | str | None = None) -> Objects:
    """What oc reads, with its refusals when the cluster is not OpenShift 4; the alerts
    given, or those captured with a capture."""
    if alerts is None and isinstance(api, MemoryBackend):
        alerts = api.alerts
    cv = api.get("ClusterVersion", "version")
    if cv is None:
        raise InputError(
            "no cluster version information available - you must be connected to an "
            "OpenShift version 4 server to fetch the current version",
            hint="a distributed-cloud cluster shows its upgrade with `kupgrade upgrade`",
        )
    operators = api.list("ClusterOperator")
    if not operators:
        raise InputError(
            "no cluster operator information available - you must be connected to an "
            "OpenShift version 4 server"
        )
    if not any(
        c.get("type") == "Progressing" for c in cv.get("status", {}).get("conditions") or []
    ):
        raise InputError(
            "no current Progressing info",
            hint="see `kupgrade get clusterversion -o yaml` for more details",
        )
    mco = api.get("Deployment", "machine-config-operator", MCO_NAMESPACE) or {}
    containers = mco.get("spec", {}).get("template", {}).get("spec", {}).get("containers") or []
    image = next(
        (c.get("image", "") for c in containers if c.get("name") == "machine-config-operator"), ""
    )
    return Objects(
        cv,
        operators,
        api.list("MachineConfigPool"),
        api.list("Node"),
        api.list("MachineConfig"),
        str(image),
        alerts,
    )
