"""A registry+v1 bundle directory (manifests/ and metadata/) as operator-sdk lays one out,
for the `kupgrade olm render` and `render-template` tests and examples."""

from __future__ import annotations

from pathlib import Path

import yaml


def write_bundle(
    root: Path,
    package: str = "etcd",
    version: str = "0.9.4",
    *,
    replaces: str = "",
    description: str = "Runs etcd clusters.",
) -> Path:
    """A bundle with one CSV (owning one CRD, needing one API) and its CRD."""
    name = f"{package}operator.v{version}"
    csv = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": name,
            "annotations": {"olm.skipRange": f"<{version}", "containerImage": "x<y>&z"},
        },
        "spec": {
            "displayName": f"{package} operator",
            "description": description,
            "version": version,
            "icon": [{"base64data": "PHN2Zy8+", "mediatype": "image/svg+xml"}],
            "customresourcedefinitions": {
                "owned": [
                    {"name": f"clusters.{package}.example.com", "version": "v1", "kind": "Cluster"}
                ],
                "required": [
                    {"name": "backups.storage.example.com", "version": "v1", "kind": "Backup"}
                ],
            },
            "install": {
                "strategy": "deployment",
                "spec": {
                    "deployments": [
                        {
                            "name": "operator",
                            "spec": {
                                "template": {
                                    "spec": {
                                        "containers": [
                                            {
                                                "name": "op",
                                                "image": f"quay.io/example/{package}:v{version}",
                                            }
                                        ]
                                    }
                                }
                            },
                        }
                    ]
                },
            },
            "relatedImages": [
                {"name": "operand", "image": f"quay.io/example/{package}-operand:v1"}
            ],
            **({"replaces": replaces} if replaces else {}),
        },
    }
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"clusters.{package}.example.com"},
        "spec": {
            "group": f"{package}.example.com",
            "names": {"kind": "Cluster", "plural": "clusters"},
            "versions": [{"name": "v1", "served": True, "storage": True}],
        },
    }
    annotations = {
        "annotations": {
            "operators.operatorframework.io.bundle.package.v1": package,
            "operators.operatorframework.io.bundle.channels.v1": "stable",
        }
    }
    dependencies = {
        "dependencies": [
            {"type": "olm.package", "value": {"packageName": "storage", "version": ">=1.0.0"}}
        ]
    }
    (root / "manifests").mkdir(parents=True, exist_ok=True)
    (root / "metadata").mkdir(parents=True, exist_ok=True)
    (root / "manifests" / f"{package}.clusterserviceversion.yaml").write_text(yaml.safe_dump(csv))
    (root / "manifests" / "clusters.crd.yaml").write_text(yaml.safe_dump(crd))
    (root / "metadata" / "annotations.yaml").write_text(yaml.safe_dump(annotations))
    (root / "metadata" / "dependencies.yaml").write_text(yaml.safe_dump(dependencies))
    return root
