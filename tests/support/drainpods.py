"""Pods described as kubectl drain's filters see them (DrainPod), made into the Pod
objects the drain reads, and the filters' decision made the slow, plain way: the
reference the drain's cached verdicts are held to (SPEC E3)."""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.drain import FILTERS, DrainPod, DrainResult, Flags, Status, drain
from kupgrade.cluster.objects import MIRROR_ANNOTATION
from kupgrade.versions.times import rfc3339

NOW = 1_700_000_000.0


def as_pod(pod: DrainPod, now: float = NOW) -> dict[str, Any]:
    """The Pod object with these traits."""
    meta: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace}
    if pod.owner != "none":
        meta["ownerReferences"] = [{"kind": pod.owner, "name": "owner", "controller": True}]
    if pod.mirror:
        meta["annotations"] = {MIRROR_ANNOTATION: "mirror"}
    if pod.deleted_seconds_ago is not None:
        meta["deletionTimestamp"] = rfc3339(now - pod.deleted_seconds_ago)
    volumes = [{"name": "scratch", "emptyDir": {}}] if pod.empty_dir else []
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"volumes": volumes},
        "status": {"phase": pod.phase},
    }


def judged(pods: list[DrainPod], flags: Flags) -> DrainResult:
    """The drain's decision over these pods, as the controllers ask it."""
    return drain([as_pod(p) for p in pods], flags, NOW)[0]


def reference(pods: list[DrainPod], flags: Flags) -> dict[str, Any]:
    """kubectl's decision, every filter run on every pod in turn (no cached verdicts):
    the first filter that refuses a pod decides for it, every warning is kept, and any
    error leaves nothing evicted (staging/src/k8s.io/kubectl/pkg/drain/drain.go)."""
    errors: dict[str, list[str]] = {}
    warnings: dict[str, list[str]] = {}
    evicted = []
    for pod in pods:
        status = Status(True)
        for check in FILTERS:
            status = check(pod, flags)
            if status.reason == "Warning":
                warnings.setdefault(status.message, []).append(pod.key)
            if not status.delete:
                break
        if status.reason == "Error":
            message = status.message
            if not message.lower().startswith("cannot delete"):
                message = f"cannot delete {message}"
            errors.setdefault(message, []).append(pod.key)
        elif status.delete:
            evicted.append(pod.key)
    return {
        "errors": [{"message": m, "pods": p} for m, p in errors.items()],
        "warnings": [{"message": m, "pods": p} for m, p in warnings.items()],
        "evicted": [] if errors else evicted,
    }
