"""`opm validate` in Python: the structural checks of ConvertToModel (the first error
wins, with opm's exact text), then the model rules as opm's error tree.

Go iterates maps where opm walks packages, channels and bundles, so the order of siblings
in its tree is random; kupgrade sorts them by name so the same catalog always prints the
same text. Each structural error also says which file and blob it is about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kupgrade.collector import paused
from kupgrade.errors import VersionError
from kupgrade.olm import properties
from kupgrade.olm.catalog import (
    SCHEMA_BUNDLE,
    SCHEMA_CHANNEL,
    SCHEMA_PACKAGE,
    BundleBlob,
    Catalog,
    Entry,
    Origin,
)
from kupgrade.olm.graph import channel_head, replaces_chain_error
from kupgrade.olm.imageref import reference_error
from kupgrade.versions import SemVer, go_quote, parse_blang, parse_range, prerelease_error

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1123_LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_RELEASE_MAX_LENGTH = 20
_ZERO = SemVer(0, 0, 0)


class ConvertError(Exception):
    """The first structural problem opm reports, with the blob it is about."""

    def __init__(self, message: str, origin: Origin | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.origin = origin


@dataclass
class Tree:
    """opm's validation error tree: a message and the errors under it."""

    message: str
    children: list[Tree] = field(default_factory=list)

    def add(self, child: Tree | str | None) -> None:
        if child is None:
            return
        node = Tree(child) if isinstance(child, str) else child
        if isinstance(child, str) or child.children:
            self.children.append(node)

    def lines(self, prefix: str = "", connector: str = "") -> list[str]:
        out = [prefix + connector + self.message + (":" if self.children else "")]
        inner = prefix + ("" if not connector else "    " if connector == "└── " else "│   ")
        for i, child in enumerate(self.children):
            last = i == len(self.children) - 1
            out.extend(child.lines(inner, "└── " if last else "├── "))
        return out

    def text(self) -> str:
        return "\n".join(self.lines())

    def leaves(self) -> list[list[str]]:
        if not self.children:
            return [[self.message]]
        return [[self.message, *path] for child in self.children for path in child.leaves()]


@dataclass
class PackageProperty:
    package: str
    version: str
    release: str


@dataclass
class MBundle:
    name: str
    package: str
    entry: Entry
    blob: BundleBlob | None = None
    version: SemVer | None = None
    release: tuple[str, ...] = ()
    deprecation: str | None = None

    @property
    def version_string(self) -> str:
        """model.go VersionString: an entry without a bundle blob keeps semver.Version's
        zero value, so it counts as 0.0.0 in the duplicate-version check."""
        text = str(self.version or _ZERO)
        return f"{text}-{'.'.join(self.release)}" if self.release else text


@dataclass
class MChannel:
    name: str
    bundles: dict[str, MBundle] = field(default_factory=dict)
    deprecation: str | None = None


@dataclass
class MPackage:
    name: str
    default_channel: str
    channels: dict[str, MChannel] = field(default_factory=dict)
    deprecation: str | None = None
    # Bundle name -> its entry in each channel that lists it. opm finds a bundle blob's
    # entries (and a deprecated bundle's) by asking every channel of the package
    # (declcfg_to_model.go), bundles times channels; this index answers it at once.
    members: dict[str, list[MBundle]] = field(default_factory=dict)


