"""SPEC F5, which opm does not check: every installed bundle must have exactly one way
forward. For each entry of each channel (except the head) the next steps are the
non-skipped entries that replace or skip it, or the head alone when its skipRange
contains the entry's version (F8, taken first by F9). None means a cluster on that bundle is stuck; several means the
answer depends on a tie-break rather than on the catalog author's intent.
"""

from __future__ import annotations

from dataclasses import dataclass

from kupgrade.errors import VersionError
from kupgrade.olm.graph import ChannelGraph
from kupgrade.olm.index import CatalogIndex
from kupgrade.versions import SemVer, parse_range


@dataclass(frozen=True)
class StepFinding:
    package: str
    channel: str
    bundle: str
    next_steps: tuple[str, ...]

    @property
    def message(self) -> str:
        where = f"package {self.package!r}, channel {self.channel!r}, bundle {self.bundle!r}"
        if not self.next_steps:
            return f"F5: {where} has no next step: nothing in the channel replaces or skips it"
        return f"F5: {where} has {len(self.next_steps)} next steps ({', '.join(self.next_steps)}); the catalog should give exactly one"


def next_steps(channel: ChannelGraph, name: str, version: SemVer | None) -> list[str]:
    """The ways forward from `name`: the head alone when its skipRange holds the version
    (it wins by F9 step 1), else every non-skipped entry that replaces or skips it."""
    head = channel.head
    if head and head != name and version is not None:
        skip_range = channel.by_name[head].skipRange
        try:
            if skip_range and version in parse_range(skip_range):
                return [head]
        except VersionError:
            pass
    steps = [
        e.name
        for e in channel.replacers.get(name, [])
        if e.name not in channel.skipped and e.name != name
    ]
    return list(dict.fromkeys(steps))


def one_step_findings(index: CatalogIndex) -> list[StepFinding]:
    findings = []
    for package_name in sorted(index.packages):
        package = index.packages[package_name]
        for channel in package.channel_order():
            if channel.head is None:
                continue
            for entry in channel.entries:
                if entry.name == channel.head:
                    continue
                steps = next_steps(channel, entry.name, package.versions.get(entry.name))
                if len(steps) != 1:
                    findings.append(
                        StepFinding(package_name, channel.name, entry.name, tuple(steps))
                    )
    return findings
