"""`opm alpha render-template basic|semver` (operator-registry alpha/template/basic/basic.go
and alpha/template/semver/semver.go at 4f9d6f22).

Both expand bundle references into rendered olm.bundle blobs. opm pulls each image; here
a reference is rendered offline from a local bundle directory, or found among rendered
olm.bundle blobs given beside the template (by their `image`); anything else is refused.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kupgrade import intake
from kupgrade.errors import InputError, VersionError
from kupgrade.intake import YamlError
from kupgrade.olm.catalog import SCHEMA_BUNDLE, Catalog, Origin
from kupgrade.olm.declcfg_write import DeclConfig, RenderedBundle
from kupgrade.olm.rendering import add_blob, csv_document, finish, render_path
from kupgrade.versions import SemVer, go_quote, parse_blang

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
BASIC = "olm.template.basic"
SEMVER = "olm.semver"
ARCHETYPES = ("candidate", "fast", "stable")  # channelPriorities 0, 1, 2
_STREAM_PRIORITY = {"minor": 2, "major": 1, "": 0}

Renderer = Callable[[str], DeclConfig]


@dataclass
class BundleSource:
    """Where bundle references are rendered from: local bundle directories, or blobs
    rendered before (a catalog whose olm.bundle blobs carry the referenced `image`)."""

    rendered: dict[str, RenderedBundle] = field(default_factory=dict)
    image_template: str = ""  # a bundle directory's image (opm's --alpha-image-ref-template)

    def add_rendered(self, cfg: DeclConfig) -> None:
        for bundle in cfg.bundles:
            self.rendered.setdefault(str(bundle.blob.get("image", "")), bundle)

    def render(self, ref: str) -> DeclConfig:
        """One reference as the DeclarativeConfig opm's bundle renderer returns."""
        path = Path(ref)
        if ref and path.is_dir():
            cfg = render_path(path, self.image_template)
            if cfg.packages or cfg.channels or not cfg.bundles:
                raise InputError(f"{ref!r} is not a bundle directory (manifests/ and metadata/)")
            return cfg
        if ref in self.rendered:
            return finish(DeclConfig(bundles=[self.rendered[ref]]))
        raise InputError(
            f"bundle image {ref!r} cannot be reached: give a local bundle directory or "
            "its rendered olm.bundle blob with --bundles"
        )


def read_template(file: Path) -> Any:
    """The template's first YAML or JSON document (opm reads one)."""
    data = intake.read_file(file, "template")
    try:
        docs = intake.load_yaml_all(intake.decode_utf8(data, str(file)), str(file), _LOADER)
    except YamlError as exc:
        raise InputError(f"decoding template schema: {exc.reason}", file=str(file)) from None
    return next((d for d in docs if d is not None), None)


# --- basic ------------------------------------------------------------------------------


def render_basic(doc: Any, renderer: Renderer) -> DeclConfig:
    """basic.go Render: the entries as they are, each bundle entry ({schema, image})
    replaced by the bundle its image renders to."""
    if not isinstance(doc, dict):
        raise InputError("unmarshalling template: the template must be an object")
    if doc.get("schema") != BASIC:
        raise InputError(
            f"template has unknown schema ({go_quote(str(doc.get('schema') or ''))}), "
            f"should be {go_quote(BASIC)}"
        )
    entries = doc.get("entries") or []
    if not isinstance(entries, list):
        raise InputError("unmarshalling template: entries must be a list")
    cfg = DeclConfig()
    references: list[str] = []
    typed = Catalog(source="template")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not entry.get("schema"):
            raise InputError(f"entries[{index}]: object is missing root schema field")
        # declcfg.LoadSlice: each entry decodes into its schema's struct (or fails)
        typed.add(entry, Origin("template entries", index + 1))
        if entry["schema"] == SCHEMA_BUNDLE:
            if not _is_bundle_template(entry):
                raise InputError("unexpected fields present in basic template bundle")
            references.append(str(entry["image"]))
        else:
            add_blob(cfg, entry)
    for ref in references:
        cfg.bundles.extend(renderer(ref).bundles)
    return cfg


