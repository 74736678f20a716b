"""`opm alpha list packages|channels|bundles` (operator-registry alpha/action/list.go and
cmd/opm/alpha/list/cmd.go at 4f9d6f22): the catalog converted to opm's model (a catalog
that does not convert or validate fails with opm's error), rows sorted as opm sorts them,
laid out by Go's text/tabwriter with opm's settings (minwidth 0, tabwidth 4, padding 2,
padchar ' ', no flags).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from dataclasses import dataclass
from typing import Any

import yaml

from kupgrade.errors import InputError
from kupgrade.olm.catalog import Catalog
from kupgrade.olm.validate import ConvertError, MChannel, MPackage, convert, validate_model
from kupgrade.outputs.tabwriter import tabwrite
from kupgrade.versions import go_quote

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# --- the model --------------------------------------------------------------------------


@dataclass(frozen=True)
class PackageRow:
    name: str
    display_name: str
    default_channel: str


@dataclass(frozen=True)
class ChannelRow:
    package: str
    channel: str
    head: str | None
    error: str | None


@dataclass(frozen=True)
class BundleRow:
    package: str
    channel: str
    bundle: str
    replaces: str
    skips: tuple[str, ...]
    skip_range: str
    image: str


def catalog_model(catalog: Catalog) -> dict[str, MPackage]:
    """declcfg.ConvertToModel: the model, or opm's error (convert, then validate)."""
    try:
        model = convert(catalog)
    except ConvertError as exc:
        raise InputError(exc.message, file=catalog.source) from None
    tree = validate_model(model)
    if tree is not None:
        raise InputError(tree.text(), file=catalog.source)
    return model


def select_packages(model: dict[str, MPackage], package: str) -> list[MPackage]:
    """list.go getPackages: every package, or the one named (`package %q not found`)."""
    if not package:
        return list(model.values())
    if package not in model:
        raise InputError(f"package {go_quote(package)} not found")
    return [model[package]]


def channel_head(channel: MChannel) -> tuple[str | None, str | None]:
    """model.Channel.Head: the one entry nothing replaces or skips, or opm's error."""
    # SPEC F2: the head is found by the graph, not by comparing versions
    incoming: set[str] = set()
    for bundle in channel.bundles.values():
        if bundle.entry.replaces:
            incoming.add(bundle.entry.replaces)
        incoming.update(bundle.entry.skips)
    heads = sorted(name for name in channel.bundles if name not in incoming)
    if not heads:
        return None, "no channel head found in graph"
    if len(heads) > 1:
        return None, f"multiple channel heads found in graph: {', '.join(heads)}"
    return heads[0], None


def _display_name(package: MPackage) -> str:
    """list.go getDisplayName: spec.displayName of the default channel head's CSV (the
    first olm.bundle.object that is a ClusterServiceVersion); empty on any failure."""
    channel = package.channels.get(package.default_channel)
    if channel is None:
        return ""
    head, _ = channel_head(channel)
    blob = channel.bundles[head].blob if head else None
    if blob is None:
        return ""
    csv = csv_object(p.value for p in blob.properties if p.type == "olm.bundle.object")
    spec = csv.get("spec") if csv else None
    name = spec.get("displayName") if isinstance(spec, dict) else None
    return name if isinstance(name, str) else ""


def csv_object(values: Any) -> dict[str, Any] | None:
    """declcfg load.go extractCSV: the first bundle object whose kind is
    ClusterServiceVersion, decoded."""
    for value in values:
        data = value.get("data") if isinstance(value, dict) else None
        if not isinstance(data, str):
            continue
        try:
            obj = yaml.load(base64.b64decode(data, validate=True), Loader=_LOADER)
        except (binascii.Error, ValueError, yaml.YAMLError):
            continue
        if isinstance(obj, dict) and obj.get("kind") == "ClusterServiceVersion":
            return obj
    return None


def list_packages(model: dict[str, MPackage]) -> list[PackageRow]:
    return [
        PackageRow(p.name, _display_name(p), p.default_channel)
        for p in sorted(model.values(), key=lambda p: p.name)
    ]


def list_channels(model: dict[str, MPackage], package: str = "") -> list[ChannelRow]:
    rows = []
    for pkg in select_packages(model, package):
        for channel in pkg.channels.values():
            head, error = channel_head(channel)
            rows.append(ChannelRow(pkg.name, channel.name, head, error))
    return sorted(rows, key=lambda r: (r.package, r.channel))


def list_bundles(model: dict[str, MPackage], package: str = "") -> list[BundleRow]:
    rows = []
    for pkg in select_packages(model, package):
        for channel in pkg.channels.values():
            for bundle in channel.bundles.values():
                entry = bundle.entry
                image = bundle.blob.image if bundle.blob else ""
                rows.append(
                    BundleRow(
                        pkg.name,
                        channel.name,
                        bundle.name,
                        entry.replaces,
                        tuple(entry.skips),
                        entry.skipRange,
                        image,
                    )
                )
    return sorted(rows, key=lambda r: (r.package, r.channel, r.bundle))


def packages_table(rows: list[PackageRow]) -> str:
    lines = ["NAME\tDISPLAY NAME\tDEFAULT CHANNEL"]
    lines += [f"{r.name}\t{r.display_name}\t{r.default_channel}" for r in rows]
    return tabwrite("\n".join(lines) + "\n", padding=2)


def channels_table(rows: list[ChannelRow]) -> str:
    lines = ["PACKAGE\tCHANNEL\tHEAD"]
    lines += [f"{r.package}\t{r.channel}\t{r.head or f'ERROR: {r.error}'}" for r in rows]
    return tabwrite("\n".join(lines) + "\n", padding=2)


def bundles_table(rows: list[BundleRow]) -> str:
    lines = ["PACKAGE\tCHANNEL\tBUNDLE\tREPLACES\tSKIPS\tSKIP RANGE\tIMAGE"]
    lines += [
        f"{r.package}\t{r.channel}\t{r.bundle}\t{r.replaces}\t{','.join(r.skips)}\t{r.skip_range}\t{r.image}"
        for r in rows
    ]
    return tabwrite("\n".join(lines) + "\n", padding=2)


def rows_json(rows: list[Any]) -> list[dict[str, Any]]:
    """Rows as data, keys in camelCase like opm's blobs."""
    out = []
    for row in rows:
        doc: dict[str, Any] = {}
        for key, value in dataclasses.asdict(row).items():
            head, *rest = key.split("_")
            doc[head + "".join(p.title() for p in rest)] = (
                list(value) if isinstance(value, tuple) else value
            )
        out.append(doc)
    return out
