"""Maintenance windows and exclusions on an absolute clock (SPEC X9).

A window recurs on the given weekdays at a local time of its time zone and lasts a fixed
number of seconds (real seconds: a four-hour window over a daylight-saving change is
still four hours long). A step may start only where it also finishes inside the same
occurrence, and it may not overlap an exclusion in its scope: `all` holds every step,
`minor` only steps that change the minor version. A cluster that no window names may move
at any time (outside its exclusions).

No library answers "the earliest moment at or after t where an interval of d seconds fits
in one occurrence of a weekly local-time rule and misses a set of intervals": the
occurrences are generated day by day with `zoneinfo`, which does the time-zone work.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

DAY = 86400.0
# How far ahead a step is searched for a place: two years (a step with no place within
# them has none: windows recur weekly and exclusions are finite).
HORIZON = 2 * 366 * DAY
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True)
class Window:
    """A recurring window: on `days` (0 is Monday) at `start` (hour, minute) local time in
    `zone`, for `seconds`."""

    days: frozenset[int]
    start: tuple[int, int]
    seconds: float
    zone: str = "UTC"

    def occurrences(self, since: float, until: float) -> Iterator[tuple[float, float]]:
        """Every occurrence that ends after `since` and starts before `until`, in order."""
        zone = ZoneInfo(self.zone)
        back = math.ceil(self.seconds / DAY) + 1
        day = datetime.fromtimestamp(since, zone).date() - timedelta(days=back)
        last = datetime.fromtimestamp(until, zone).date() + timedelta(days=1)
        hour, minute = self.start
        while day <= last:
            if day.weekday() in self.days:
                local = datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)
                begin = local.astimezone(UTC).timestamp()
                end = begin + self.seconds
                if end > since and begin < until:
                    yield begin, end
            day += timedelta(days=1)


@dataclass(frozen=True)
class Exclusion:
    """No step in `scope` (`all`, or `minor`: minor-version changes) may overlap
    [start, end)."""

    start: float
    end: float
    scope: str = "all"

    def holds(self, minor: bool) -> bool:
        return self.scope == "all" or (self.scope == "minor" and minor)


class Calendar:
    """When one cluster's steps may run: its windows (none: any time) less its exclusions."""

    def __init__(self, windows: Sequence[Window], exclusions: Sequence[Exclusion]) -> None:
        self.windows = tuple(windows)
        self.exclusions = tuple(sorted(exclusions, key=lambda e: (e.start, e.end)))

    def longest(self) -> float:
        """The longest step any occurrence can hold (infinite without windows)."""
        return max((w.seconds for w in self.windows), default=math.inf)

    def open_at(self, at: float) -> tuple[float, float] | None:
        """The occurrence `at` falls in (the one ending last), if any; (-inf, inf) when the
        cluster has no windows."""
        if not self.windows:
            return (-math.inf, math.inf)
        found = [
            (begin, end)
            for window in self.windows
            for begin, end in window.occurrences(at, at + 1)
            if begin <= at < end
        ]
        return max(found, key=lambda o: o[1]) if found else None

    def fit(self, at: float, seconds: float, minor: bool, horizon: float = HORIZON) -> float | None:
        """The earliest start at or after `at` of a step that lasts `seconds` and changes
        the minor version or not: inside one occurrence, overlapping no exclusion that
        holds it. None when there is none within `horizon`."""
        blocking = [e for e in self.exclusions if e.holds(minor)]
        if not self.windows:
            return self._clear(at, seconds, blocking, math.inf)
        best: float | None = None
        for begin, end in self._occurrences(at, at + horizon):
            if best is not None and begin >= best:
                break
            start = self._clear(max(at, begin), seconds, blocking, end)
            if start is not None and (best is None or start < best):
                best = start
        return best

    def _occurrences(self, since: float, until: float) -> Iterator[tuple[float, float]]:
        """Every window's occurrences merged in order of their start, a month at a time
        (most searches end in the first week)."""
        step = 31 * DAY
        low = since
        while low < until:
            high = min(until, low + step)
            batch = sorted(
                {
                    o
                    for w in self.windows
                    for o in w.occurrences(low, high)
                    if o[0] >= low or low == since
                }
            )
            yield from batch
            low = high

    @staticmethod
    def _clear(
        start: float, seconds: float, blocking: Sequence[Exclusion], end: float
    ) -> float | None:
        """The earliest start from `start` whose step misses every exclusion and ends by
        `end`."""
        moved = True
        while moved:
            moved = False
            for exclusion in blocking:
                if start < exclusion.end and start + seconds > exclusion.start:
                    start = exclusion.end
                    moved = True
        return start if start + seconds <= end else None
