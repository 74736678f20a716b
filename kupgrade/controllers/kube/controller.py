"""A kubeadm-style upgrade of a plain Kubernetes cluster, carried out step by step along
`kupgrade plan`'s plan (SPEC H6, H7, X1).

A control-plane step is `kubeadm upgrade apply` then `kubeadm upgrade node` on the other
control-plane nodes: the kube-apiservers one node at a time, then the controller-managers
and schedulers, then the control-plane nodes' kubelets. A node-pool step upgrades its
nodes' kubelets and kube-proxy one node at a time, cordoned and drained first when the
minor changes (kubectl drain: evictions that honour PodDisruptionBudgets, DaemonSet and
mirror pods left). Before every change the skew rules and, for a control-plane step,
kubeadm's version policies are checked on the live state with that change applied; a
change that would break one is not made and the status names the rule and the fix.
Everything it knows is its state and the objects, so a killed run carries on.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.drain import cordoned, evict_round, evictable, uncordoned
from kupgrade.cluster.kubeadm import (
    APISERVER,
    KUBELET_TARGET,
    MANAGERS,
    image_version,
    is_control_plane,
    kubelet_of,
    node_pool,
    pod_ready,
    v,
)
from kupgrade.cluster.objects import Obj, key_of
from kupgrade.controllers.kube.findings import LiveFindings
from kupgrade.controllers.kube.record import (
    STATE,
    DrainWait,
    FleetStep,
    Kubeadm,
    KubeUpgrade,
    PlanStep,
    StepWork,
    save_record,
    upgrade_record,
)
from kupgrade.controllers.protocol import Progress
from kupgrade.plan.steps import step_order
from kupgrade.skew.kubeadm import FIXES, Upgrade, enforce, kubelet_skew_of
from kupgrade.versions import parse_kube

RETRY = 5.0  # seconds between eviction attempts (kubectl drain)


def _draining(record: KubeUpgrade | None) -> bool:
    if record is None:
        return False
    entries = (record.parallel or {}).values()
    return record.drain is not None or any(e.drain is not None for e in entries)


def steps_progress(api: Backend) -> list[Progress]:
    """One row per step of the plan under way (or last carried out): the control plane,
    then each node pool; or each step a fleet asked for. A step under way says what it
    waits on, when something holds it."""
    record = upgrade_record(api)
    if record is None:
        return []
    if record.parallel is not None:
        rows = []
        for step_id, entry in sorted(record.parallel.items(), key=lambda e: step_order(e[0])):
            said = "done" if entry.done is not None else entry.blocked or "under way"
            rows.append(_step_row(step_id, entry.step, said))
        return rows
    out = []
    for i, step in enumerate(record.steps):
        said = (
            "done"
            if i < record.index or record.completed
            else (record.blocked or "under way")
            if i == record.index
            else "pending"
        )
        out.append(_step_row(step.id, step, said))
    return out


def _step_row(step_id: str, step: PlanStep, said: str) -> Progress:
    return Progress(f"{step_id} {step.object} to {step.to}", int(said == "done"), 1, said)


class KubeController:
    def __init__(self, api: Backend) -> None:
        self.api = api
        self.changes = api.watch("Node", "Pod")
        self.again = True
        self.seen: Any = None  # the stored record as last seen
        # A pool step walks the pool's nodes in name order and stops at the first not
        # done; a done node is so by its own fields alone (kubelet, its target, cordon),
        # and its check writes nothing. So each (pool, target) remembers how many nodes
        # from the start are done, and a pass looks again only from the first node that
        # changed: a pass costs what changed, not the pool's size (which made a rehearsal
        # grow with the square of the nodes). Kept in memory only: a restart walks anew.
        self.walked: dict[tuple[str, str], int] = {}
        self.pools: dict[str, list[str]] | None = None  # pool -> its nodes, by name
        self.place: dict[str, tuple[str, int]] = {}  # node -> (pool, index in it)
        self.findings = LiveFindings(api)  # the skew rules' findings, kept node by node

    def sync(self) -> None:
        before = self.api.state(STATE) or None
        if not self.changes and not self.again and before == self.seen:
            return  # nothing changed, and no new request (a fleet asks for steps)
        keys = self.changes.drain()
        nodes = [k[2] for k in keys if k[0] == "Node"]
        self._forget(nodes)
        self.findings.changed(nodes)
        # Workload pods come and go all the time; they matter only while a node drains
        # (and then the drain's own retries look again): a pass costs the cluster's size.
        relevant = any(k[0] == "Node" or k[1] == "kube-system" for k in keys)
        record = upgrade_record(self.api) if before is not None else None
        if not (relevant or self.again or before != self.seen or _draining(record)):
            return
        if record is not None and record.parallel is not None:
            self._advance_parallel(record.parallel)
        elif record is not None and not record.completed:
            self._advance(record)
        after = msgspec.to_builtins(record) if record is not None else None
        if after != before and record is not None:
            save_record(self.api, record)
        self.again = after != before
        self.seen = after

    def progress(self) -> list[Progress]:
        """One row per step (steps_progress)."""
        return steps_progress(self.api)

    # --- the plan, step by step ------------------------------------------------------

    def _advance(self, record: KubeUpgrade) -> None:
        steps = record.steps
        while record.index < len(steps):
            step = steps[record.index]
            done = self._carry_out(record, step)
            if not done:
                return
            self.api.record(f"upgrade/{step.id}", "StepDone", f"{step.object} at {v(step.to)}")
            record.index += 1
            record.phase = None
        record.completed = True
        record.blocked = None
        self.api.record("upgrade/cluster", "Completed", f"cluster upgraded to {v(record.target)}")

    def _advance_parallel(self, entries: dict[str, FleetStep]) -> None:
        """A fleet's steps, each started when the fleet's plan allows: every one not done
        goes on (in plan order), each with its own phase, drain and findings. Every
        change is still checked against the live state, the others' changes included."""
        for step_id in sorted(entries, key=step_order):
            entry = entries[step_id]
            if entry.done is not None:
                continue
            step = entry.step
            done = self._carry_out(entry, step)
            if done:
                entry.done = self.api.now()
                entry.blocked = None
                self.api.record(f"upgrade/{step_id}", "StepDone", f"{step.object} at {v(step.to)}")

    def _carry_out(self, work: StepWork, step: PlanStep) -> bool:
        """One step as far as it goes now: the control plane, or a node pool; True when
        it is done."""
        if step.object == "control-plane":
            return self._control_plane(work, step)
        return self._pool(work, step, step.pool)

    def _blocked(self, work: StepWork, change: tuple[str, str, str]) -> bool:
        """The skew rules on the state after `change`; the first violation blocks it. A
        change that passed is not checked again while it is carried out (a drain)."""
        if work.cleared == list(change):
            return False
        first = self.findings.first(change, work.policy)
        if first is None:
            work.cleared = list(change)
            if work.blocked is not None:
                work.blocked = None
                self.api.record(
                    "upgrade/cluster", "Unblocked", f"{change[0]} on {change[1]} may go on"
                )
            return False
        text = f"{first.id}: {first.message}; {first.fix}"
        if work.blocked != text:
            work.blocked = text
            self.api.record(
                "upgrade/cluster",
                "UpgradeBlocked",
                f"{change[0]} on {change[1]} to {v(change[2])} would break {text}",
            )
        return True

    def _kubeadm(self, work: StepWork, step: PlanStep) -> bool:
        """kubeadm's version policies for `kubeadm upgrade apply` of this step, with the
        binary and flags the request names (the target's own kubeadm by default)."""
        kubelets = [kubelet_of(n) for n in self.api.list("Node")]
        target = step.to
        tool = work.kubeadm or Kubeadm()
        kubeadm = tool.version or target
        found = enforce(
            Upgrade(
                cluster=v(step.source),
                kubelets=[v(k) for k in kubelets],
                kubeadm=v(kubeadm),
                new=v(target),
                kubelet_skew=kubelet_skew_of(parse_kube(kubeadm)),
                min_control_plane=tool.min_control_plane,
                allow_experimental=tool.allow_experimental,
                allow_rcs=tool.allow_rcs,
            )
        )
        # P10 is kubeadm's own, coarser kubelet check (one minor before kubeadm 1.29): the
        # controller checks every kubelet against the chosen skew rules before each change
        # itself, so it runs `kubeadm upgrade apply --force` past that one, and says so;
        # with --force asked for, past every skippable finding.
        forced = [f for f in found.skippable if tool.force or f.id == "P10"]
        skippable = [f for f in found.skippable if f not in forced]
        if forced and not found.mandatory and not skippable and not work.forced:
            work.forced = True
            ids = ", ".join(f.id for f in forced)
            self.api.record(
                "upgrade/cluster",
                "KubeadmForced",
                f"kubeadm {ids} passed with "
                f"--force: {forced[0].message}; the kubelets are held to the "
                f"{work.policy} skew rules instead",
            )
        if not found.mandatory and not skippable:
            return False
        first = (found.mandatory or skippable)[0]
        text = f"kubeadm {first.id}: {first.message}; {FIXES.get(first.id, '')}"
        if work.blocked != text:
            work.blocked = text
            self.api.record("upgrade/cluster", "UpgradeBlocked", text)
        return True

    def _control_plane(self, work: StepWork, step: PlanStep) -> bool:
        target = step.to
        planes = sorted(
            (n for n in self.api.list("Node") if is_control_plane(n)),
            key=lambda n: n["metadata"]["name"],
        )
        if work.phase is None:
            if self._kubeadm(work, step):
                return False
            work.phase = "apiservers"
            self.api.record(
                f"upgrade/{step.id}", "StepStarted", f"kubeadm upgrade apply {v(target)}"
            )
        for phase, components in (("apiservers", (APISERVER,)), ("controllers", MANAGERS)):
            if work.phase != phase:
                continue
            for node in planes:
                for component in components:
                    if not self._static(work, component, node["metadata"]["name"], target):
                        return False
            work.phase = "controllers" if phase == "apiservers" else "kubelets"
        return all(self._kubelet(work, node, target) for node in planes)

    def _static(self, work: StepWork, component: str, node: str, target: str) -> bool:
        """One static pod at `target` and ready; False while it is not there yet."""
        pod = self.api.get("Pod", f"{component}-{node}", "kube-system")
        if pod is None:
            return True  # this node does not run it
        running = image_version(pod)
        if running and parse_kube(running) > parse_kube(target):
            return True  # already newer: a step never downgrades
        if running != target:
            if self._blocked(work, (component, node, target)):
                return False
            changed = copy.deepcopy(pod)
            image = changed["spec"]["containers"][0]["image"].rsplit(":", 1)[0]
            changed["spec"]["containers"][0]["image"] = f"{image}:{v(target)}"
            self.api.write(changed)
            self.api.record(key_of(pod), "Upgrade", f"{component} manifest at {v(target)}")
            return False
        return pod_ready(pod) and pod["status"].get("runningImage", "").endswith(v(target))

    def _pool(self, work: StepWork, step: PlanStep, pool: str) -> bool:
        if work.phase is None:
            work.phase = "nodes"
            self.api.record(
                f"upgrade/{step.id}", "StepStarted", f"node pool {pool} to {v(step.to)}"
            )
        target = step.to
        names = self._members(pool)
        done = self.walked.get((pool, target), 0)
        for name in names[done:]:
            node = self.api.get("Node", name)
            if node is None or not self._kubelet(work, node, target):
                self.walked[(pool, target)] = done
                return False
            done += 1
        self.walked[(pool, target)] = done
        return True

    def _members(self, pool: str) -> list[str]:
        """The pool's nodes in name order (the order a step upgrades them in)."""
        if self.pools is None:
            pools: dict[str, list[str]] = {}
            for node in sorted(self.api.list("Node"), key=lambda n: n["metadata"]["name"]):
                pools.setdefault(node_pool(node), []).append(node["metadata"]["name"])
            self.pools = pools
            self.place = {n: (p, i) for p, names in pools.items() for i, n in enumerate(names)}
        return self.pools.get(pool, [])

    def _forget(self, changed: list[str]) -> None:
        """Walks go back to the first node that changed; a node added, gone or moved to
        another pool makes every pool's list anew."""
        for name in changed:
            node = self.api.get("Node", name)
            pool, index = self.place.get(name, (None, 0))
            if node is None or node_pool(node) != pool:
                self.pools, self.place, self.walked = None, {}, {}
                return
            for walk, done in self.walked.items():
                if walk[0] == pool and index < done:
                    self.walked[walk] = index

    # --- one node -----------------------------------------------------------------------

    def _kubelet(self, work: StepWork, node: Obj, target: str) -> bool:
        """The node's kubelet and kube-proxy at `target`: cordon and drain first for a
        minor upgrade, the kubelet restarted, uncordoned. True when it is done."""
        name = node["metadata"]["name"]
        notes = node["metadata"].setdefault("annotations", {})
        current = kubelet_of(node)
        asked = notes.get(KUBELET_TARGET)
        if asked is None and parse_kube(current) > parse_kube(target):
            return self._uncordon(node)  # already newer: a step never downgrades
        if current == target and asked in (None, target):
            if asked is None:
                return self._uncordon(node)
            done = copy.deepcopy(node)  # the node's upgrade is over: said once
            done["metadata"]["annotations"].pop(KUBELET_TARGET)
            done["spec"]["unschedulable"] = False
            self.api.write(done)
            self.api.record(key_of(node), "Done", f"kubelet and kube-proxy at {v(target)}")
            return False
        if asked != target:
            if self._blocked(work, ("kubelet", name, target)):
                return False
            minor = parse_kube(current).minor != parse_kube(target).minor
            if minor and not self._drained(work, node):
                return False
            node = self.api.get("Node", name) or node  # as the cordon left it
            changed = copy.deepcopy(node)
            changed["metadata"]["annotations"][KUBELET_TARGET] = target
            self.api.write(changed)
            self.api.record(key_of(node), "Upgrade", f"kubelet and kube-proxy to {v(target)}")
        return False  # the kubelet restarts; woken by the node's change

    def _uncordon(self, node: Obj) -> bool:
        if not node["spec"].get("unschedulable"):
            return True
        self.api.write(uncordoned(node))
        self.api.record(key_of(node), "Uncordon", "node is schedulable again")
        return False

    def _drained(self, work: StepWork, node: Obj) -> bool:
        """kubectl drain: cordon, evict what may go, wait for it to be gone."""
        name = node["metadata"]["name"]
        if not node["spec"].get("unschedulable"):
            self.api.write(cordoned(node))
            self.api.record(key_of(node), "Drain", "cordoned for drain")
        now = self.api.now()
        pods = evictable(self.api.pods_on(name), now)
        if not pods:
            if work.drain is not None:
                work.drain = None
                self.api.record(key_of(node), "Drained", "no pods left to evict")
            return True
        drain = work.drain
        if drain is None or drain.node != name:
            drain = work.drain = DrainWait(node=name, next=now, held=drain.held if drain else None)
        if now < drain.next:
            return False
        # The API's message alone, without the budget it names (kubeadm's own wording).
        held = [f"{b.pod}: {b.answer.message}" for b in evict_round(self.api, pods).blocked]
        if held and drain.held != held[0]:
            self.api.record(key_of(node), "EvictionBlocked", held[0])
        drain.held = held[0] if held else None
        drain.next = now + RETRY
        self.api.requeue_at(now + RETRY, "Node", name)
        return False
