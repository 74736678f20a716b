"""Version schemes used across kupgrade.

* OpenShift releases are SemVer 2.0; the update graph appends the architecture as build
  metadata (`4.9.0+amd64`) and Cincinnati compares versions *ignoring* build metadata.
* Kubernetes components print `v1.30.2` (SemVer with a `v`).
* Distributed-cloud (GDC bare metal) versions look like `1.28.100-gke.146`; `-gke.N` is a
  build counter of the patch, not a pre-release: it sorts *after* `1.28.100`.
* Minor distance is counted along a release line that may jump (GDC goes 1.16 -> 1.28,
  one step): SPEC G2, G4.

Kubernetes versions are x.y.z (SPEC H1); skew rules compare their minors (SPEC H2-H6).

We parse SemVer ourselves rather than through the `semver` package because every caller
needs a plain tuple sort key (sorting tens of thousands of graph nodes through a cmp
function is slow), exact round-tripping of the text, and the two non-SemVer readings above.
"""

from __future__ import annotations

from kupgrade.versions.blang import blang_error, go_quote, parse_blang, prerelease_error
from kupgrade.versions.gdc import GDC_RELEASE_LINE, GdcVersion, ReleaseLine
from kupgrade.versions.goduration import go_duration, go_truncate
from kupgrade.versions.kube import format_kube, parse_kube
from kupgrade.versions.ranges import RangeError, SemverRange, parse_range
from kupgrade.versions.semver import (
    Precedence,
    SemVer,
    sort_versions_desc,
    split_arch,
    version_sort_key,
    with_arch,
)

__all__ = [
    "GDC_RELEASE_LINE",
    "GdcVersion",
    "Precedence",
    "RangeError",
    "ReleaseLine",
    "SemVer",
    "SemverRange",
    "blang_error",
    "format_kube",
    "go_duration",
    "go_quote",
    "go_truncate",
    "parse_blang",
    "parse_kube",
    "parse_range",
    "prerelease_error",
    "sort_versions_desc",
    "split_arch",
    "version_sort_key",
    "with_arch",
]