def _is_bundle_template(entry: dict[str, Any]) -> bool:
    """basic.go isBundleTemplate: schema and image, no package, properties or related images."""
    return (
        bool(entry.get("image"))
        and not entry.get("package")
        and not entry.get("properties")
        and not entry.get("relatedImages")
    )


# --- semver -----------------------------------------------------------------------------

_SEMVER_FIELDS = {
    "schema",
    "generateMajorChannels",
    "generateMinorChannels",
    "defaultChannelTypePreference",
    *ARCHETYPES,
}


@dataclass
class SemverTemplate:
    generate_major: bool
    generate_minor: bool
    preference: str
    bundles: dict[str, list[str]]  # archetype -> images in template order


def parse_semver(doc: Any) -> SemverTemplate:
    """semver.go readFile: strict fields, the schema, and the generate options' defaults."""
    if not isinstance(doc, dict):
        raise InputError("render: unable to read file: the template must be an object")
    for key in doc:
        if key not in _SEMVER_FIELDS:
            raise InputError(
                f"render: unable to read file: error unmarshaling JSON: while decoding JSON: "
                f"json: unknown field {go_quote(str(key))}"
            )
    if doc.get("schema") != SEMVER:
        raise InputError(
            f"render: unable to read file: readFile: input file has unknown schema, should be {go_quote(SEMVER)}"
        )
    major = _flag(doc, "generateMajorChannels")
    minor = _flag(doc, "generateMinorChannels")
    if not major and not minor:
        minor = True
    preference = doc.get("defaultChannelTypePreference") or ""
    if preference == "":
        preference = "minor" if minor else "major"
    elif preference in ("minor", "major"):
        if not (minor if preference == "minor" else major):
            raise InputError(
                f"render: unable to read file: schema attribute mismatch: "
                f"DefaultChannelTypePreference set to '{preference}' doesn't make sense if not "
                f"generating {preference}-version channels"
            )
    else:
        raise InputError(
            f"render: unable to read file: unknown DefaultChannelTypePreference: "
            f"{go_quote(str(preference))} Valid values are 'major' or 'minor'"
        )
    bundles: dict[str, list[str]] = {}
    for archetype in ARCHETYPES:
        section = doc.get(archetype) or {}
        if not isinstance(section, dict):
            raise InputError(f"render: unable to read file: {archetype} must be an object")
        listed = section.get("bundles") or []
        if not isinstance(listed, list) or not all(isinstance(b, dict) for b in listed):
            raise InputError(f"render: unable to read file: {archetype}.bundles must be a list")
        for key in [*section, *(k for b in listed for k in b)]:
            if key not in ("bundles", "image"):
                raise InputError(
                    "render: unable to read file: error unmarshaling JSON: while decoding "
                    f"JSON: json: unknown field {go_quote(str(key))}"
                )
        bundles[archetype] = [str(b.get("image") or "") for b in listed]
    return SemverTemplate(major, minor, str(preference), bundles)


def _flag(doc: dict[str, Any], key: str) -> bool:
    value = doc.get(key, False)
    if not isinstance(value, bool):
        raise InputError(f"render: unable to read file: {key} must be true or false")
    return value


@dataclass
class _Tuple:
    arch: str
    kind: str
    parent: str
    name: str
    version: SemVer
    index: int


def render_semver(template: SemverTemplate, renderer: Renderer) -> DeclConfig:
    """semver.go Render: render every bundle once, read their versions per archetype,
    generate the channels and link them."""
    # opm finds each reference's bundle again by its rendered image; bundle directories
    # may all render without one, so the reference keeps its bundle here.
    images: dict[str, RenderedBundle] = {}
    out = DeclConfig()
    for archetype in ARCHETYPES:
        for image in template.bundles[archetype]:
            if image in images:
                continue
            rendered = renderer(image)
            if len(rendered.bundles) != 1:
                raise InputError(
                    f"bundle reference {go_quote(image)} resulted in {len(rendered.bundles)} bundles, expected 1"
                )
            images[image] = rendered.bundles[0]
            out.merge(rendered)
    if not out.bundles:
        raise InputError("render: no bundles specified or no bundles could be rendered")
    package = ""
    versions: dict[str, dict[str, SemVer]] = {}
    for archetype in ARCHETYPES:
        found, package = _channel_versions(template.bundles[archetype], images, out, package)
        _no_build_conflicts(found)
        versions[archetype] = found
    out.channels, default = _generate(template, versions, package)
    out.packages[0]["defaultChannel"] = default
    _package_metadata(out, default)
    return out