@dataclass
class Validation:
    """The outcome of validating one catalog."""

    valid: bool
    stage: str | None = None
    error: str | None = None
    leaves: list[list[str]] = field(default_factory=list)
    where: str | None = None
    heads: dict[str, dict[str, str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"valid": self.valid}
        if not self.valid:
            doc.update(stage=self.stage, error=self.error, leaves=self.leaves)
            if self.where:
                doc["where"] = self.where
        else:
            doc["heads"] = self.heads
        doc["warnings"] = self.warnings
        return doc


@paused()  # the model of a whole catalog: see kupgrade.collector
def validate_catalog(catalog: Catalog) -> Validation:
    """Validate a loaded catalog as `opm validate` would (load errors are raised earlier)."""
    warnings = [
        f"{origin}: unknown schema {schema!r} is kept but not used"
        for origin, schema in catalog.unknown_olm_schemas()
    ]
    try:
        model = convert(catalog)
    except ConvertError as exc:
        where = str(exc.origin) if exc.origin else None
        return Validation(False, "convert", exc.message, [[exc.message]], where, warnings=warnings)
    tree = validate_model(model)
    if tree is not None:
        return Validation(False, "model", tree.text(), tree.leaves(), warnings=warnings)
    heads = {
        p.name: {c.name: _head(c) for c in sorted(p.channels.values(), key=lambda c: c.name)}
        for p in sorted(model.values(), key=lambda p: p.name)
    }
    return Validation(True, heads=heads, warnings=warnings)


def _head(channel: MChannel) -> str:
    return channel_head([b.entry for b in channel.bundles.values()])


# --- ConvertToModel ------------------------------------------------------------------------


def convert(catalog: Catalog) -> dict[str, MPackage]:
    """Build the model, stopping at the first structural error like opm's ConvertToModel."""
    packages = _convert_packages(catalog)
    defined = _convert_channels(catalog, packages)
    bundle_names = _convert_bundles(catalog, packages, defined)
    for name in sorted(defined):
        if defined[name]:
            listed = " ".join(sorted(defined[name]))
            raise ConvertError(
                f"no olm.bundle blobs found in package {go_quote(name)} for olm.channel entries [{listed}]"
            )
    for package in packages.values():
        if package.default_channel and package.default_channel not in package.channels:
            package.channels[package.default_channel] = MChannel(package.default_channel)
    _convert_deprecations(catalog, packages, bundle_names)
    return packages


def _convert_packages(catalog: Catalog) -> dict[str, MPackage]:
    packages: dict[str, MPackage] = {}
    for blob in catalog.packages:
        if not blob.name:
            raise ConvertError("config contains package with no name", blob.origin)
        if blob.name in packages:
            raise ConvertError(f"duplicate package {go_quote(blob.name)}", blob.origin)
        if problems := dns1123_label_errors(blob.name):
            raise ConvertError(
                f"invalid package name {go_quote(blob.name)}: [{' '.join(problems)}]", blob.origin
            )
        packages[blob.name] = MPackage(blob.name, blob.defaultChannel)
    return packages


def _convert_channels(catalog: Catalog, packages: dict[str, MPackage]) -> dict[str, set[str]]:
    defined: dict[str, set[str]] = {}
    for blob in catalog.channels:
        package = packages.get(blob.package)
        if package is None:
            raise ConvertError(
                f"unknown package {go_quote(blob.package)} for channel {go_quote(blob.name)}",
                blob.origin,
            )
        if not blob.name:
            raise ConvertError(
                f"package {go_quote(blob.package)} contains channel with no name", blob.origin
            )
        if blob.name in package.channels:
            raise ConvertError(
                f"package {go_quote(blob.package)} has duplicate channel {go_quote(blob.name)}",
                blob.origin,
            )
        channel = MChannel(blob.name)
        for entry in blob.entries:
            if entry.name in channel.bundles:
                raise ConvertError(
                    f"invalid package {go_quote(blob.package)}, channel {go_quote(blob.name)}: duplicate entry {go_quote(entry.name)}",
                    blob.origin,
                )
            channel.bundles[entry.name] = MBundle(entry.name, blob.package, entry)
            package.members.setdefault(entry.name, []).append(channel.bundles[entry.name])
        # opm keeps only the last channel blob's entries here (a map assignment, not a merge)
        defined[blob.package] = set(channel.bundles)
        package.channels[blob.name] = channel
    return defined


def _convert_bundles(
    catalog: Catalog, packages: dict[str, MPackage], defined: dict[str, set[str]]
) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = {}
    for blob in catalog.bundles:
        if not blob.package:
            raise ConvertError(
                f"package name must be set for bundle {go_quote(blob.name)}", blob.origin
            )
        package = packages.get(blob.package)
        if package is None:
            raise ConvertError(
                f"unknown package {go_quote(blob.package)} for bundle {go_quote(blob.name)}",
                blob.origin,
            )
        names = seen.setdefault(blob.package, set())
        if blob.name in names:
            raise ConvertError(
                f"package {go_quote(blob.package)} has duplicate bundle {go_quote(blob.name)}",
                blob.origin,
            )
        names.add(blob.name)
        version, release = _bundle_version(blob)
        defined.get(blob.package, set()).discard(blob.name)
        members = package.members.get(blob.name, [])
        for bundle in members:
            bundle.blob, bundle.version, bundle.release = blob, version, release
        if not members:
            raise ConvertError(
                f"package {go_quote(blob.package)}, bundle {go_quote(blob.name)} not found in any channel entries",
                blob.origin,
            )
    return seen


def package_properties(blob: BundleBlob) -> list[PackageProperty]:
    """The bundle's `olm.package` properties, after every property decoded as opm's
    property.Parse does (declcfg_to_model.go: "parse properties for bundle %q: %v")."""
    try:
        parsed = properties.parse(list(blob.properties))
    except properties.PropertyError as exc:
        raise ConvertError(
            f"parse properties for bundle {go_quote(blob.name)}: {exc}", blob.origin
        ) from None
    return [
        PackageProperty(p.fields["packageName"], p.fields["version"], p.fields["release"])
        for p in parsed
        if p.kind == SCHEMA_PACKAGE
    ]


def _bundle_version(blob: BundleBlob) -> tuple[SemVer, tuple[str, ...]]:
    props = package_properties(blob)
    if len(props) != 1:
        raise ConvertError(
            f"package {go_quote(blob.package)} bundle {go_quote(blob.name)} must have exactly 1 "
            f"{go_quote(SCHEMA_PACKAGE)} property, found {len(props)}",
            blob.origin,
        )
    prop = props[0]
    if blob.package != prop.package:
        raise ConvertError(
            f"package {go_quote(blob.package)} does not match {go_quote(SCHEMA_PACKAGE)} property {go_quote(prop.package)}",
            blob.origin,
        )
    subject = f"package {go_quote(blob.package)} bundle {go_quote(blob.name)}"
    _check_image(blob.image, f"{subject} image", blob.origin)
    for i, related in enumerate(blob.relatedImages):
        _check_image(related.image, f"{subject} relatedImages[{i}].image", blob.origin)
    try:
        version = parse_blang(prop.version)
    except VersionError as exc:
        raise ConvertError(
            f"error parsing bundle {go_quote(blob.name)} version {go_quote(prop.version)}: {exc.message}",
            blob.origin,
        ) from None
    if problem := release_error(prop.release):
        raise ConvertError(
            f"error parsing bundle {go_quote(blob.name)} release version {go_quote(prop.release)}: {problem}",
            blob.origin,
        )
    return version, tuple(prop.release.split(".")) if prop.release else ()


def _check_image(spec: str, what: str, origin: Origin | None) -> None:
    if spec and (problem := reference_error(spec)):
        raise ConvertError(f"{what}: invalid image pull spec {go_quote(spec)}: {problem}", origin)


def release_error(text: str) -> str | None:
    """operator-registry's NewRelease: dot-separated pre-release identifiers, 20 runes max."""
    if not text:
        return None
    if len(text) > _RELEASE_MAX_LENGTH:
        return f"invalid release {go_quote(text)}: exceeds maximum length of {_RELEASE_MAX_LENGTH} characters"
    problems = []
    for i, segment in enumerate(text.split(".")):
        if problem := prerelease_error(segment):
            problems.append(f"segment {i}: {problem}")
    return f"invalid release {go_quote(text)}: {chr(10).join(problems)}" if problems else None


def dns1123_label_errors(name: str) -> list[str]:
    """apimachinery's IsDNS1123Label, with its messages."""
    errors = []
    if len(name) > 63:
        errors.append("must be no more than 63 characters")
    if not _DNS1123_LABEL.fullmatch(name):
        errors.append(
            "must not contain dots"
            if _DNS1123_SUBDOMAIN.fullmatch(name)
            else _DNS1123_LABEL_MESSAGE
        )
    return errors


def _convert_deprecations(
    catalog: Catalog, packages: dict[str, MPackage], bundles: dict[str, set[str]]
) -> None:
    done: set[str] = set()
    for i, blob in enumerate(catalog.deprecations):
        if not blob.package:
            raise ConvertError(f"package name must be set for deprecation item {i}", blob.origin)
        package = packages.get(blob.package)
        if package is None:
            raise ConvertError(
                f"cannot apply deprecations to an unknown package {go_quote(blob.package)}",
                blob.origin,
            )
        if blob.package in done:
            raise ConvertError(
                f"expected a maximum of one deprecation per package: {go_quote(blob.package)}",
                blob.origin,
            )
        done.add(blob.package)
        references: set[tuple[str, str]] = set()
        for j, entry in enumerate(blob.entries):
            ref = entry.reference
            go_ref = f"declcfg.PackageScopedReference{{Schema:{go_quote(ref.schema)}, Name:{go_quote(ref.name)}}}"
            if not ref.schema:
                raise ConvertError(
                    f"schema must be set for deprecation entry [{j}] for package {go_quote(blob.package)}",
                    blob.origin,
                )
            if (ref.schema, ref.name) in references:
                raise ConvertError(
                    f"duplicate deprecation entry {go_ref} for package {go_quote(blob.package)}",
                    blob.origin,
                )
            references.add((ref.schema, ref.name))
            if ref.schema == SCHEMA_BUNDLE:
                if ref.name not in bundles.get(blob.package, set()):
                    raise ConvertError(
                        f"cannot deprecate bundle {go_quote(ref.name)} for package {go_quote(blob.package)}: bundle not found",
                        blob.origin,
                    )
                for bundle in package.members.get(ref.name, []):
                    bundle.deprecation = entry.message
            elif ref.schema == SCHEMA_CHANNEL:
                if ref.name not in package.channels:
                    raise ConvertError(
                        f"cannot deprecate channel {go_quote(ref.name)} for package {go_quote(blob.package)}: channel not found",
                        blob.origin,
                    )
                package.channels[ref.name].deprecation = entry.message
            elif ref.schema == SCHEMA_PACKAGE:
                if ref.name:
                    raise ConvertError(
                        f"package name must be empty for deprecated package {go_quote(blob.package)} (specified {go_quote(ref.name)})",
                        blob.origin,
                    )
                package.deprecation = entry.message
            else:
                raise ConvertError(
                    f"cannot deprecate object {go_ref} referenced by entry {j} for package {go_quote(blob.package)}: object schema unknown",
                    blob.origin,
                )


# --- Model.Validate ------------------------------------------------------------------------


def validate_model(packages: dict[str, MPackage]) -> Tree | None:
    root = Tree("invalid index")
    for name in sorted(packages):
        root.add(_validate_package(packages[name]))
    return root if root.children else None


def _validate_package(package: MPackage) -> Tree:
    node = Tree(f"invalid package {go_quote(package.name)}")
    if not package.name:
        node.add("package name must not be empty")
    if not package.default_channel:
        node.add("default channel must be set")
    if not package.channels:
        node.add("package must contain at least one channel")
    for name in sorted(package.channels):
        node.add(_validate_channel(package.channels[name]))
    node.add(_duplicate_versions(package))
    if package.deprecation == "":
        node.add("invalid deprecation: message must be set")
    return node


def _duplicate_versions(package: MPackage) -> str | None:
    by_version: dict[str, set[str]] = {}
    for channel in package.channels.values():
        for bundle in channel.bundles.values():
            by_version.setdefault(bundle.version_string, set()).add(bundle.name)
    duplicates = [
        f"{{{version}: [{', '.join(sorted(names))}]}}"
        for version, names in sorted(by_version.items())
        if len(names) > 1
    ]
    return f"duplicate versions found in bundles: [{' '.join(duplicates)}]" if duplicates else None


def _validate_channel(channel: MChannel) -> Tree:
    node = Tree(f"invalid channel {go_quote(channel.name)}")
    if not channel.name:
        node.add("channel name must not be empty")
    if not channel.bundles:
        node.add("channel must contain at least one bundle")
    else:
        node.add(replaces_chain_error([b.entry for b in channel.bundles.values()]))
    for name in sorted(channel.bundles):
        node.add(_validate_bundle(channel.bundles[name]))
    if channel.deprecation == "":
        node.add("invalid deprecation: message must be set")
    return node


def _validate_bundle(bundle: MBundle) -> Tree:
    """model.go Bundle.Validate, its checks in its order. A channel entry that no bundle
    blob fills (only the last channel blob's entries are checked for one in
    ConvertToModel) has no properties, no image and no objects: it fails the
    `olm.package` count and the image check."""
    node = Tree(f"invalid bundle {go_quote(bundle.name)}")
    if not bundle.name:
        node.add("name must be set")
    if bundle.release:
        normalized = f"{bundle.package}-v{bundle.version_string}"
        if bundle.name != normalized:
            node.add(
                f"name {go_quote(bundle.name)} does not match normalized name {go_quote(normalized)}"
            )
    for i, skip in enumerate(bundle.entry.skips):
        if not skip:
            node.add(f"skip[{i}] is empty")
    if bundle.entry.skipRange:
        try:
            parse_range(bundle.entry.skipRange)
        except VersionError as exc:
            node.add(f"invalid skipRange {go_quote(bundle.entry.skipRange)}: {exc.message}")
    blob = bundle.blob
    if blob is None:
        # property.Parse(nil) gives empty, non-nil Properties: zero olm.package properties
        node.add(f"must be exactly one property with type {go_quote(SCHEMA_PACKAGE)}")
    if blob is None or (not blob.image and not blob.has_objects):
        node.add("bundle image must be set")
    if bundle.deprecation == "":
        node.add("invalid deprecation: message must be set")
    if bundle.release and bundle.version is not None and bundle.version.build:
        node.add("cannot use build metadata in version with a release version")
    return node
