"""Kubernetes versions: `v1.30.2`, compared by minor (SPEC H1-H6)."""

from __future__ import annotations

from kupgrade.errors import VersionError
from kupgrade.versions.semver import SemVer, parse_semver

# --- Kubernetes ------------------------------------------------------------------------------


def parse_kube(text: str) -> SemVer:
    """Parse a Kubernetes version (`v1.30.2`, `1.30.2`, `v1.31.0-alpha.1+abc`)."""
    stripped = text[1:] if text.startswith("v") else text
    version = parse_semver(stripped)
    if version is None:
        raise VersionError(f"{text!r} is not a Kubernetes version (vMAJOR.MINOR.PATCH)")
    return version


def format_kube(version: SemVer) -> str:
    return f"v{version}"
