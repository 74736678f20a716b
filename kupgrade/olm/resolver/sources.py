"""Which catalog sources a subscription can see, and the lookups every policy shares."""

from __future__ import annotations

from kupgrade.errors import VersionError
from kupgrade.olm.catalog import Entry
from kupgrade.olm.graph import ChannelGraph
from kupgrade.olm.index import PackageIndex
from kupgrade.olm.resolver.model import Installed, ResolutionError, Source, Subscription
from kupgrade.versions import parse_range


def visible(sources: list[Source], sub: Subscription, global_namespace: str) -> list[Source]:
    """Sources in the subscription's namespace or the global catalog namespace."""
    return [s for s in sources if s.namespace in (sub.namespace, global_namespace)]


def own_source(sources: list[Source], sub: Subscription, global_namespace: str) -> Source | None:
    for source in visible(sources, sub, global_namespace):
        if source.name == sub.source and source.namespace == sub.source_namespace:
            return source
    return None


def preference(sources: list[Source], sub: Subscription) -> list[Source]:
    """SPEC F9's other sources: priority first, then the subscription's namespace, then name."""
    return sorted(
        sources, key=lambda s: (-s.priority, s.namespace != sub.namespace, s.name, s.namespace)
    )


def own_source_or_error(sources: list[Source], sub: Subscription, global_namespace: str) -> Source:
    """The subscription's own source, or OLM's first not-found error: the catalog holds
    no entry at all (resolver.go getSubscriptionVariables counts them: `nall == 0`),
    whether it is missing, out of sight or empty."""
    source = own_source(sources, sub, global_namespace)
    if source is None or not any(_has_entries(p) for p in source.index.packages.values()):
        raise no_catalog(sub)
    return source


def _has_entries(package: PackageIndex) -> bool:
    return any(channel.entries for channel in package.channels.values())


def package_or_error(source: Source, sub: Subscription) -> PackageIndex:
    """The subscribed package, or OLM's `npkg == 0` error (no entry of that package)."""
    package = source.index.packages.get(sub.package)
    if package is None or not _has_entries(package):
        raise no_package(sub)
    return package


def no_package(sub: Subscription) -> ResolutionError:
    return ResolutionError(
        f"no operators found in package {sub.package} {_referenced(sub)}", "no-operators-found"
    )


def channel_or_error(package: PackageIndex, sub: Subscription) -> ChannelGraph:
    channel = package.channel(sub.channel)
    if channel is None or not channel.entries:
        raise no_channel(sub, sub.channel or package.default_channel)
    return channel


def _referenced(sub: Subscription) -> str:
    return f"in the catalog referenced by subscription {sub.display_name}"


def no_catalog(sub: Subscription) -> ResolutionError:
    return ResolutionError(
        f"no operators found from catalog {sub.source} in namespace {sub.source_namespace} "
        f"referenced by subscription {sub.display_name}",
        "no-operators-found",
    )


def no_channel(sub: Subscription, channel: str) -> ResolutionError:
    return ResolutionError(
        f"no operators found in channel {channel} of package {sub.package} {_referenced(sub)}",
        "no-operators-found",
    )


def no_starting_csv(sub: Subscription, channel: str) -> ResolutionError:
    return ResolutionError(
        f"no operators found with name {sub.starting_csv} in channel {channel} of package "
        f"{sub.package} {_referenced(sub)}",
        "no-operators-found",
    )


def upgrades_from(entry: Entry, installed: Installed) -> str | None:
    """Why `entry` may replace the installed CSV (replaces, skips, or skipRange; F3, F7,
    F8), or None. An unparsable skipRange contains nothing, as in OLM."""
    if entry.replaces == installed.name:
        return f"replaces {installed.name}"
    if installed.name in entry.skips:
        return f"skips {installed.name}"
    if entry.skipRange:
        try:
            if installed.version in parse_range(entry.skipRange):
                return f"skipRange {entry.skipRange!r} contains {installed.version}"
        except VersionError:
            return None
    return None
