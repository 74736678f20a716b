"""The demo's cluster: the sample dataset's example cluster (4.13.40 on stable-4.14) with
3 masters and 6 workers and two budgeted workloads, starting when its metrics were taken."""

from __future__ import annotations

from kupgrade.sim.profile import Budget, Pool, Spec, Workload
from kupgrade.sim.sample import EXAMPLE_CLUSTER, SNAPSHOT_END_S
from kupgrade.versions.times import rfc3339

DEMO_PROFILE = Spec(
    version=EXAMPLE_CLUSTER["version"],
    channel=EXAMPLE_CLUSTER["channel"],
    start=rfc3339(SNAPSHOT_END_S),  # the moment its metrics snapshot was taken
    pools=[
        Pool("master", 3, max_unavailable=1, zones=["a", "b", "c"]),
        Pool("worker", 6, max_unavailable=2, zones=["a", "b", "c"]),
    ],
    workloads=[
        Workload("web", "shop", 6, pdb=Budget(min_available=5), termination_seconds=45),
        Workload("db", "data", 3, pdb=Budget(max_unavailable=1), termination_seconds=120),
    ],
)
