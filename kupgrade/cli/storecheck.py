"""A warning, in one line, when a cluster's store holds objects its API would refuse now
(a store an older kupgrade wrote, before writes were validated): the run goes on, the
budget that cannot be read allowing no disruption (cluster/disruption.py), and the user
knows which object to fix."""

from __future__ import annotations

from kupgrade.apiserver.validation import SPECS, stored_problems
from kupgrade.cli.output import stderr
from kupgrade.sim.store import Store


def warn_invalid_objects(name: str, store: Store) -> str:
    """Say (on stderr) which stored objects are not valid; the line said, or ""."""
    said = stored_problems(obj for kind in sorted(SPECS) for obj in store.list(kind))
    if said:
        stderr.print(
            f"warning: cluster {name}: {said}; fix them (kubectl patch, through "
            "`kupgrade cluster serve-api`) or create the cluster again",
            highlight=False,
            markup=False,
        )
    return said
