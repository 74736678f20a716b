"""OLM v0's resolver for one subscription without dependencies (operator-lifecycle-manager
pkg/controller/registry/resolver): only the subscription's own CatalogSource; the channel
sorted from its unique head along `replaces` with skipped entries left out; the candidate
nearest the head wins; `olm.deprecated` bundles are passed over. Errors are OLM's texts.
"""

from __future__ import annotations

from kupgrade.olm.catalog import Entry
from kupgrade.olm.graph import ChannelGraph
from kupgrade.olm.resolver.model import (
    Considered,
    Installed,
    Resolution,
    ResolutionError,
    Source,
    Subscription,
)
from kupgrade.olm.resolver.sources import (
    no_channel,
    no_starting_csv,
    own_source_or_error,
    package_or_error,
    upgrades_from,
)
from kupgrade.versions import go_quote


def sort_channel(channel: ChannelGraph, entries: list[Entry]) -> list[Entry]:
    """OLM's sortChannel: the head's replaces chain without skipped entries."""
    if not entries:
        return entries
    lookup = {e.name: e for e in entries}
    replaced: set[str] = set()
    replaces: dict[str, str] = {}
    skipped: set[str] = set()
    for e in entries:
        if e.replaces and e.replaces in lookup:
            replaced.add(e.replaces)
            replaces[e.name] = e.replaces
        for skip in e.skips:
            if skip in lookup:
                replaced.add(skip)
                skipped.add(skip)
    heads = [e for e in entries if e.name not in replaced]
    where = f"in channel {go_quote(channel.name)} of package {go_quote(channel.package)}"
    if not heads:
        raise ResolutionError(
            f"no channel heads (entries not replaced by another entry) found {where}",
            "sort-channel",
        )
    chains = []
    for head in heads:
        chain: list[Entry] = []
        visited = set()
        name: str | None = head.name
        while name is not None:
            visited.add(name)
            if name not in skipped:
                chain.append(lookup[name])
            name = replaces.get(name)
            if name is not None and name in visited:
                raise ResolutionError(
                    f"a cycle exists in the chain of replacement beginning with {go_quote(head.name)} {where}",
                    "sort-channel",
                )
        chains.append(chain)
    if len(chains) > 1:
        described = ", ".join(
            "[]" if not c else c[0].name if len(c) == 1 else f"{c[0].name}...{c[-1].name}"
            for c in chains
        )
        raise ResolutionError(
            "a unique replacement chain within a channel is required to determine the relative order between "
            f"channel entries, but {len(chains)} replacement chains were found {where}: {described}",
            "sort-channel",
        )
    return chains[0]


def resolve(
    sources: list[Source], sub: Subscription, installed: Installed | None, global_namespace: str
) -> Resolution:
    # resolver.go getSubscriptionVariables: the catalog, the package, the channel and the
    # startingCSV are counted in that order, and the first count of zero is the error
    source = own_source_or_error(sources, sub, global_namespace)
    package = package_or_error(source, sub)
    if sub.channel:
        channel = package.channels.get(sub.channel)
        if channel is None or not channel.entries:
            raise no_channel(sub, sub.channel)
        channels = [channel]
    else:
        channels = package.channel_order()
    starting = sub.starting_csv if installed is None else ""
    picked = [(c, [e for e in c.entries if not starting or e.name == starting]) for c in channels]
    if starting and not any(entries for _, entries in picked):
        raise no_starting_csv(sub, sub.channel)  # counted before any channel is sorted
    ordered = [entry for channel, entries in picked for entry in sort_channel(channel, entries)]
    considered: list[Considered] = []
    for entry in ordered:
        why = (
            upgrades_from(entry, installed) if installed else "channel entry in OLM's channel order"
        )
        if why is None or (installed and entry.name == installed.name):
            continue
        if entry.name in package.legacy_deprecated:
            considered.append(
                Considered(source.key, entry.name, "olm-v0", False, "bundle carries olm.deprecated")
            )
            continue
        considered.append(
            Considered(source.key, entry.name, "olm-v0", True, f"nearest the channel head; {why}")
        )
        return Resolution(
            entry.name, source, "olm-v0", considered, package.versions.get(entry.name)
        )
    if installed is None:
        raise ResolutionError(
            f"constraints not satisfiable: no candidate for subscription {sub.display_name}",
            "not-satisfiable",
        )
    return Resolution(None, None, "olm-v0: no candidate; stays on the installed CSV", considered)
