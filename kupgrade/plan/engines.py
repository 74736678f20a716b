"""How other rollout engines size a step, for comparison with our own pools (SPEC E2):
Cluster API MachineDeployments and KubeadmControlPlane, the system-upgrade-controller,
distributed-cloud parallel node upgrades and AKS surge upgrades.

Each engine rounds differently, which is the point of having them side by side: a
MachineDeployment rounds surge up and unavailability down, AKS rounds surge up, and our
machine-config pools round maxUnavailable down but never below one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from kupgrade.errors import InputError
from kupgrade.versions import parse_kube


def _count(value: int | str, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value)


def machine_deployment(data: dict[str, Any]) -> dict[str, Any]:
    """Cluster API mdutil: surge rounds up, unavailable down; both 0 means unavailable 1;
    unavailable is capped at the replicas."""
    replicas = int(data["replicas"])
    surge = _count(data.get("maxSurge", 1), replicas, round_up=True)
    unavailable = _count(data.get("maxUnavailable", 0), replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    unavailable = min(unavailable, replicas)
    return {"surge": surge, "unavailable": unavailable, "max_total": replicas + surge,
            "min_available": replicas - unavailable}  # fmt: skip


def kubeadm_control_plane(data: dict[str, Any]) -> dict[str, Any]:
    """KubeadmControlPlane's webhook: scale-in rollouts need 3 replicas, and the version
    moves at most one minor."""
    if "from" in data:
        old, new = parse_kube(data["from"]), parse_kube(data["to"])
        if new.major != old.major or new.minor - old.minor > 1:
            return {
                "invalid": f"cannot update Kubernetes version from {data['from']} to {data['to']}"
            }
        return {"valid": True}
    if int(data.get("maxSurge", 1)) == 0 and int(data["replicas"]) < 3:
        return {"invalid": "when KubeadmControlPlane is configured to scale-in, replica count "
                "needs to be at least 3"}  # fmt: skip
    return {"valid": True}


def system_upgrade_controller(data: dict[str, Any]) -> dict[str, Any]:
    """A plan's concurrency counts the nodes already applying it."""
    busy = len(data.get("applying", []))
    free = min(int(data["concurrency"]), int(data["nodes"])) - busy
    return {"new_jobs": max(0, free)}


def gdc_parallel(data: dict[str, Any]) -> dict[str, Any]:
    """BareMetalParallelUpgradeConfig (defaults 1 and 0). How concurrentNodes and
    minimumAvailableNodes combine is not documented; we take the stricter of the two."""
    nodes = int(data["pool_nodes"])
    room = nodes - int(data.get("minimumAvailableNodes", 0))
    return {
        "max_parallel": max(0, min(int(data.get("concurrentNodes", 1)), room)),
        "verified": False,
    }


def aks(data: dict[str, Any]) -> dict[str, Any]:
    """AgentPoolUpgradeSettings: fractional surge nodes round up."""
    return {"surge_nodes": _count(data.get("maxSurge", 1), int(data["pool_nodes"]), round_up=True)}


ENGINES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "capi-machinedeployment": machine_deployment,
    "capi-kcp": kubeadm_control_plane,
    "suc": system_upgrade_controller,
    "gdc-parallel": gdc_parallel,
    "aks": aks,
}


def rollout(engine: str, data: Any, where: str = "") -> dict[str, Any]:
    """The engine's sizing of one rollout step; InputError for a missing or bad setting."""
    if engine not in ENGINES:
        raise InputError(
            f"unknown rollout engine {engine!r}", field="engine", hint=", ".join(ENGINES)
        )
    if not isinstance(data, dict):
        raise InputError("must be a mapping of the engine's settings", file=where or None)
    try:
        return ENGINES[engine](data)
    except KeyError as exc:
        raise InputError(f"{engine} needs {exc.args[0]}", file=where or None) from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise InputError(
            f"a setting is not a count or a percentage: {exc}", file=where or None
        ) from None
