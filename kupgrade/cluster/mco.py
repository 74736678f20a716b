"""Machine-config annotations and labels on nodes and pools (the daemon's vocabulary, SPEC E3),
and which pool a node belongs to."""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.selectors import matches

PREFIX = "machineconfiguration.openshift.io/"
CURRENT = PREFIX + "currentConfig"
DESIRED = PREFIX + "desiredConfig"
STATE = PREFIX + "state"
REASON = PREFIX + "reason"
DESIRED_DRAIN = PREFIX + "desiredDrain"
LAST_APPLIED_DRAIN = PREFIX + "lastAppliedDrain"
CURRENT_IMAGE = PREFIX + "currentImage"
DESIRED_IMAGE = PREFIX + "desiredImage"
ZONE_LABEL = "topology.kubernetes.io/zone"
# The pool's kubectl drain flags (the simulator's knob; the real drain controller has
# IgnoreAllDaemonSets, DeleteEmptyDirData and Force fixed on).
DRAIN_FLAGS = "kupgrade.io/drain-flags"
DEFAULT_DRAIN_FLAGS = "--ignore-daemonsets --delete-emptydir-data --force"
# On a rendered MachineConfig: the release it was rendered from (what `oc adm upgrade
# status` reads a node's version from).
RELEASE_IMAGE_VERSION = PREFIX + "release-image-version"
REQUIRED_FOR_UPGRADE = "operator.machineconfiguration.openshift.io/required-for-upgrade"

DONE = "Done"
WORKING = "Working"
DEGRADED = "Degraded"
UNRECONCILABLE = "Unreconcilable"
REBOOTING = "Rebooting"


def pools_for(node: dict[str, Any], pools: list[dict[str, Any]]) -> tuple[list[str], str]:
    """The pools a node belongs to, its own first, as the machine-config operator's
    GetPoolsForNode computes them (machine-config-operator pkg/controller/common/helpers.go,
    ListPools and GetPoolsForNode), with why it has none when it matches some.

    A pool whose selector is nil, empty (no requirement at all) or invalid selects no node:
    LabelSelectorAsSelector makes nil Nothing and {} Everything, and the operator skips an
    Empty() one ("a pool with a nil or empty selector matches nothing") and an invalid one.
    Of the pools that select the node: two or more custom pools put it in none (the
    operator "cannot proceed with this Node"); one custom pool with the master pool puts
    it in master; one custom pool, in that pool then worker; the master pool, in master;
    otherwise the worker pool. SPEC E3."""
    labels = node["metadata"].get("labels") or {}
    chosen = [
        str(p["metadata"]["name"])
        for p in pools
        if _requires_something(p["spec"].get("nodeSelector"))
        and matches(p["spec"].get("nodeSelector"), labels)
    ]
    custom = sorted(n for n in chosen if n not in ("master", "worker"))
    worker = ["worker"] if "worker" in chosen else []
    if len(custom) > 1:
        name = node["metadata"].get("name", "")
        return (
            [],
            f"node {name} belongs to {len(custom)} custom roles, cannot proceed with this Node",
        )
    if "master" in chosen:
        return ["master", *worker] if custom else ["master"], ""
    return [*custom, *worker], ""


def pool_of(node: dict[str, Any], pools: list[dict[str, Any]]) -> str:
    """The pool a node is updated with (the operator's primary pool for it, `pools_for`);
    "" when it has none. `oc adm upgrade status` groups nodes the same way (openshift/oc
    pkg/cli/admin/upgrade/status: whichPool, master, then a custom pool, then worker)."""
    mine, _ = pools_for(node, pools)
    return mine[0] if mine else ""


def _requires_something(selector: Any) -> bool:
    """Not selector.Empty(): nil, {} and a selector of empty lists select no node here."""
    return isinstance(selector, dict) and bool(
        selector.get("matchLabels") or selector.get("matchExpressions")
    )
