"""What a plain Kubernetes profile must hold (SPEC H6): a Kubernetes version, a
control-plane pool, no OpenShift or distributed-cloud sections, and a kubeadm shape
that names nodes the profile has."""

from __future__ import annotations

import msgspec

from kupgrade.cluster.kubeadm import CONTROL_PLANE_ROLE
from kupgrade.errors import InputError, VersionError
from kupgrade.sim.platform import CreateAsk
from kupgrade.sim.profile import Kube, KubeadmTool, Spec, node_names
from kupgrade.versions import parse_kube


def check_kube(spec: Spec, where: str) -> None:
    """A plain Kubernetes profile: a Kubernetes version, a control-plane pool, no
    OpenShift or distributed-cloud sections."""
    try:
        parse_kube(spec.version)
    except VersionError as exc:
        raise InputError(
            f"{spec.version!r} is not a Kubernetes version: {exc.message}",
            file=where,
            field="spec.version",
            hint="e.g. v1.30.4",
        ) from None
    if not any("control-plane" in (p.name, p.role) for p in spec.pools):
        raise InputError(
            "a Kubernetes cluster needs a control-plane pool",
            file=where,
            field="spec.pools",
            hint="name a pool control-plane",
        )
    for section, value in (("gdc", spec.gdc), ("olm", spec.olm), ("operators", spec.operators)):
        if value is not None:
            raise InputError(
                f"{section} applies to OpenShift or distributed-cloud clusters",
                file=where,
                field=f"spec.{section}",
            )
    if spec.kube is not None:
        _check_kube_shape(spec, spec.kube, where)


KUBE_COMPONENTS = (
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "cloud-controller-manager",
)


def _check_kube_shape(spec: Spec, kube: Kube, where: str) -> None:
    planes = {n for p in spec.pools if "control-plane" in (p.name, p.role) for n in node_names(p)}
    nodes = {n for p in spec.pools for n in node_names(p)}
    versions = [(f"spec.kube.kubeProxy.{n}", n, v, nodes) for n, v in kube.kube_proxy.items()]
    for node, components in kube.static_pods.items():
        for component, version in components.items():
            if component not in KUBE_COMPONENTS:
                raise InputError(
                    f"{component!r} is not one of {', '.join(KUBE_COMPONENTS)}",
                    file=where,
                    field=f"spec.kube.staticPods.{node}",
                )
            versions.append((f"spec.kube.staticPods.{node}.{component}", node, version, planes))
    tool = kube.kubeadm or KubeadmTool()
    for key, given in (("version", tool.version), ("minControlPlane", tool.min_control_plane)):
        if given is not None:
            try:
                parse_kube(given)
            except VersionError as exc:
                raise InputError(
                    exc.message, file=where, field=f"spec.kube.kubeadm.{key}"
                ) from None
    for field, node, version, known in versions:
        if node not in known:
            raise InputError(
                f"{node} is not a {'control-plane ' if known is planes else ''}node of the profile",
                file=where,
                field=field,
            )
        try:
            parse_kube(version)
        except VersionError as exc:
            raise InputError(exc.message, file=where, field=field) from None


def shape_kube(spec: Spec, ask: CreateAsk) -> Spec:
    """`cluster create --platform kubernetes`: the version it needs, a control-plane pool
    (the profile's master pool, renamed) of --control-planes nodes."""
    if not ask.version_given:
        raise InputError(
            "a Kubernetes cluster needs its version",
            field="--version",
            hint="pass --version, e.g. --version v1.30.4",
        )
    pools = []
    for given in spec.pools:
        pool = given
        if given.name in ("master", CONTROL_PLANE_ROLE):
            pool = msgspec.structs.replace(given, name=CONTROL_PLANE_ROLE, role=CONTROL_PLANE_ROLE)
            if ask.control_planes is not None:
                pool = msgspec.structs.replace(
                    pool, nodes=ask.control_planes, machines=[], created=[]
                )
        pools.append(pool)
    return msgspec.structs.replace(spec, pools=pools, version=spec.version.lstrip("v"))
