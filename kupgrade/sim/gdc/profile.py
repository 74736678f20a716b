"""What a distributed-cloud profile must hold (SPEC G1, G6): a valid role and version,
one control-plane pool, components in known stages, faults of its own kinds, and no
OpenShift or Kubernetes sections."""

from __future__ import annotations

import math

import msgspec

from kupgrade.errors import InputError, VersionError
from kupgrade.sim.homes import cluster_names, opened
from kupgrade.sim.platform import CreateAsk
from kupgrade.sim.profile import (
    DEFAULT_GDC_COMPONENTS,
    GDC_ROLES,
    Gdc,
    Spec,
    pool_role,
    span,
)
from kupgrade.versions import GdcVersion

COMPONENT_STAGES = (
    "preflight-check-operator",
    "lifecycle-controllers",
    "cluster-operator",
    "control-plane-load-balancer",
    "connect-agent",
    "cluster-addons",
)
PREFLIGHT_CHECKS = ("cluster-upgrade", "network-health", "node")


def check_gdc(spec: Spec, where: str) -> None:
    """A distributed-cloud profile: a valid role and version, one control-plane pool."""
    gdc = spec.gdc or Gdc()
    try:
        GdcVersion.parse(spec.version)
    except VersionError as exc:
        raise InputError(exc.message, file=where, field="spec.version") from None
    if gdc.role not in GDC_ROLES:
        raise InputError(
            f"role {gdc.role!r} is not one of {', '.join(GDC_ROLES)}",
            file=where,
            field="spec.gdc.role",
        )
    if (gdc.role == "user") != (gdc.managed_by is not None):
        raise InputError(
            "a user cluster names its management cluster, and only a user cluster does",
            file=where,
            field="spec.gdc.managedBy",
        )
    roles = [pool_role(p) for p in spec.pools]
    for i, (pool, role) in enumerate(zip(spec.pools, roles, strict=True)):
        field = f"spec.pools[{i}]"
        if role not in ("control-plane", "load-balancer", "worker"):
            raise InputError(
                f"role {role!r} is not control-plane, load-balancer or worker",
                file=where,
                field=f"{field}.role",
            )
        if pool.concurrent_nodes < 1 or pool.minimum_available < 0:
            raise InputError(
                "concurrentNodes must be at least 1, minimumAvailable at least 0",
                file=where,
                field=f"{field}.concurrentNodes",
            )
        if pool.version is not None:
            if role != "worker":
                raise InputError(
                    "only worker pools can be left at another version",
                    file=where,
                    field=f"{field}.version",
                )
            try:
                GdcVersion.parse(pool.version)
            except VersionError as exc:
                raise InputError(exc.message, file=where, field=f"{field}.version") from None
    if gdc.load_balancer not in ("bundled", "manual"):
        raise InputError("must be bundled or manual", file=where, field="spec.gdc.loadBalancer")
    if gdc.load_balancer == "manual" and "load-balancer" in roles:
        raise InputError(
            "a load-balancer pool needs the bundled load balancer",
            file=where,
            field="spec.gdc.loadBalancer",
        )
    if roles.count("control-plane") != 1 or roles.count("load-balancer") > 1:
        raise InputError(
            "a distributed-cloud cluster has one control-plane pool and at most one "
            "load-balancer pool",
            file=where,
            field="spec.pools",
            hint="name them control-plane and load-balancer, or set their role",
        )
    names = set()
    for i, c in enumerate(gdc.components or []):
        names.add(c.name)
        if c.stage not in COMPONENT_STAGES:
            raise InputError(
                f"stage {c.stage!r} is not one of {', '.join(COMPONENT_STAGES)}",
                file=where,
                field=f"spec.gdc.components[{i}].stage",
            )
        span(c.minutes, where, f"spec.gdc.components[{i}].minutes")
        span(c.downtime, where, f"spec.gdc.components[{i}].downtime")
    names |= {c.name for c in DEFAULT_GDC_COMPONENTS} if gdc.components is None else set()
    span(gdc.preflight_minutes, where, "spec.gdc.preflightMinutes")
    if not (math.isfinite(gdc.health_check_seconds) and 1 <= gdc.health_check_seconds <= 86400):
        raise InputError(
            "must be between 1 and 86400 seconds", file=where, field="spec.gdc.healthCheckSeconds"
        )
    for i, f in enumerate(spec.faults):
        if f.component is not None and f.component not in names:
            raise InputError(
                f"fault names component {f.component!r}, which the cluster does not have",
                file=where,
                field=f"spec.faults[{i}].component",
            )
        if f.preflight is not None and f.preflight not in PREFLIGHT_CHECKS:
            raise InputError(
                f"preflight check {f.preflight!r} is not one of {', '.join(PREFLIGHT_CHECKS)}",
                file=where,
                field=f"spec.faults[{i}].preflight",
            )
        if not 0 <= f.health_failures <= 100_000:
            raise InputError(
                "must be between 0 and 100,000",
                file=where,
                field=f"spec.faults[{i}].healthFailures",
            )
    if spec.olm is not None:
        raise InputError("OLM runs on OpenShift clusters", file=where, field="spec.olm")
    if spec.kube is not None:
        raise InputError("applies to platform: kubernetes", file=where, field="spec.kube")


def shape_gdc(spec: Spec, ask: CreateAsk) -> Spec:
    """`cluster create --platform gdc`: the version it needs, --role and --managed-by."""
    if not ask.version_given:
        raise InputError(
            "a distributed-cloud cluster needs its version",
            field="--version",
            hint="pass --version, e.g. --version 1.28.500-gke.120",
        )
    gdc = spec.gdc or Gdc()
    if ask.role is not None:
        gdc = msgspec.structs.replace(gdc, role=ask.role)
    if ask.managed_by is not None:
        gdc = msgspec.structs.replace(gdc, managed_by=ask.managed_by)
    if gdc.managed_by is not None:
        _check_manager(gdc.managed_by)
    return msgspec.structs.replace(spec, gdc=gdc)


def _check_manager(name: str) -> None:
    """A user cluster's manager: an admin or hybrid cluster of the kupgrade home."""
    if name not in cluster_names():
        raise InputError(
            f"no cluster named {name!r} to manage this one",
            field="--managed-by",
            hint=f"create it first: `kupgrade cluster create {name} --platform gdc --role admin`",
        )
    with opened(name) as (_, _store, spec):
        role = spec.gdc.role if spec.gdc else None
    if role not in ("admin", "hybrid"):
        raise InputError(
            f"cluster {name} is not a distributed-cloud admin or hybrid cluster",
            field="--managed-by",
            hint="a user cluster is managed by an admin or hybrid cluster",
        )
