"""A loaded payload as data: what `release manifests -o json` prints and the tests compare
with the conformance data (field names follow it; versionHash also in the controller's
own spelling)."""

from __future__ import annotations

from typing import Any

from kupgrade.release.inclusion import apply_action
from kupgrade.release.manifest import Manifest
from kupgrade.release.payload import Payload


def _manifest_row(manifest: Manifest) -> dict[str, Any]:
    return {
        "file": manifest.file,
        "group": manifest.id.group,
        "kind": manifest.id.kind,
        "namespace": manifest.id.namespace,
        "name": manifest.id.name,
        "action": apply_action(manifest.annotations, manifest.file),
    }


def manifests_json(payload: Payload, raw: bool = False) -> dict[str, Any]:
    """The load result; field names follow the conformance data (version_hash also as
    versionHash, the controller's own spelling)."""
    return {
        "release": payload.release_json(),
        "major_version": payload.metadata.major,
        "included": [
            {
                "index": i,
                **_manifest_row(m),
                **({"raw": m.raw.decode("utf-8", "replace")} if raw else {}),
            }
            for i, m in enumerate(payload.included, start=1)
        ],
        "excluded": [{**_manifest_row(e.manifest), "reason": e.reason} for e in payload.excluded],
        "ignored_files": payload.ignored,
        "skipped_files": [
            {"file": s.file, "reason": s.reason, "detail": s.detail} for s in payload.skipped
        ],
        "total": payload.total,
        "version_hash": payload.version_hash,
        "versionHash": payload.version_hash,
        "warnings": list(payload.metadata.warnings),
    }
