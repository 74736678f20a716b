"""The one drain every node-draining controller uses (the machine-config controller's,
the distributed-cloud maintenance mode's and kubeadm's `kubectl drain`): kubectl's
filters decide which pods go, a cordon keeps new ones off, and an eviction round asks
each pod to leave through the Eviction API and says what blocked it.

Which pods go, in kubectl's words (staging/src/k8s.io/kubectl/pkg/drain/filters.go):
filters run in order (deleted, DaemonSet, mirror, local storage, unreplicated), the first
that refuses a pod decides for it, and any error aborts the drain before anything is
evicted.

One difference on purpose: kubectl keeps only the last filter's status, so a local-storage
warning is dropped when a later filter passes the pod (a TODO in kubectl's source). We
keep every warning a filter raised, which is what the conformance data expects and what
a user needs to hear before emptyDir data is deleted.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kupgrade.cluster.backend import Backend, Eviction
from kupgrade.cluster.objects import MIRROR_ANNOTATION, Obj, key_of
from kupgrade.versions.times import parse_rfc3339

DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"


class DrainPod(NamedTuple):
    """A pod as the filters see it (made once per kind of pod: `drain` reads the traits
    straight off Pod objects and caches the filters' verdict by them)."""

    name: str
    namespace: str = "default"
    owner: str = "none"  # the controller's kind, or none
    empty_dir: bool = False
    phase: str = "Running"
    mirror: bool = False
    deleted_seconds_ago: int | None = None

    @property
    def finished(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def _traits(pod: dict[str, Any], now: float | None) -> tuple[str, bool, str, bool, int | None]:
    """What the filters look at (DrainPod's fields after the name): written for speed, as
    a rehearsal reads ~1,000,000 pods this way at 500 nodes (plain lookups, no generator).
    `now` None: the caller's flags never look at how long ago a pod was deleted."""
    meta = pod["metadata"]
    owner = "none"
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller"):
            owner = ref.get("kind", "none")
            break
    empty_dir = False
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if isinstance(volume, dict) and "emptyDir" in volume:
            empty_dir = True
            break
    notes = meta.get("annotations")
    deleted = meta.get("deletionTimestamp")
    status = pod.get("status")
    return (
        owner,
        empty_dir,
        status.get("phase", "Running") if status else "Running",
        MIRROR_ANNOTATION in notes if notes else False,
        int(now - parse_rfc3339(deleted)) if deleted and now is not None else None,
    )


class Flags(NamedTuple):
    """`kubectl drain`'s flags that decide which pods go. A tuple: it is half of the key
    under which a drain's verdicts are cached (hashed once per pod)."""

    ignore_daemonsets: bool = False
    delete_emptydir_data: bool = False
    force: bool = False
    skip_wait_for_delete_timeout: int = 0

    @staticmethod
    def of(args: list[str]) -> Flags:
        timeout = next(
            (
                int(a.split("=", 1)[1])
                for a in args
                if a.startswith("--skip-wait-for-delete-timeout=")
            ),
            0,
        )
        return Flags(
            "--ignore-daemonsets" in args,
            "--delete-emptydir-data" in args,
            "--force" in args,
            timeout,
        )


@dataclass(frozen=True)
class Status:
    delete: bool
    reason: str = "Okay"  # Okay, Skip, Warning or Error
    message: str = ""


OKAY = Status(True)
SKIP = Status(False, "Skip")


def _deleted(pod: DrainPod, flags: Flags) -> Status:
    gone = pod.deleted_seconds_ago
    timeout = flags.skip_wait_for_delete_timeout
    return SKIP if timeout > 0 and gone is not None and gone > timeout else OKAY


def _daemonset(pod: DrainPod, flags: Flags) -> Status:
    if pod.owner != "DaemonSet" or pod.finished:
        return OKAY
    if not flags.ignore_daemonsets:
        return Status(False, "Error", DAEMONSET_FATAL)
    return Status(False, "Warning", DAEMONSET_WARNING)


def _mirror(pod: DrainPod, flags: Flags) -> Status:
    return SKIP if pod.mirror else OKAY


def _local_storage(pod: DrainPod, flags: Flags) -> Status:
    if not pod.empty_dir or pod.finished:
        return OKAY
    if not flags.delete_emptydir_data:
        return Status(False, "Error", LOCAL_STORAGE_FATAL)
    return Status(True, "Warning", LOCAL_STORAGE_WARNING)


def _unreplicated(pod: DrainPod, flags: Flags) -> Status:
    if pod.finished or pod.owner != "none":
        return OKAY
    if flags.force:
        return Status(True, "Warning", UNMANAGED_WARNING)
    return Status(False, "Error", UNMANAGED_FATAL)


FILTERS: list[Callable[[DrainPod, Flags], Status]] = [
    _deleted,
    _daemonset,
    _mirror,
    _local_storage,
    _unreplicated,
]


@dataclass
class DrainResult:
    errors: dict[str, list[str]] = field(default_factory=dict)  # message -> pods
    warnings: dict[str, list[str]] = field(default_factory=dict)
    evicted: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "errors": [{"message": m, "pods": p} for m, p in self.errors.items()],
            "warnings": [{"message": m, "pods": p} for m, p in self.warnings.items()],
            "evicted": self.evicted,
        }


def drain(pods: list[Obj], flags: Flags, now: float) -> tuple[DrainResult, list[Obj]]:
    """kubectl drain's decision for the node's pods, and the pods it lets go, in the
    order given (none when it refuses). What a controller's drain asks at every retry (a
    5,000-node rehearsal: ~500,000 pods): a pod is named only where the decision names
    it, and no DrainPod is made for it."""
    # Only --skip-wait-for-delete-timeout asks how long ago a pod was deleted.
    since = now if flags.skip_wait_for_delete_timeout > 0 else None
    result = DrainResult()
    going = []
    for pod in pods:
        final, warnings = _verdict(_traits(pod, since), flags)
        for message in warnings:
            result.warnings.setdefault(message, []).append(_named(pod))
        if final.reason == "Error":
            message = final.message
            if not message.lower().startswith("cannot delete"):
                message = f"cannot delete {message}"
            result.errors.setdefault(message, []).append(_named(pod))
        elif final.delete:
            going.append(pod)
    if result.errors:
        return result, []
    result.evicted = [_named(pod) for pod in going]
    return result, going


def _named(pod: Obj) -> str:
    """A pod as kubectl's drain names it: namespace/name."""
    meta = pod["metadata"]
    return f"{meta.get('namespace', 'default')}/{meta['name']}"


# The filters look at a pod's traits, never at its name: pods alike are judged alike, and a
# rehearsal drains ~1,000,000 pods of a few dozen kinds at 500 nodes. So the filter chain
# runs once per kind of pod (and set of flags), its verdict cached.
@functools.lru_cache(maxsize=4096)
def _verdict(traits: tuple[Any, ...], flags: Flags) -> tuple[Status, tuple[str, ...]]:
    """The last filter's status for a pod with these traits, and the warnings raised on
    the way (the first filter that refuses the pod decides for it)."""
    pod = DrainPod("", "", *traits)
    status, warnings = OKAY, []
    for check in FILTERS:
        status = check(pod, flags)
        if status.reason == "Warning":
            warnings.append(status.message)
        if not status.delete:
            break
    return status, tuple(warnings)


# What the distributed cloud's maintenance mode and the simulated kubeadm clusters' drain
# take (`kubectl drain --ignore-daemonsets --delete-emptydir-data --force`): every pod but
# DaemonSet and mirror pods goes, and nothing aborts the drain.
EVERY_POD = Flags(ignore_daemonsets=True, delete_emptydir_data=True, force=True)


def evictable(pods: list[Obj], now: float, flags: Flags = EVERY_POD) -> list[Obj]:
    """The pods a drain with `flags` evicts, in the order given (none when the drain is
    refused: `drain` says why)."""
    return drain(pods, flags, now)[1]


def cordoned(node: Obj) -> Obj:
    """A copy of the node marked unschedulable (`kubectl cordon`), for the caller to write."""
    changed = copy.deepcopy(node)
    changed["spec"]["unschedulable"] = True
    return changed


def uncordoned(node: Obj) -> Obj:
    """A copy of the node schedulable again (`kubectl uncordon`), for the caller to write."""
    changed = copy.deepcopy(node)
    changed["spec"]["unschedulable"] = False
    return changed


class Blocked(NamedTuple):
    """A pod the Eviction API refused to let go, with its answer (a tuple, as Answer is)."""

    pod: str  # as `oc` names it: pod/NAMESPACE/NAME
    answer: Eviction

    def __str__(self) -> str:
        """The pod and the API's whole answer (its message, then the budget it names)."""
        cause = f" {self.answer.cause}" if self.answer.cause else ""
        return f"{self.pod}: {self.answer.message}{cause}"


@dataclass
class Round:
    """One eviction round over a node's pods."""

    blocked: list[Blocked] = field(default_factory=list)  # refused, in pod order
    terminating: list[Obj] = field(default_factory=list)  # asked before, not gone yet
    left: int = 0  # pods that must still leave, this round's evictions included


def evict_round(api: Backend, pods: list[Obj], *, budgets: bool = True) -> Round:
    """Ask every pod that has not been asked yet to leave: through the Eviction API,
    where PodDisruptionBudgets decide, or (`budgets=False`: a distributed-cloud release
    before 1.29, whose maintenance taint removes pods) by deleting it outright."""
    done = Round(left=len(pods))
    for pod in pods:
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            done.terminating.append(pod)
        elif not budgets:
            api.delete("Pod", meta["name"], meta.get("namespace", ""))
        else:
            answer = api.evict(pod)
            if answer.code != 200:
                done.blocked.append(Blocked(key_of(pod), answer))
    return done
