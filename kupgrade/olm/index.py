"""A catalog indexed for resolution: per package its channels (as graphs), each bundle's
version and deprecation marks. Built from the blobs without validating them, because a
cluster resolves against whatever its catalog serves, valid or not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kupgrade.collector import paused
from kupgrade.errors import VersionError
from kupgrade.olm.catalog import SCHEMA_BUNDLE, BundleBlob, Catalog
from kupgrade.olm.graph import ChannelGraph
from kupgrade.olm.properties import MISSING
from kupgrade.olm.validate import ConvertError, package_properties
from kupgrade.versions import SemVer, parse_blang

LEGACY_DEPRECATED = "olm.deprecated"
UNPROJECTED = ("olm.bundle.object", "olm.csv.metadata")


@dataclass
class PackageIndex:
    name: str
    default_channel: str
    channels: dict[str, ChannelGraph] = field(default_factory=dict)
    versions: dict[str, SemVer | None] = field(default_factory=dict)  # bundle blob order
    legacy_deprecated: set[str] = field(default_factory=set)  # `olm.deprecated` property
    deprecated: set[str] = field(default_factory=set)  # olm.deprecations bundle entries
    # What a cluster installs from a bundle: its image, and the properties OLM projects
    # onto its CSV (operatorframework.io/properties), inline manifests left out.
    images: dict[str, str] = field(default_factory=dict)
    properties: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def channel(self, name: str) -> ChannelGraph | None:
        """The named channel, or the default channel when `name` is empty."""
        return self.channels.get(name or self.default_channel)

    def channel_order(self) -> list[ChannelGraph]:
        """The default channel first, then the others by name (OLM's order)."""
        return sorted(
            self.channels.values(), key=lambda c: (c.name != self.default_channel, c.name)
        )


@dataclass
class CatalogIndex:
    packages: dict[str, PackageIndex]

    @staticmethod
    @paused()  # every package, channel and version of a catalog: see kupgrade.collector
    def build(catalog: Catalog) -> CatalogIndex:
        packages: dict[str, PackageIndex] = {}
        for blob in catalog.packages:
            packages.setdefault(blob.name, PackageIndex(blob.name, blob.defaultChannel))
        for channel in catalog.channels:
            package = packages.setdefault(channel.package, PackageIndex(channel.package, ""))
            package.channels.setdefault(
                channel.name, ChannelGraph(channel.package, channel.name, channel.entries)
            )
        for bundle in catalog.bundles:
            package = packages.setdefault(bundle.package, PackageIndex(bundle.package, ""))
            package.versions.setdefault(bundle.name, _version(bundle))
            package.images.setdefault(bundle.name, bundle.image)
            package.properties.setdefault(
                bundle.name,
                [
                    {"type": p.type, "value": p.value}
                    for p in bundle.properties
                    if p.type not in UNPROJECTED and p.value is not MISSING
                ],
            )
            if any(p.type == LEGACY_DEPRECATED for p in bundle.properties):
                package.legacy_deprecated.add(bundle.name)
        for deprecation in catalog.deprecations:
            deprecated = packages.get(deprecation.package)
            if deprecated is not None:
                deprecated.deprecated.update(
                    e.reference.name
                    for e in deprecation.entries
                    if e.reference.schema == SCHEMA_BUNDLE
                )
        return CatalogIndex(packages)


def _version(bundle: BundleBlob) -> SemVer | None:
    try:
        props = package_properties(bundle)
        return parse_blang(props[0].version) if len(props) == 1 else None
    except (ConvertError, VersionError):
        return None
