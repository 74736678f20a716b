"""The sample dataset kupgrade owns: an OpenShift-like release line, 4.12 to 4.15.

Generated (deterministically) so that `make demo` and the tests work without ../shared.
It mirrors the seed's `oc adm upgrade` example: a cluster at 4.13.40 on stable-4.14 sees
4.14.23-4.14.27, 4.13.41 and 4.13.42 as recommended, and 4.14.21/4.14.22 carry two risks
(a PromQL rule on Azure registry storage and an Always rule on router reloads). amd64
digests of those versions are the seed's; every other digest is derived from the version.

Layout written by `write_sample(dir)`:
    releases/<minor>/<version>-<arch>.json     release-metadata documents (+ payload, architecture)
    graph-data/{version,LICENSE,raw/metadata.json,channels/*.yaml,blocked-edges/*.yaml}
    metrics/cluster.om                         the example cluster's metrics (OpenMetrics snapshot):
                                               Azure, user-provisioned registry storage, not vSphere
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from kupgrade.errors import InputError
from kupgrade.outputs import staging_dir

REPOSITORY = "quay.io/openshift-release-dev/ocp-release"
ARCHES = ("amd64", "arm64", "multi")
MULTI_SINCE = (4, 14)

# z-streams per minor (real streams skip numbers) and the day each minor went GA.
Z_STREAMS: dict[tuple[int, int], tuple[int, ...]] = {
    (4, 12): (0, 1, 2, 5, 8, 12, 20, 30, 40, 50, 55, 60),
    (4, 13): (0, 1, 3, 5, 8, 10, 15, 20, 25, 30, 35, 38, 40, 41, 42),
    (4, 14): (0, 1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 21, 22, 23, 24, 25, 26, 27),
    (4, 15): (0, 1, 2, 3, 5, 6, 8, 10, 11, 12),
}
GA_DAY = {(4, 12): 0, (4, 13): 140, (4, 14): 280, (4, 15): 420}
PRERELEASES = ("4.15.0-rc.0", "4.15.0-rc.1")
CANDIDATE_ONLY = ("4.15.11", "4.15.12")  # too new for fast/stable
STABLE_FROM_Z = 3  # stable channels start at x.y.3
MIN_DAYS_BEFORE = 7  # an update source must be out at least a week before its target

SEED_DIGESTS = {
    "4.14.27": "4d30b359aa6600a89ed49ce6a9a5fdab54092bcb821a25480fdfbc47e66af9ec",
    "4.14.26": "4fe7d4ccf4d967a309f83118f1a380a656a733d7fcee1dbaf4d51752a6372890",
    "4.14.25": "a0ef946ef8ae75aef726af1d9bbaad278559ad8cab2c1ed1088928a0087990b6",
    "4.14.24": "0a34eac4b834e67f1bca94493c237e307be2c0eae7b8956d4d8ef1c0c462c7b0",
    "4.14.23": "f8465817382128ec7c0bc676174bad0fb43204c353e49c146ddd83a5b3d58d92",
    "4.13.42": "dcf5c3ad7384f8bee3c275da8f886b0bc9aea7611d166d695d0cf0fff40a0b55",
    "4.13.41": "dbb8aa0cf53dc5ac663514e259ad2768d8c82fd1fe7181a4cfb484e3ffdbd3ba",
    "4.14.22": "7093fa606debe63820671cc92a1384e14d0b70058d4b4719d666571e1fc62190",
    "4.14.21": "6e3fba19a1453e61f8846c6b0ad3abf41436a3550092cbfd364ad4ce194582b7",
}

AZURE_PROMQL = """topk(1,
  group by (type) (cluster_infrastructure_provider{_id="",type="Azure"})
  or
  0 * group by (type) (cluster_infrastructure_provider{_id=""})
)
* on () group_left (secret)
topk(1,
  group by (secret) (kube_secret_info{_id="",namespace="openshift-image-registry",secret="image-registry-private-configuration-user"})
  or
  0 * group by (secret) (kube_secret_info{_id="",namespace="openshift-image-registry"})
)
"""
VSPHERE_PROMQL = """max(
  cluster_infrastructure_provider{_id="",type=~"VSphere|None"}
  or
  0 * cluster_infrastructure_provider{_id=""}
)
"""


@dataclass(frozen=True, slots=True)
class Release:
    version: str
    minor: tuple[int, int]
    z: int
    pre: str = ""

    @property
    def day(self) -> int:
        return GA_DAY[self.minor] + 7 * self.z - (7 if self.pre else 0)

    @property
    def ga(self) -> bool:
        return not self.pre


def releases() -> list[Release]:
    out = [Release(f"{a}.{b}.{z}", (a, b), z) for (a, b), zs in Z_STREAMS.items() for z in zs]
    for text in PRERELEASES:
        base, pre = text.split("-", 1)
        a, b, z = (int(x) for x in base.split("."))
        out.append(Release(text, (a, b), z, pre))
    return out


def arches_of(release: Release) -> tuple[str, ...]:
    return ARCHES if release.minor >= MULTI_SINCE else ARCHES[:2]


def digest(version: str, arch: str) -> str:
    if arch == "amd64" and version in SEED_DIGESTS:
        return SEED_DIGESTS[version]
    return hashlib.sha256(f"kupgrade-sample {version} {arch}".encode()).hexdigest()


def previous_of(release: Release, everything: list[Release]) -> list[str]:
    """Earlier releases of the same minor, and of the previous minor out a week before."""
    prior_minor = (release.minor[0], release.minor[1] - 1)
    found = []
    for other in everything:
        if other is release or not other.ga:
            continue
        same_minor_earlier = other.minor == release.minor and other.day < release.day
        older_minor = other.minor == prior_minor and other.day <= release.day - MIN_DAYS_BEFORE
        if same_minor_earlier or older_minor:
            found.append(other.version)
    if release.pre == "rc.1":
        found.append("4.15.0-rc.0")
    if release.version == "4.15.0":
        found.extend(PRERELEASES)
    return found


def release_document(release: Release, arch: str, everything: list[Release]) -> dict[str, object]:
    metadata = {
        "url": f"https://access.redhat.com/errata/RHBA-{2023 + release.minor[1] - 12}:{1000 + 37 * release.z}"
    }
    if arch == "multi":
        metadata["release.openshift.io/architecture"] = "multi"
    return {
        "kind": "cincinnati-metadata-v0",
        "version": release.version,
        "previous": previous_of(release, everything),
        "next": [],
        "metadata": metadata,
        "payload": f"{REPOSITORY}@sha256:{digest(release.version, arch)}",
        "architecture": arch,
    }


def channels(everything: list[Release]) -> dict[str, list[str]]:
    by_minor: dict[tuple[int, int], list[Release]] = {}
    for release in everything:
        by_minor.setdefault(release.minor, []).append(release)
    out: dict[str, list[str]] = {}
    for minor in Z_STREAMS:
        span = [by_minor.get((minor[0], minor[1] - 1), []), by_minor[minor]]
        members = [r for group in span for r in group]
        name = f"{minor[0]}.{minor[1]}"
        out[f"candidate-{name}"] = [r.version for r in members]
        fast = [r for r in members if r.ga and r.version not in CANDIDATE_ONLY]
        out[f"fast-{name}"] = [r.version for r in fast]
        out[f"stable-{name}"] = [
            r.version for r in fast if r.z >= STABLE_FROM_Z or r.minor != minor
        ]
    out["eus-4.12"] = list(out["stable-4.12"])
    out["eus-4.14"] = sorted(
        set(out["stable-4.12"]) | set(out["stable-4.13"]) | set(out["stable-4.14"]),
        key=lambda v: tuple(int(x) for x in v.split(".")),
    )
    return out


def blocked_edges() -> dict[str, dict[str, object]]:
    files: dict[str, dict[str, object]] = {
        # Unconditional blocks: a pulled release, and one edge set that must not be used.
        "4.13.8.yaml": {"to": "4.13.8", "from": ".*"},
        "4.12.5.yaml": {"to": "4.12.5", "from": "4[.]12[.][0-2][+].*"},
    }
    for z in Z_STREAMS[(4, 14)]:
        if z <= 22:
            files[f"4.14.{z}-IngressDegradedOnRouterReloads.yaml"] = {
                "to": f"4.14.{z}",
                "from": "4[.]13[.].*",
                "url": "https://issues.redhat.com/browse/NE-1689",
                "name": "IngressDegradedOnRouterReloads",
                "message": (
                    "Incoming HTTP requests to services exposed by Routes may fail while routers "
                    "reload their configuration, especially when made with Apache HTTPClient "
                    "versions before 5.0. The problem is more likely to occur in clusters with "
                    "higher number of Routes and corresponding endpoints."
                ),
                "matchingRules": [{"type": "Always"}],
            }
        if 14 <= z <= 22:
            files[f"4.14.{z}-AzureRegistryImageMigrationUserProvisioned.yaml"] = {
                "to": f"4.14.{z}",
                "from": "4[.](13[.].*|14[.]([0-9]|1[0-3]))[+].*",
                "url": "https://issues.redhat.com/browse/IR-468",
                "name": "AzureRegistryImageMigrationUserProvisioned",
                "message": (
                    "In Azure clusters with the user-provisioned registry storage, the in-cluster "
                    "image registry component may struggle to complete the cluster update."
                ),
                "matchingRules": [{"type": "PromQL", "promql": {"promql": AZURE_PROMQL}}],
            }
    for z in (0, 1, 2, 3):
        files[f"4.15.{z}-VSphereNodeNameChanges.yaml"] = {
            "to": f"4.15.{z}",
            "from": "4[.]14[.].*",
            "url": "https://access.redhat.com/solutions/7024180",
            "name": "VSphereNodeNameChanges",
            "message": (
                "vSphere clusters leveraging the vSphere cloud provider may lose node names which "
                "can have serious impacts on the stability of the control plane and workloads."
            ),
            # The Always fallback makes an unevaluable PromQL count as exposed.
            "matchingRules": [
                {"type": "PromQL", "promql": {"promql": VSPHERE_PROMQL}},
                {"type": "Always"},
            ],
        }
    for text in PRERELEASES:
        files[f"{text}-PreRelease.yaml"] = {
            "to": text,
            "from": ".*",
            "url": "https://issues.redhat.com/browse/OTA-1599",
            "name": "PreRelease",
            "message": "This is a pre-release version, and you should update to a release version instead.",
            "matchingRules": [{"type": "Always"}],
        }
    return files


RAW_METADATA = {
    # A graph administrator's fix-up: an extra path from 4.12.50 into 4.13.1.
    "4.13.1": {"io.openshift.upgrades.graph.previous.add": "4.12.50"},
}

LICENSE_TEXT = """Sample data generated by kupgrade (kupgrade.sim.sample) for demonstrations and tests.
Versions, channels and risks imitate OpenShift's public graph-data; digests other than the
few quoted in the kupgrade seed documents are synthetic. Apache-2.0.
"""


SNAPSHOT_END_S = 1_767_225_600  # 2026-01-01T00:00:00Z, the newest sample of the snapshot
EXAMPLE_CLUSTER = {"version": "4.13.40", "channel": "stable-4.14"}


def metrics_snapshot(end_s: int = SNAPSHOT_END_S, minutes: int = 10) -> str:
    """The example cluster as its monitoring stack sees it: 30 s scrapes for `minutes`.

    An Azure cluster whose image registry uses user-provisioned storage, so the Azure
    registry risk applies to it and the vSphere one does not.
    """
    series = [
        ("cluster_infrastructure_provider", 'type="Azure",namespace="openshift-cluster-version"'),
        (
            "kube_secret_info",
            'namespace="openshift-image-registry",secret="image-registry-private-configuration-user"',
        ),
        (
            "kube_secret_info",
            'namespace="openshift-image-registry",secret="installation-pull-secrets"',
        ),
        ("cluster_version", 'type="current",version="4.13.40"'),
    ]
    lines: list[str] = []
    for name in sorted({n for n, _ in series}):
        lines.append(f"# TYPE {name} gauge")
        for metric, labels in series:
            if metric == name:
                start = end_s - 60 * minutes
                lines += [f"{name}{{{labels}}} 1 {t}" for t in range(start, end_s + 1, 30)]
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def _dump_yaml(doc: object) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)


def write_sample(target: Path) -> Path:
    """Write the dataset to `target` (created; must not exist or be empty) atomically."""
    target = target.resolve()
    if target.exists() and any(target.iterdir()):
        raise InputError(
            "already exists and is not empty", file=str(target), hint="choose a new directory"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_dir(target.parent, ".kupgrade-sample-")
    try:
        _write(staging)
        if target.exists():
            target.rmdir()
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _write(root: Path) -> None:
    everything = releases()
    for release in everything:
        for arch in arches_of(release):
            path = (
                root
                / "releases"
                / f"{release.minor[0]}.{release.minor[1]}"
                / f"{release.version}-{arch}.json"
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                json.dumps(release_document(release, arch, everything), indent=2) + "\n"
            )
    data = root / "graph-data"
    for sub in ("channels", "blocked-edges", "raw"):
        (data / sub).mkdir(parents=True, exist_ok=True)
    (data / "version").write_text("1.1.0\n")
    (data / "LICENSE").write_text(LICENSE_TEXT)
    (data / "raw" / "metadata.json").write_text(json.dumps(RAW_METADATA, indent=2) + "\n")
    for name, versions in channels(everything).items():
        (data / "channels" / f"{name}.yaml").write_text(
            _dump_yaml({"name": name, "versions": versions})
        )
    for name, doc in blocked_edges().items():
        (data / "blocked-edges" / name).write_text(_dump_yaml(doc))
    (root / "metrics").mkdir()
    (root / "metrics" / "cluster.om").write_text(metrics_snapshot())
