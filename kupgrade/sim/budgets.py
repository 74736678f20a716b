"""Each PodDisruptionBudget's pods, kept up to date as pods change, as the disruption
controller keeps them (kubernetes pkg/controller/disruption/disruption.go: it recounts a
budget whenever one of its pods changes).

Drains ask a budget's status for every eviction and retry refused evictions every minute,
while the budget's pods change far less often. Recounting a budget's pods on every ask
cost a 5,000-node rehearsal a third of its time; here a pod's change moves its own
contribution (ready or not, its owners) from the budgets it left to those it joined, and
a budget's status is read from its counts. A change to any budget (rare: created with
the cluster, patched by a profile's change or `kubectl apply`) recounts everything once,
on the next ask. The evictions that read it honour budgets as SPEC E3 and G11 say.
"""

from __future__ import annotations

import weakref
from typing import Any

from kupgrade.cluster.backend import Key
from kupgrade.cluster.disruption import budget_status
from kupgrade.cluster.objects import is_ready_pod, key_of
from kupgrade.cluster.selectors import matches
from kupgrade.collector import paused
from kupgrade.sim.store import Obj, Store

PDB = "PodDisruptionBudget"
# A pod as the ledger counts it: the budgets counting it, whether healthy, its owners.
Seen = tuple[tuple[Key, ...], bool, tuple[str, ...]]


def _selector_labels(pdb: Obj) -> list[str]:
    """Where a budget is found from a pod's labels: any one of its matchLabels pairs."""
    namespace = pdb["metadata"].get("namespace", "")
    wanted = ((pdb["spec"].get("selector") or {}).get("matchLabels")) or {}
    return [f"{namespace}/{k}={v}" for k, v in wanted.items()] or [f"{namespace}/*"]


class _Count:
    """One budget's pods: how many, how many healthy, and how many per owner's name."""

    __slots__ = ("healthy", "owners", "pods", "weighed")

    def __init__(self) -> None:
        self.pods = 0
        self.healthy = 0
        self.owners: dict[str, int] = {}
        # (expected pods, status) last given to an eviction; any change of the counts
        # drops it (a change of the budget makes new counts)
        self.weighed: tuple[int, dict[str, Any]] | None = None

    def add(self, healthy: bool, owners: tuple[str, ...], sign: int) -> None:
        self.weighed = None
        self.pods += sign
        self.healthy += sign if healthy else 0
        for owner in owners:
            left = self.owners.get(owner, 0) + sign
            if left:
                self.owners[owner] = left
            else:
                del self.owners[owner]


