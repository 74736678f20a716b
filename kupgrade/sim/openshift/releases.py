"""Release payloads for a simulated cluster, built the way a real release is laid out.

A simulated cluster needs a payload for every release it may be asked to run: the
manifests of each of its operators (namespace, operator Deployment carrying
RELEASE_VERSION, ClusterOperator declaring the version it must reach), the version
controller's own Deployment at runlevel 00 with the release image templated in, and
release-metadata and image-references. The payload is a real OCI image: the controller
pulls, verifies, extracts and orders it exactly as it would a real one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.release.assemble import ReleaseSpec, payload_files
from kupgrade.release.oci import build_image, layout_files
from kupgrade.release.sources import write_tree
from kupgrade.sim.profile import Operator, Spec, operators_of

OPERATOR_LABEL = "kupgrade.io/cluster-operator"
CVO_NAMESPACE = "openshift-cluster-version"
CVO_COMPONENT = "cluster-version-operator"
ART = "registry.example/ocp-v4.0-art-dev"


def component_image(name: str, version: str) -> str:
    return f"{ART}@sha256:{hashlib.sha256(f'{name}:{version}'.encode()).hexdigest()}"


def rendered_config(pool: str, version: str) -> str:
    """The machine config a release renders for a pool (a name derived from the release)."""
    return f"rendered-{pool}-{hashlib.md5(f'{pool}:{version}'.encode()).hexdigest()}"


PROFILE_ANNOTATION = "include.release.openshift.io/self-managed-high-availability"


def _doc(obj: dict[str, Any]) -> bytes:
    """A manifest included in the default (self-managed high-availability) profile."""
    obj["metadata"].setdefault("annotations", {})[PROFILE_ANNOTATION] = "true"
    return (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode()


def _operator_manifests(op: Operator, version: str) -> dict[str, bytes]:
    component = f"{op.name}-operator"
    prefix = f"release-manifests/0000_{op.runlevel:02d}_{component}"
    namespace = f"openshift-{op.name}-operator"
    files = {
        f"{prefix}_00_namespace.yaml": _doc(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        ),
        f"{prefix}_01_deployment.yaml": _doc(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": component,
                    "namespace": namespace,
                    "labels": {OPERATOR_LABEL: op.name},
                },
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": component}},
                    "template": {
                        "metadata": {"labels": {"app": component}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "operator",
                                    "image": component_image(op.name, version),
                                    "env": [{"name": "RELEASE_VERSION", "value": version}],
                                }
                            ]
                        },
                    },
                },
            }
        ),
        f"{prefix}_99_clusteroperator.yaml": _doc(
            {
                "apiVersion": "config.openshift.io/v1",
                "kind": "ClusterOperator",
                "metadata": {"name": op.name},
                "status": {"versions": [{"name": "operator", "version": version}]},
            }
        ),
    }
    for i in range(max(0, op.manifests - 3)):
        files[f"{prefix}_02_config-{i:03d}.yaml"] = _doc(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{op.name}-config-{i:03d}", "namespace": namespace},
                "data": {"version": version},
            }
        )
    return files


def _cvo_manifests(version: str) -> dict[str, bytes]:
    # manifests/ is rendered as a Go template: the controller's own image is the release.
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": CVO_COMPONENT, "namespace": CVO_NAMESPACE},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"k8s-app": CVO_COMPONENT}},
            "template": {
                "metadata": {"labels": {"k8s-app": CVO_COMPONENT}},
                "spec": {
                    "containers": [
                        {
                            "name": "cluster-version-operator",
                            "image": "{{.ReleaseImage}}",
                            "env": [{"name": "RELEASE_VERSION", "value": version}],
                        }
                    ]
                },
            },
        },
    }
    return {
        f"manifests/0000_00_{CVO_COMPONENT}_00_namespace.yaml": _doc(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": CVO_NAMESPACE}}
        ),
        f"manifests/0000_00_{CVO_COMPONENT}_03_deployment.yaml": _doc(deployment),
    }


def _extra(count: int, version: str) -> dict[str, bytes]:
    """Filler manifests spread over runlevels, so a release can have a realistic size."""
    files = {}
    for i in range(count):
        runlevel = 10 + (i % 8) * 10
        files[
            f"release-manifests/0000_{runlevel:02d}_extra-{i % 40:02d}_{i:04d}_configmap.yaml"
        ] = _doc(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"extra-{i:04d}", "namespace": "openshift-config-managed"},
                "data": {"version": version},
            }
        )
    return files


def release_files(spec: Spec, version: str, previous: tuple[str, ...] = ()) -> dict[str, bytes]:
    manifests = _cvo_manifests(version)
    for op in operators_of(spec):
        manifests.update(_operator_manifests(op, version))
    manifests.update(_extra(spec.extra_manifests, version))
    images = {op.name: component_image(op.name, version) for op in operators_of(spec)}
    return payload_files(
        manifests,
        ReleaseSpec(
            version,
            previous,
            metadata={"url": f"https://example.com/errata/{version}"},
            images=images,
        ),
    )


def build_release(spec: Spec, version: str, out: Path) -> str:
    """Write the model release for `version` as an OCI layout; return its manifest digest."""
    image = build_image(release_files(spec, version), version)
    write_tree(out, layout_files(image))
    return image.digest


MODEL_REGISTRY = "sim.kupgrade.local/ocp-release"


def layout_digest(index: Path) -> str:
    """The image digest an OCI layout's index.json names (the cluster's own mirror)."""
    doc = intake.decode_json(intake.read_file(index, "index.json"), str(index))
    manifests = doc.get("manifests") if isinstance(doc, dict) else None
    first = manifests[0] if isinstance(manifests, list) and manifests else None
    digest = first.get("digest") if isinstance(first, dict) else None
    if not isinstance(digest, str):
        raise InputError(
            "is not an OCI image index with a manifest digest",
            file=str(index),
            hint="delete the release mirror directory; it is rebuilt on demand",
        )
    return digest


def model_image(spec: Spec, version: str, home: Path) -> str:
    """The pull spec of the model release of `version`, built into the cluster's mirror."""
    out = home / "releases" / version
    index = out / "index.json"
    digest = layout_digest(index) if index.exists() else build_release(spec, version, out)
    return f"{MODEL_REGISTRY}@{digest}"


def release_source(spec: Spec, home: Path, image: str, version: str) -> str:
    """Where the cluster reads `image` from: a mirror, a model release, or the image itself."""
    if image in spec.mirrors:
        return spec.mirrors[image]
    if image.startswith(MODEL_REGISTRY + "@"):
        for candidate in (home / "releases").glob("*/index.json"):
            if image.endswith(layout_digest(candidate)):
                return str(candidate.parent)
    host = image.split("/", 1)[0]
    if host.split(":")[0] in ("127.0.0.1", "localhost") or not version:
        return image
    # A release the simulated world has never seen: its registry serves the model of it.
    model_image(spec, version, home)
    return str(home / "releases" / version)
