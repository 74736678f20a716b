"""What an OpenShift profile must hold: no distributed-cloud or Kubernetes sections, and
an OLM section whose subscriptions name its catalogs (SPEC F)."""

from __future__ import annotations

from kupgrade.errors import InputError
from kupgrade.sim.profile import Olm, Spec


def check_openshift(spec: Spec, where: str) -> None:
    _no_gdc(spec, where)
    if spec.olm is not None:
        _check_olm(spec.olm, where)


OLM_POLICIES = ("documented", "olm-v0", "semver")
OLD_NAMES = ("seed",)  # what `documented` was called before: profiles keep working


def _check_olm(olm: Olm, where: str) -> None:
    if olm.policy not in OLM_POLICIES + OLD_NAMES:
        raise InputError(
            f"policy {olm.policy!r} is not one of {', '.join(OLM_POLICIES)}",
            file=where,
            field="spec.olm.policy",
        )
    if olm.start_seconds < 0 or olm.install_timeout_seconds <= 0:
        raise InputError(
            "startSeconds must be 0 or more and installTimeoutSeconds more than 0",
            file=where,
            field="spec.olm",
        )
    names = {(c.namespace, c.name) for c in olm.catalogs}
    for i, c in enumerate(olm.catalogs):
        if bool(c.path) == bool(c.image):
            raise InputError(
                "a catalog gives a path or an image", file=where, field=f"spec.olm.catalogs[{i}]"
            )
    for i, sub in enumerate(olm.subscriptions):
        if (sub.source_namespace, sub.source) not in names:
            raise InputError(
                f"subscription {sub.package} names catalog {sub.source_namespace}/"
                f"{sub.source}, which the profile does not have",
                file=where,
                field=f"spec.olm.subscriptions[{i}].source",
            )
        if sub.approval not in ("Automatic", "Manual"):
            raise InputError(
                "approval is Automatic or Manual",
                file=where,
                field=f"spec.olm.subscriptions[{i}].approval",
            )


def _no_gdc(spec: Spec, where: str) -> None:
    """Distributed-cloud settings in an OpenShift profile are a mistake, not a no-op."""
    if spec.kube is not None:
        raise InputError("applies to platform: kubernetes", file=where, field="spec.kube")
    if spec.gdc is not None:
        raise InputError(
            "applies to platform: gdc",
            file=where,
            field="spec.gdc",
            hint="add `platform: gdc`, or remove the gdc section",
        )
    for i, f in enumerate(spec.faults):
        if f.component is not None or f.preflight is not None or f.health_failures:
            raise InputError(
                "component, preflight and healthFailures faults apply to platform: gdc",
                file=where,
                field=f"spec.faults[{i}]",
            )
    for i, p in enumerate(spec.pools):
        if (
            p.role is not None
            or p.version is not None
            or (p.concurrent_nodes, p.minimum_available) != (1, 0)
        ):
            raise InputError(
                "role, version, concurrentNodes and minimumAvailable apply to platform: gdc",
                file=where,
                field=f"spec.pools[{i}]",
                hint="an OpenShift pool sets maxUnavailable",
            )
