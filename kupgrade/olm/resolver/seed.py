"""kupgrade's default policy: the source documents' four-step priority (SPEC F9).

With a CSV installed, the first step that yields a CSV wins:
  1. the head of the subscribed channel in the subscription's own source, when its
     skipRange contains the installed version (F8);
  2. the entry of that channel in that source that replaces the installed CSV (its
     `replaces` names it or its `skips` lists it; F3, F7);
  3. like 1 in every other visible source;
  4. like 2 in every other visible source.
Other sources are taken by priority, then those in the subscription's namespace, then by
name, so the answer never depends on the order sources were listed in. Skipped entries
are never targets (F7); among several replacements the one nearest the head along its
`replaces` chain wins, then channel-entry order. Without a CSV installed the subscription
gets its startingCSV or the head of its own source (F1).
"""

from __future__ import annotations

from collections.abc import Iterator

from kupgrade.errors import VersionError
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
    channel_or_error,
    no_catalog,
    no_channel,
    no_package,
    no_starting_csv,
    own_source,
    own_source_or_error,
    package_or_error,
    preference,
    visible,
)
from kupgrade.versions import parse_range

_FAR = 1 << 30


def resolve(
    sources: list[Source], sub: Subscription, installed: Installed | None, global_namespace: str
) -> Resolution:
    if installed is None:
        return _install(own_source_or_error(sources, sub, global_namespace), sub)
    own = own_source(sources, sub, global_namespace)
    others = preference([s for s in visible(sources, sub, global_namespace) if s is not own], sub)
    considered: list[Considered] = []
    for step, source in _steps(own, others):
        channel = _channel(source, sub)
        if channel is None:
            continue
        pick = (
            _head_step(step, source, channel, installed, considered)
            if step in (1, 3)
            else _replace_step(step, source, channel, installed, considered)
        )
        if pick is not None:
            package = source.index.packages[sub.package]
            return Resolution(pick[0], source, pick[1], considered, package.versions.get(pick[0]))
    if own is None:
        raise no_catalog(sub)
    _exists_somewhere([own, *others], sub)
    return Resolution(None, None, "no step applies; stays on the installed CSV", considered)


def _exists_somewhere(sources: list[Source], sub: Subscription) -> None:
    """A package or channel no visible source has is a mistake in the subscription, not
    a subscription at its latest: OLM's not-found texts, as for a new subscription."""
    packages = [
        package
        for s in sources
        if (package := s.index.packages.get(sub.package)) is not None and package.channels
    ]
    if not packages:
        raise no_package(sub)
    if not any(package.channel(sub.channel) is not None for package in packages):
        raise no_channel(sub, sub.channel or packages[0].default_channel)


def _steps(own: Source | None, others: list[Source]) -> Iterator[tuple[int, Source]]:
    if own is not None:
        yield 1, own
        yield 2, own
    for source in others:
        yield 3, source
    for source in others:
        yield 4, source


def _channel(source: Source, sub: Subscription) -> ChannelGraph | None:
    package = source.index.packages.get(sub.package)
    return package.channel(sub.channel) if package is not None else None


def _head_step(
    step: int,
    source: Source,
    channel: ChannelGraph,
    installed: Installed,
    considered: list[Considered],
) -> tuple[str, str] | None:
    head = channel.head
    rule = f"step{step}"
    if head is None:
        considered.append(
            Considered(source.key, "", rule, False, f"channel {channel.name}: {channel.head_error}")
        )
        return None
    skip_range = channel.by_name[head].skipRange
    if head == installed.name:
        considered.append(
            Considered(source.key, head, rule, False, "the channel head is the installed CSV")
        )
        return None
    if not skip_range:
        considered.append(
            Considered(source.key, head, rule, False, "the channel head has no skipRange")
        )
        return None
    try:
        contained = installed.version in parse_range(skip_range)
    except VersionError as exc:
        considered.append(
            Considered(
                source.key, head, rule, False, f"invalid skipRange {skip_range!r}: {exc.message}"
            )
        )
        return None
    if not contained:
        considered.append(
            Considered(
                source.key,
                head,
                rule,
                False,
                f"skipRange {skip_range!r} does not contain {installed.version}",
            )
        )
        return None
    reason = f"{rule}: channel head {head} in {source.key} has skipRange {skip_range!r} containing {installed.version}"
    considered.append(Considered(source.key, head, rule, True, reason))
    return head, reason


def _replace_step(
    step: int,
    source: Source,
    channel: ChannelGraph,
    installed: Installed,
    considered: list[Considered],
) -> tuple[str, str] | None:
    rule = f"step{step}"
    candidates = []
    for index, entry in enumerate(channel.replacers.get(installed.name, [])):
        if entry.name in channel.skipped:
            considered.append(
                Considered(
                    source.key,
                    entry.name,
                    rule,
                    False,
                    "skipped by another entry, never a target (F7)",
                )
            )
            continue
        if entry.name == installed.name:
            continue
        candidates.append((channel.distance.get(entry.name, _FAR), index, entry.name))
    if not candidates:
        return None
    candidates.sort()
    chosen = candidates[0][2]
    for _, _, name in candidates[1:]:
        considered.append(
            Considered(
                source.key,
                name,
                rule,
                False,
                f"also replaces {installed.name} but {chosen} is nearer the channel head",
            )
        )
    reason = f"{rule}: {chosen} in {source.key} replaces {installed.name}"
    considered.append(Considered(source.key, chosen, rule, True, reason))
    return chosen, reason


def _install(own: Source, sub: Subscription) -> Resolution:
    package = package_or_error(own, sub)
    channel = channel_or_error(package, sub)
    if sub.starting_csv:
        if sub.starting_csv not in channel.by_name:
            raise no_starting_csv(sub, channel.name)
        reason = f"install: startingCSV {sub.starting_csv}"
        return Resolution(
            sub.starting_csv,
            own,
            reason,
            [Considered(own.key, sub.starting_csv, "install", True, reason)],
            package.versions.get(sub.starting_csv),
        )
    if channel.head is None:
        raise ResolutionError(channel.head_error or "", "channel-head")
    reason = "install: channel head (F1)"
    return Resolution(
        channel.head,
        own,
        reason,
        [Considered(own.key, channel.head, "install", True, reason)],
        package.versions.get(channel.head),
    )
