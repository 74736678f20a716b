"""The registry of platforms (sim/platform.py): a platform is one package under sim/ and
one line here. Everything that differs between OpenShift, distributed cloud and plain
Kubernetes is asked of the platform this registry names, never switched on by name
elsewhere."""

from __future__ import annotations

from kupgrade.cluster.backend import Backend
from kupgrade.errors import InputError
from kupgrade.sim.gdc.platform import DISTRIBUTED_CLOUD
from kupgrade.sim.kubernetes.platform import KUBERNETES
from kupgrade.sim.openshift.platform import OPENSHIFT
from kupgrade.sim.platform import Platform
from kupgrade.sim.profile import Spec

PLATFORMS: dict[str, Platform] = {p.name: p for p in (OPENSHIFT, DISTRIBUTED_CLOUD, KUBERNETES)}


def platform_of(spec: Spec) -> Platform:
    """A profile's platform: `gdc`, `kubernetes`, or else OpenShift, whose profiles name
    the infrastructure it runs on instead (AWS, BareMetal, None, ...)."""
    return PLATFORMS.get(spec.platform, OPENSHIFT)


def platform_named(name: str, field: str = "--platform") -> Platform:
    """The platform a user named (openshift, gdc, kubernetes)."""
    found = PLATFORMS.get(name)
    if found is None:
        raise InputError(f"no platform {name!r}", field=field, hint=", ".join(PLATFORMS))
    return found


def platform_serving(api: Backend) -> Platform:
    """The platform of the cluster behind `api` (a served simulated one, or a real one),
    as its objects tell: each platform is asked in the registry's order."""
    return next(p for p in PLATFORMS.values() if p.recognizes(api))
