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


def pool_of(node: dict[str, Any], pools: list[dict[str, Any]]) -> str:
    """The pool a node belongs to, as oc's whichPool and the machine-config controller's
    GetPoolsForNode decide it (openshift/oc pkg/cli/admin/upgrade/status/status.go;
    machine-config-operator pkg/controller/common/helpers.go): the master pool when it
    selects the node; otherwise the first custom pool by name that does (a node in two
    custom pools the controller refuses to update; oc shows the first); otherwise the
    worker pool; "" when no pool selects it."""
    labels = node["metadata"].get("labels") or {}
    by_name = {p["metadata"]["name"]: p for p in pools}
    order = ["master", *sorted(n for n in by_name if n not in ("master", "worker")), "worker"]
    for name in order:
        if name in by_name and matches(by_name[name]["spec"].get("nodeSelector"), labels):
            return str(name)
    return ""
