"""Changing what Debian's docker-registry stores, to see a reader refuse it."""

from __future__ import annotations

import httpx

from tests.support.processes import RegistryProcess


def tamper_layer(registry: RegistryProcess, pull_spec: str) -> None:
    """Flip one byte in the middle of the first layer of the image `pull_spec`
    (HOST/REPOSITORY@sha256:…) where the registry keeps it on disk."""
    repository, digest = pull_spec.split("/", 1)[1].rsplit("@", 1)
    accept = {"Accept": "application/vnd.oci.image.manifest.v1+json"}
    manifest = httpx.get(
        f"{registry.base}/v2/{repository}/manifests/{digest}", headers=accept
    ).json()
    hexa = manifest["layers"][0]["digest"].removeprefix("sha256:")
    blob = registry.log.parent / "data/docker/registry/v2/blobs/sha256" / hexa[:2] / hexa / "data"
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0xFF
    blob.write_bytes(bytes(data))
