"""OLM v1 (operator-controller ClusterExtension): every visible catalog; successors are
bundles of the subscribed channel (any channel when none is given) that replace or skip
the installed bundle or whose skipRange contains its version, plus the installed version
itself; non-deprecated first, then the highest version. Across catalogs the higher
priority wins, and a tie is an error. Error texts are operator-controller's.
"""

from __future__ import annotations

from dataclasses import dataclass

from kupgrade.olm.index import PackageIndex
from kupgrade.olm.resolver.model import (
    Considered,
    Installed,
    Resolution,
    ResolutionError,
    Source,
    Subscription,
)
from kupgrade.olm.resolver.sources import upgrades_from, visible
from kupgrade.versions import SemVer


@dataclass
class _Found:
    source: Source
    name: str
    version: SemVer
    deprecated: bool


def _successor(package: PackageIndex, name: str, installed: Installed) -> str | None:
    """Why bundle `name` may follow the installed one, judged on every channel's entries."""
    for channel in package.channels.values():
        entry = channel.by_name.get(name)
        if entry is not None and (why := upgrades_from(entry, installed)):
            return why
    return None


def _best_in(
    source: Source, sub: Subscription, installed: Installed | None, considered: list[Considered]
) -> _Found | None:
    package = source.index.packages.get(sub.package)
    if package is None:
        return None
    if sub.channel:
        channel = package.channels.get(sub.channel)
        members = set(channel.by_name) if channel else set()
    else:
        members = {name for c in package.channels.values() for name in c.by_name}
    found: list[_Found] = []
    for name, version in package.versions.items():
        if name not in members or version is None:
            continue
        if installed is not None:
            why = _successor(package, name, installed)
            if why is None and version != installed.version:
                continue
        found.append(_Found(source, name, version, name in package.deprecated))
    if not found:
        return None
    found.sort(key=lambda f: f.version.precedence, reverse=True)
    found.sort(key=lambda f: f.deprecated)  # stable: deprecated last, each part by version
    best = found[0]
    for f in found:
        if f is not best:
            considered.append(
                Considered(
                    source.key,
                    f.name,
                    "semver",
                    False,
                    "deprecated"
                    if f.deprecated and not best.deprecated
                    else f"lower than {best.version}",
                )
            )
    return best


def resolve(
    sources: list[Source], sub: Subscription, installed: Installed | None, global_namespace: str
) -> Resolution:
    considered: list[Considered] = []
    resolved: list[_Found] = []
    for source in sorted(
        visible(sources, sub, global_namespace), key=lambda s: (s.name, s.namespace)
    ):
        best = _best_in(source, sub, installed, considered)
        if best is None:
            continue
        if resolved and best.deprecated and not resolved[-1].deprecated:
            considered.append(
                Considered(
                    source.key,
                    best.name,
                    "semver",
                    False,
                    "deprecated while another catalog has a non-deprecated bundle",
                )
            )
            continue
        if resolved and not best.deprecated and resolved[-1].deprecated:
            resolved = []
        resolved.append(best)
    if len(resolved) > 1:
        resolved.sort(key=lambda f: -f.source.priority)
        if resolved[0].source.priority != resolved[1].source.priority:
            resolved = resolved[:1]
    if len(resolved) != 1:
        raise ResolutionError(_error_text(sub, installed, resolved), "v1-resolution")
    winner = resolved[0]
    if installed is not None and (
        winner.name == installed.name or winner.version == installed.version
    ):
        considered.append(
            Considered(
                winner.source.key,
                winner.name,
                "semver",
                False,
                "the installed version is the highest successor",
            )
        )
        return Resolution(
            None, None, "semver: the installed version is already the highest successor", considered
        )
    reason = "semver: highest-version successor"
    considered.append(
        Considered(winner.source.key, winner.name, "semver", True, f"{reason} ({winner.version})")
    )
    return Resolution(winner.name, winner.source, reason, considered, winner.version)


def _error_text(sub: Subscription, installed: Installed | None, resolved: list[_Found]) -> str:
    parts = []
    if installed is not None:
        parts.append(f'error upgrading from currently installed version "{installed.version}":')
    parts.append(
        f'{"found bundles" if len(resolved) > 1 else "no bundles found"} for package "{sub.package}"'
    )
    if sub.channel:
        parts.append(f"in channels [{sub.channel}]")
    if len(resolved) > 1:
        parts.append(
            f"in multiple catalogs with the same priority [{' '.join(sorted(f.source.name for f in resolved))}]"
        )
    return " ".join(parts)