class BudgetLedger:
    """The pods of every budget in one store, followed through the store's changes."""

    def __init__(self, store: Store) -> None:
        self.store = store
        store.index(PDB, "selects", _selector_labels)
        self.stale = True  # recount everything on the next ask
        self.counts: dict[Key, _Count] = {}
        self.specs: dict[Key, Obj] = {}  # each budget's spec, as its last change left it
        # pod -> (the budgets counting it, whether it is healthy, its owners' names)
        self.seen: dict[Key, Seen] = {}
        self.by_labels: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Key, ...]] = {}
        # One tuple per distinct (budgets, healthy, owners), not one per pod: a few
        # thousand for 500,000 pods.
        self.shared: dict[Seen, Seen] = {}
        store.observe("Pod", self._pod_changed)
        store.observe(PDB, self._budget_changed)

    # --- reading ----------------------------------------------------------------------------

    def budgets_for(self, pod: Obj) -> list[Obj]:
        """The PodDisruptionBudgets whose selector matches the pod, by `oc` name."""
        if self.stale:
            self._recount()
        found = (self.store.get(k[0], k[2], k[1]) for k in self._keys_for(pod))
        return [b for b in found if b is not None]

    def status(self, pdb: Obj) -> dict[str, Any]:
        """currentHealthy, desiredHealthy, disruptionsAllowed and expectedPods now."""
        if self.stale:
            self._recount()
        meta = pdb["metadata"]
        key = (PDB, meta.get("namespace", ""), meta["name"])
        count = self.counts.get(key) or _Count()
        return budget_status(pdb["spec"], self._expected(key, count), count.healthy)

    def weighed(self, pod: Obj) -> list[tuple[str, Obj, dict[str, Any]]]:
        """(name, spec, status) of each budget over the pod, as the Eviction API weighs
        them (disruption.eviction), to be read only. A drain retries every refused pod
        every minute, and most retries find their budget's counts as they were: its
        status is kept until they change, and its spec until any budget changes."""
        if self.stale:
            self._recount()
        out = []
        for key in self._keys_for(pod):
            spec = self.specs.get(key)
            if spec is None:
                found = self.store.get(PDB, key[2], key[1])
                if found is None:
                    continue
                spec = self.specs[key] = found["spec"]
            count = self.counts.get(key)
            if count is None:
                count = self.counts[key] = _Count()
            expected = self._expected(key, count)
            if count.weighed is None or count.weighed[0] != expected:
                count.weighed = (expected, budget_status(spec, expected, count.healthy))
            out.append((key[2], spec, count.weighed[1]))
        return out

    def _expected(self, key: Key, count: _Count) -> int:
        """The pods the budget's owners want (their replicas), else the pods it counts."""
        namespace, meta = key[1], self.store.meta
        return sum(int(meta(f"replicas:{namespace}/{o}") or 0) for o in count.owners) or count.pods

    # --- following the store ----------------------------------------------------------------

    def _keys_for(self, pod: Obj) -> tuple[Key, ...]:
        meta = pod["metadata"]
        namespace = meta.get("namespace", "")
        labels = meta.get("labels") or {}
        cache_key = (namespace, tuple(labels.items()))
        found = self.by_labels.get(cache_key)
        if found is None:
            found = self.by_labels[cache_key] = self._match(namespace, labels)
        return found

    def _match(self, namespace: str, labels: dict[str, str]) -> tuple[Key, ...]:
        candidates = {
            key_of(b): b
            for value in [*(f"{namespace}/{k}={v}" for k, v in labels.items()), f"{namespace}/*"]
            for b in self.store.lookup(PDB, "selects", value)
        }
        return tuple(
            (PDB, b["metadata"].get("namespace", ""), b["metadata"]["name"])
            for _, b in sorted(candidates.items())
            if matches(b["spec"].get("selector"), labels)
        )

    def _pod_changed(self, key: Key, pod: Obj | None) -> None:
        """Move the pod's contribution from the budgets it left to those it joined. Every
        pod change of a run comes here (a 5,000-node rehearsal: ~900,000 of them), so what
        the pod was is kept as one tuple and compared whole."""
        if self.stale:
            return
        old = self.seen.get(key)
        new: Seen | None = None
        if pod is not None:
            refs = pod["metadata"].get("ownerReferences")
            owners = tuple([o["name"] for o in refs]) if refs else ()
            new = (self._keys_for(pod), is_ready_pod(pod), owners)
        if new == old:
            return
        counts = self.counts
        if old is not None:
            for budget in old[0]:
                counts[budget].add(old[1], old[2], -1)
        if new is None:
            del self.seen[key]
            return
        for budget in new[0]:
            count = counts.get(budget)
            if count is None:
                count = counts[budget] = _Count()
            count.add(new[1], new[2], 1)
        self.seen[key] = self.shared.setdefault(new, new)

    def _budget_changed(self, key: Key, pdb: Obj | None) -> None:
        self.stale = True

    @paused()  # a count per budget, a tuple per pod: none of them a cycle
    def _recount(self) -> None:
        self.stale = False
        self.counts, self.seen, self.by_labels, self.shared = {}, {}, {}, {}
        self.specs = {}
        for key, pod in self.store.scan("Pod"):
            self._pod_changed(key, pod)


_LEDGERS: weakref.WeakKeyDictionary[Store, BudgetLedger] = weakref.WeakKeyDictionary()


def ledger(store: Store) -> BudgetLedger:
    """The store's one ledger: every SimCluster over a store shares it (one follows each
    change once, however many views of the cluster a process opens)."""
    found = _LEDGERS.get(store)
    if found is None:
        found = _LEDGERS[store] = BudgetLedger(store)
    return found
