"""A channel's update graph: its head, its edges, and opm's rules for the replaces chain.

SPEC F2/F3: the head is not the highest version but the one entry nothing replaces or
skips (a git-like head). SPEC F10: a name that entries replace or skip but that is not in
the channel is a virtual node. The head and chain rules and their messages are opm's
(alpha/model Channel.Head and validateReplacesChain).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from kupgrade.errors import KupgradeError
from kupgrade.olm.catalog import Entry


class HeadError(KupgradeError):
    """A channel without exactly one head (opm's message)."""


def channel_head(entries: Sequence[Entry]) -> str:
    """The unique entry that no entry replaces or skips (SPEC F2)."""
    incoming = {e.replaces for e in entries if e.replaces}
    for e in entries:
        incoming.update(e.skips)
    heads = [e.name for e in entries if e.name not in incoming]
    if not heads:
        raise HeadError("no channel head found in graph")
    if len(heads) > 1:
        raise HeadError(f"multiple channel heads found in graph: {', '.join(sorted(heads))}")
    return heads[0]


def replaces_chain_error(entries: Sequence[Entry]) -> str | None:
    """opm's chain rules: one head, no cycle, every non-skipped entry reachable from it."""
    try:
        head = channel_head(entries)
    except HeadError as exc:
        return exc.message
    by_name = {e.name: e for e in entries}
    skipped = {s for e in entries for s in e.skips}
    # opm keeps, for every bundle walked, its path so far and appends each step's
    # replaces to all of them (quadratic: 10 GB for a 50,000-bundle channel). The path
    # from a walked bundle is the walk from its position on, plus the replaces that
    # closed the cycle, so the walk and each name's position say the same in linear time.
    order: list[str] = []
    position: dict[str, int] = {}
    reached = {head}
    current: Entry | None = by_name[head]
    while current is not None:
        position.setdefault(current.name, len(order))
        order.append(current.name)
        if current.replaces in skipped:  # a skipped replaces edge is disregarded
            break
        if current.replaces in reached:
            cycle = [*order[position[current.replaces] :], current.replaces]
            return f"detected cycle in replaces chain of upgrade graph: {' -> '.join(cycle)}"
        reached.add(current.replaces)
        current = by_name.get(current.replaces)
    stranded = sorted(set(by_name) - reached - skipped)
    if stranded:
        return f"channel contains one or more stranded bundles: {', '.join(stranded)}"
    return None


@dataclass
class ChannelGraph:
    """One channel of one package, indexed for the resolver and the renderers."""

    package: str
    name: str
    entries: list[Entry]
    by_name: dict[str, Entry] = field(init=False)

    def __post_init__(self) -> None:
        self.by_name = {}
        for entry in self.entries:
            self.by_name.setdefault(entry.name, entry)

    @cached_property
    def head(self) -> str | None:
        try:
            return channel_head(self.entries)
        except HeadError:
            return None

    @cached_property
    def head_error(self) -> str | None:
        try:
            channel_head(self.entries)
        except HeadError as exc:
            return exc.message
        return None

    @cached_property
    def skipped(self) -> frozenset[str]:
        """Names some entry skips: never an upgrade target (SPEC F7)."""
        return frozenset(s for e in self.entries for s in e.skips)

    @cached_property
    def virtual(self) -> list[str]:
        """Replaced or skipped names with no entry in the channel (SPEC F10)."""
        seen: dict[str, None] = {}
        for e in self.entries:
            for name in (e.replaces, *e.skips):
                if name and name not in self.by_name:
                    seen.setdefault(name)
        return list(seen)

    @cached_property
    def distance(self) -> dict[str, int]:
        """Hops from the head along `replaces` (entries off that chain are absent)."""
        out: dict[str, int] = {}
        name = self.head
        hops = 0
        while name is not None and name in self.by_name and name not in out:
            out[name] = hops
            name = self.by_name[name].replaces or None
            hops += 1
        return out

    @cached_property
    def replacers(self) -> dict[str, list[Entry]]:
        """For each name, the entries that replace or skip it, in channel-entry order."""
        out: dict[str, list[Entry]] = {}
        for e in self.entries:
            targets = dict.fromkeys((e.replaces, *e.skips))
            for target in targets:
                if target:
                    out.setdefault(target, []).append(e)
        return out