def _channel_versions(
    images: list[str], rendered: dict[str, RenderedBundle], cfg: DeclConfig, package: str
) -> tuple[dict[str, SemVer], str]:
    """getVersionsFromChannel: each listed bundle's name and version; the first bundle
    names the package, which every other must belong to."""
    entries: dict[str, SemVer] = {}
    for image in images:
        bundle = rendered.get(image)
        if bundle is None:
            raise InputError(
                f"render: unable to post-process bundle info: supplied bundle image name "
                f"{go_quote(image)} not found in rendered bundle images"
            )
        name = str(bundle.blob.get("name", ""))
        pkg, version_text = _package_property(bundle)
        try:
            version = parse_blang(version_text)
        except VersionError as exc:
            raise InputError(
                f"render: unable to post-process bundle info: bundle {go_quote(name)} has invalid "
                f"version {go_quote(version_text)}: {exc.message}"
            ) from None
        if package and pkg != package:
            raise InputError(
                f"render: unable to post-process bundle info: bundle {go_quote(pkg)} does not "
                f"belong to this package: {go_quote(package)}"
            )
        if not package:
            package = pkg
            cfg.packages.append({"schema": "olm.package", "name": pkg, "defaultChannel": ""})
        if name in entries:
            raise InputError(
                f"render: unable to post-process bundle info: duplicate bundle name {go_quote(name)}"
            )
        entries[name] = version
    return entries, package


def _package_property(bundle: RenderedBundle) -> tuple[str, str]:
    name = str(bundle.blob.get("name", ""))
    raw = [
        properties_value(p)
        for p in bundle.blob.get("properties") or []
        if p.get("type") == "olm.package"
    ]
    if len(raw) != 1:
        raise InputError(
            f"render: unable to post-process bundle info: bundle {go_quote(name)} has multiple "
            f"{go_quote('olm.package')} properties, expected exactly 1"
        )
    value = raw[0] if isinstance(raw[0], dict) else {}
    return str(value.get("packageName") or ""), str(value.get("version") or "")


def properties_value(prop: dict[str, Any]) -> Any:
    """A property's value decoded (its Raw text)."""
    value = prop.get("value")
    text = getattr(value, "text", None)
    return json.loads(text) if isinstance(text, str) else value


def _no_build_conflicts(found: dict[str, SemVer]) -> None:
    """withoutBuildMetadataConflict: versions equal but for build metadata cannot be ordered."""
    seen: set[str] = set()
    problems = []
    for version in found.values():
        stripped = str(version.without_build())
        if stripped in seen:
            problems.append(
                f"bundle version {go_quote(str(version))} cannot be compared to {go_quote(stripped)}"
            )
        seen.add(stripped)
    if problems:
        text = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        raise InputError(
            "render: unable to post-process bundle info: encountered bundle versions which "
            f"differ only by build metadata, which cannot be ordered: {text}"
        )


def _generate(
    template: SemverTemplate, versions: dict[str, dict[str, SemVer]], package: str
) -> tuple[list[dict[str, Any]], str]:
    """generateChannels: a channel per archetype and major (or minor) version, bundles
    added in version order; the default channel is the high-water mark (most stable
    archetype, then highest version, then the preferred stream type)."""
    channels: dict[str, dict[str, Any]] = {}
    tuples: list[_Tuple] = []
    high = ("candidate", "", SemVer(0, 0, 0), "")
    for archetype in ARCHETYPES:
        bundles = versions[archetype]
        for name in sorted(bundles, key=lambda n: bundles[n].precedence):
            version = bundles[name]
            keys = []
            if template.generate_major:
                keys.append(("major", f"{archetype}-v{version.major}"))
            if template.generate_minor:
                keys.append(("minor", f"{archetype}-v{version.major}.{version.minor}"))
            for kind, channel_name in keys:
                channel = channels.get(channel_name)
                if channel is None:
                    channel = {
                        "schema": "olm.channel",
                        "name": channel_name,
                        "package": package,
                        "entries": [],
                    }
                    channels[channel_name] = channel
                    candidate = (archetype, kind, version, channel_name)
                    if _higher(candidate, high, template.preference):
                        high = candidate
                channel["entries"].append({"name": name})
                tuples.append(
                    _Tuple(
                        archetype, kind, channel_name, name, version, len(channel["entries"]) - 1
                    )
                )
    _link(channels, tuples)
    return [channels[n] for n in sorted(channels, key=str.encode)], high[3]


