"""A user's cluster made simulable (SPEC X7): readers for a live API (read-only), must-gather
directories and manifest dumps; the mapping to a profile; calibration from the cluster's own
history; anonymisation."""
