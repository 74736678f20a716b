"""Machine-config annotations and labels on nodes and pools (the daemon's vocabulary, SPEC E3)."""

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