def _higher(
    a: tuple[str, str, SemVer, str], b: tuple[str, str, SemVer, str], preference: str
) -> bool:
    """highwaterChannel.gt."""
    if a[0] != b[0]:
        return ARCHETYPES.index(a[0]) > ARCHETYPES.index(b[0])
    if a[2].precedence != b[2].precedence:
        return a[2].precedence > b[2].precedence
    if a[1] != b[1]:
        if a[1] == preference:
            return True
        if b[1] == preference:
            return False
        return _STREAM_PRIORITY[a[1]] > _STREAM_PRIORITY[b[1]]
    return False


def _link(channels: dict[str, dict[str, Any]], tuples: list[_Tuple]) -> None:
    """linkChannels (SPEC F3, F7, F10): in (archetype, stream, version) order, the last bundle of each minor
    version replaces the last bundle of the minor before it and skips every other bundle
    met since the last archetype, stream or major change."""
    tuples.sort(
        key=lambda t: (ARCHETYPES.index(t.arch), _STREAM_PRIORITY[t.kind], t.version.precedence)
    )
    prev_max = ""
    skips: set[str] = set()

    def close(t: _Tuple) -> None:
        entry = channels[t.parent]["entries"][t.index]
        entry["replaces"] = prev_max
        listed = sorted(skips - {prev_max}, key=str.encode)
        if listed:
            entry["skips"] = listed
        if not entry["replaces"]:
            del entry["replaces"]

    for prev, cur in itertools.pairwise(tuples):
        arch_kind_x = (
            prev.arch != cur.arch
            or prev.kind != cur.kind
            or prev.version.major != cur.version.major
        )
        y_change = prev.version.minor != cur.version.minor
        if arch_kind_x or y_change:
            close(prev)
        if arch_kind_x:
            skips = set()
            prev_max = ""
        else:
            if y_change:
                prev_max = prev.name
            skips.add(prev.name)
    if len(tuples) > 1:
        last, before = tuples[-1], tuples[-2]
        if (
            last.arch == before.arch
            and last.kind == before.kind
            and last.version.major == before.version.major
        ):
            close(last)


def _package_metadata(cfg: DeclConfig, default: str) -> None:
    """populatePackageMetadata: description and first icon of the default channel head's CSV."""
    channel = next((c for c in cfg.channels if c["name"] == default), None)
    if channel is None or not channel["entries"]:
        return
    head = channel["entries"][-1]["name"]
    bundle = next((b for b in cfg.bundles if b.blob.get("name") == head), None)
    csv = csv_document(bundle) if bundle else None
    spec = csv.get("spec") if csv else None
    if not isinstance(spec, dict):
        return
    package = cfg.packages[0]
    description = spec.get("description")
    if isinstance(description, str) and description:
        package["description"] = description
    icons = spec.get("icon")
    if isinstance(icons, list) and icons and isinstance(icons[0], dict):
        icon = icons[0]
        try:  # Icon.Data is []byte: base64 in JSON, re-encoded as Go encodes it
            data = base64.b64encode(base64.b64decode(str(icon.get("base64data") or ""))).decode()
        except (binascii.Error, ValueError):
            data = None  # GetIcons fails: opm leaves the icon out
        if data is not None:
            package["icon"] = {"base64data": data, "mediatype": str(icon.get("mediatype") or "")}
    # Go's struct order: schema, name, defaultChannel, icon, description
    order = ["schema", "name", "defaultChannel", "icon", "description", "properties"]
    cfg.packages[0] = {k: package[k] for k in order if k in package}
