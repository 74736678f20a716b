"""What was down when: each workload of a member cluster, measured on the virtual clock
as the rehearsal runs (SPEC X2, X5).

A workload is down while none of its pods is ready and short while fewer are ready than
it asks for (its replicas, or one per node for a DaemonSet). The running totals live in
the member's own store, written in the same transactions as the steps that caused them,
so a killed and resumed rehearsal measures exactly what an uninterrupted one does.
"""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.objects import is_ready_pod
from kupgrade.sim.store import Store

KEY = "fleet:downtime"
REPLICAS = "replicas:"


def ready_counts(store: Store) -> dict[str, int]:
    """Ready pods per workload (`namespace/app`)."""
    counts: dict[str, int] = {}
    for _, pod in store.scan("Pod"):  # read, not kept as dicts
        app = (pod["metadata"].get("labels") or {}).get("app")
        if app and is_ready_pod(pod):
            key = f"{pod['metadata'].get('namespace', '')}/{app}"
            counts[key] = counts.get(key, 0) + 1
    return counts


class Downtime:
    """Watches one member's pods; `update` opens an interval when a workload goes down
    (or short) and closes it when it comes back, so calling it more often changes
    nothing."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.pods = store.watch("Pod")
        self.fresh = True  # nothing measured in this process yet

    def update(self, at: float) -> None:
        if not self.pods and not self.fresh:
            return
        self.pods.drain()
        self.fresh = False
        wanted = {k.removeprefix(REPLICAS): int(v) for k, v in self.store.metas(REPLICAS).items()}
        if not wanted:
            return
        ready = ready_counts(self.store)
        before = self.store.meta(KEY) or {}
        totals: dict[str, Any] = {}
        for workload, want in sorted(wanted.items()):
            row = dict(before.get(workload) or {"down": 0.0, "short": 0.0})
            count = ready.get(workload, 0)
            for name, now_bad in (("down", count == 0), ("short", count < want)):
                since = row.get(f"{name}Since")
                if now_bad and since is None:
                    row[f"{name}Since"] = at
                elif not now_bad and since is not None:
                    row[name] = row[name] + at - row.pop(f"{name}Since")
            totals[workload] = row
        if totals != before:
            self.store.set_meta(KEY, totals)


def measured(store: Store, at: float) -> dict[str, dict[str, float]]:
    """Seconds each workload was down and short, counting what is still open at `at`."""
    out = {}
    for workload, row in (store.meta(KEY) or {}).items():
        out[workload] = {
            name: round(row[name] + (at - row[f"{name}Since"] if f"{name}Since" in row else 0), 3)
            for name in ("down", "short")
        }
    return out
