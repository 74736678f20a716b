"""How other rollout engines size a step, for comparison with our own pools (SPEC E2):
Cluster API MachineDeployments and KubeadmControlPlane, the system-upgrade-controller,
distributed-cloud parallel node upgrades and AKS surge upgrades.

Each engine rounds differently, which is the point of having them side by side: a
MachineDeployment rounds surge up and unavailability down, AKS rounds surge up, and our
machine-config pools round maxUnavailable down but never below one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from kupgrade.errors import InputError
from kupgrade.versions import go_quote


def _count(value: int | str, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value)


def int_or_percent_error(value: Any) -> str | None:
    """apimachinery intstr getIntOrPercentValueSafely's error for a setting, or None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return None
    if not isinstance(value, str):
        return "invalid value for IntOrString: invalid type: neither int nor percentage"
    if not value.endswith("%"):
        return "invalid value for IntOrString: invalid type: string is not a percentage"
    number = value[:-1]
    if not re.fullmatch(r"[+-]?[0-9]+", number):
        return (
            f"invalid value for IntOrString: invalid value {go_quote(value)}: "
            f"strconv.Atoi: parsing {go_quote(number)}: invalid syntax"
        )
    return None


def _md_errors(data: dict[str, Any]) -> list[str]:
    """cluster-api internal/webhooks/machinedeployment.go validateRolloutStrategy (v1beta2)."""
    errors = []
    for key in ("maxUnavailable", "maxSurge"):
        if key in data and (problem := int_or_percent_error(data[key])):
            errors.append(f"{key}: must be either an int or a percentage: {problem}")
    surge, unavailable = data.get("maxSurge"), data.get("maxUnavailable")
    if (
        isinstance(surge, int)
        and isinstance(unavailable, int)
        and surge == 0
        and unavailable == 0
        and not isinstance(surge, bool)
    ):
        errors.append("maxUnavailable and maxSurge cannot both be 0")
    return errors


def machine_deployment(data: dict[str, Any]) -> dict[str, Any]:
    """Cluster API mdutil: surge rounds up, unavailable down; percentages that both round
    to 0 mean unavailable 1; unavailable is capped at the replicas. Settings the webhook
    refuses (both set to the integer 0, a string that is no percentage) are refused."""
    if errors := _md_errors(data):
        return {"invalid": errors[0], "errors": errors}
    replicas = int(data["replicas"])
    surge = _count(data.get("maxSurge", 1), replicas, round_up=True)
    unavailable = _count(data.get("maxUnavailable", 0), replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    unavailable = min(unavailable, replicas)
    return {
        "surge": surge,
        "unavailable": unavailable,
        "max_total": replicas + surge,
        "min_available": replicas - unavailable,
    }


def _int_value(value: Any) -> int:
    """intstr IntValue: a string's Atoi, 0 when it is no number (so "50%" counts as 0)."""
    if isinstance(value, str):
        return int(value) if re.fullmatch(r"[+-]?[0-9]+", value) else 0
    return int(value)


def _tolerant(text: str) -> tuple[int, int, int] | str:
    """blang/semver ParseTolerant's (major, minor, patch), or its failure."""
    core = str(text).strip().removeprefix("v")
    numbers = re.split(r"[-+]", core, maxsplit=1)[0].split(".")
    if len(numbers) > 3 or not all(re.fullmatch(r"[0-9]+", n) for n in numbers):
        return f"Invalid character(s) found in version {go_quote(str(text))}"
    padded = [int(n) for n in numbers] + [0] * (3 - len(numbers))
    return padded[0], padded[1], padded[2]


def _kcp_version(data: dict[str, Any]) -> list[str]:
    """kubeadmcontrolplane_webhook.go validateVersion: parse both tolerantly; at most one
    minor up whatever the patch (pre-releases compared without their suffix)."""
    old, new = _tolerant(data["from"]), _tolerant(data["to"])
    if isinstance(old, str):
        return [f"failed to parse current kubeadmcontrolplane version: {data['from']}: {old}"]
    if isinstance(new, str):
        return [f"failed to parse updated kubeadmcontrolplane version: {data['to']}: {new}"]
    if new >= (old[0], old[1] + 2, 0):
        return [f"cannot update Kubernetes version from {data['from']} to {data['to']}"]
    return []


def _kcp_strategy(data: dict[str, Any]) -> list[str]:
    """kubeadmcontrolplane_webhook.go validateRolloutStrategy."""
    errors = []
    if data.get("type", "RollingUpdate") != "RollingUpdate":
        errors.append("only RollingUpdate is supported")
    if "maxSurge" in data:
        surge = _int_value(data["maxSurge"])
        replicas = data.get("replicas")
        if surge == 0 and replicas is not None and int(replicas) < 3:
            errors.append(
                "when KubeadmControlPlane is configured to scale-in, replica count needs to "
                "be at least 3"
            )
        if surge not in (0, 1):
            errors.append("value must be 1 or 0")
    return errors


def kubeadm_control_plane(data: dict[str, Any]) -> dict[str, Any]:
    """KubeadmControlPlane's webhook: only RollingUpdate, maxSurge 0 or 1, scale-in
    rollouts need 3 replicas, and the version moves at most one minor."""
    errors = _kcp_version(data) if "from" in data else _kcp_strategy(data)
    if errors:
        return {"invalid": errors[0], "errors": errors}
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
