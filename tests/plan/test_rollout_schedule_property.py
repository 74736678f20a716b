"""The rollout schedule on forecasts (SPEC X9): stages, soaks, concurrency, windows and
exclusions, checked as properties over random small fleets and against a naive
minute-by-minute simulator of the same rules written here, plus a few examples of the
calendar (a step longer than every window, a window across a daylight-saving change, an
exclusion that holds minor steps only)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kupgrade.plan.rollout import Conductor, Facts, Placed, Schedule, Task, schedule
from kupgrade.plan.rollout_doc import Rollout, read_rollout
from kupgrade.plan.steps import Refusal
from kupgrade.plan.windows import Calendar, Exclusion, Window

MINUTE = 60
HOUR = 3600
DAY = 86400
YEAR_2026 = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp())
ZONES = ("UTC", "Europe/Berlin")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# The naive simulator looks this far ahead; examples that need longer are discarded.
HORIZON_MINUTES = 30 * 24 * 60
LONGEST_TASK_MINUTES = 300


@dataclass(frozen=True)
class Scenario:
    """A generated rollout document with what the test expects of it, worked out from
    the generated values (not read back from the code under test)."""

    doc: dict[str, Any]
    clusters: tuple[str, ...]
    stage_of: dict[str, int]  # the first stage that names the cluster
    concurrency: tuple[int, ...]
    soak_minutes: tuple[int, ...]
    windows: tuple[tuple[Window, frozenset[str]], ...]  # window, clusters it is for
    exclusions: tuple[tuple[Exclusion, frozenset[str] | None], ...]  # None: every cluster
    tasks: tuple[Task, ...]  # plan order: s1, s2, ...
    start: int  # epoch seconds, a whole minute

    def windows_of(self, cluster: str) -> list[Window]:
        return [w for w, names in self.windows if cluster in names]

    def exclusions_of(self, cluster: str) -> list[Exclusion]:
        return [e for e, names in self.exclusions if names is None or cluster in names]

    def facts(self) -> list[Facts]:
        return [Facts(c, "user", {}) for c in self.clusters]

    def rollout(self) -> Rollout:
        return read_rollout(self.doc, "generated")

    def conductor(self) -> Conductor:
        return Conductor(self.rollout(), self.facts(), self.tasks)


def _rfc3339(at: int) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _subset(draw: st.DrawFn, clusters: tuple[str, ...]) -> frozenset[str]:
    return frozenset(draw(st.lists(st.sampled_from(clusters), unique=True)))


def _selected(draw: st.DrawFn, clusters: tuple[str, ...]) -> frozenset[str]:
    """The clusters a window or an exclusion is for: mostly all of them or some."""
    return draw(
        st.one_of(
            st.just(frozenset(clusters)),
            st.sets(st.sampled_from(clusters), min_size=1).map(frozenset),
            st.just(frozenset()),
        )
    )


def _minutes(draw: st.DrawFn, low: int, high: int) -> int:
    """Whole minutes in [low, high], often a multiple of half an hour (so that steps,
    windows and exclusions meet at their edges)."""
    halves = st.integers(-(-low // 30), high // 30).map(lambda k: k * 30)
    return draw(st.one_of(halves, st.integers(low, high)))


def _start_times() -> st.SearchStrategy[int]:
    """A whole minute of 2026, often in the weeks of the daylight-saving changes."""
    anywhere = st.integers(0, 365 * 24 * 60 - 1).map(lambda m: YEAR_2026 + m * MINUTE)
    half_hours = st.integers(0, 365 * 48 - 1).map(lambda h: YEAR_2026 + h * 30 * MINUTE)
    march = int(datetime(2026, 3, 26, tzinfo=UTC).timestamp())
    october = int(datetime(2026, 10, 22, tzinfo=UTC).timestamp())
    near = st.sampled_from((march, october)).flatmap(
        lambda base: st.integers(0, 4 * 24 * 60).map(lambda m: base + m * MINUTE)
    )
    return st.one_of(anywhere, half_hours, near)


def _window(
    draw: st.DrawFn, clusters: tuple[str, ...]
) -> tuple[dict[str, Any], Window, frozenset[str]]:
    names = _selected(draw, clusters)
    every_day = draw(st.booleans())
    days = (
        frozenset(range(7))
        if every_day
        else frozenset(draw(st.sets(st.integers(0, 6), min_size=1)))
    )
    hour, minute = draw(st.integers(0, 23)), _minutes(draw, 0, 59)
    minutes = _minutes(draw, 60, 600)
    zone = draw(st.sampled_from(ZONES))
    doc: dict[str, Any] = {
        "clusters": {"names": sorted(names)},
        "start": f"{hour:02d}:{minute:02d}",
        "duration": f"{minutes}m",
        "timeZone": zone,
    }
    if not every_day or draw(st.booleans()):  # no `days`: every day
        doc["days"] = [WEEKDAYS[d] for d in sorted(days)]
    return doc, Window(days, (hour, minute), minutes * 60.0, zone), names


def _exclusion(
    draw: st.DrawFn, clusters: tuple[str, ...], start: int
) -> tuple[dict[str, Any], Exclusion, frozenset[str] | None]:
    scope = draw(st.sampled_from(("all", "minor")))
    doc: dict[str, Any] = {"scope": scope}
    names: frozenset[str] | None = None
    if draw(st.booleans()):
        names = _selected(draw, clusters)
        doc["clusters"] = {"names": sorted(names)}
    # often soon after the start, where the first steps end
    soon = st.integers(0, 12).map(lambda k: k * 30)
    offset = draw(st.one_of(soon, st.integers(-12 * 60, 2 * 24 * 60)))
    begin = start + offset * MINUTE
    if draw(st.booleans()):  # RFC 3339 instants
        end = begin + _minutes(draw, 30, 24 * 60) * MINUTE
        doc.update({"from": _rfc3339(begin), "to": _rfc3339(end)})
        return doc, Exclusion(float(begin), float(end), scope), names
    # whole days, both included, in a time zone
    zone = draw(st.sampled_from(ZONES))
    first = datetime.fromtimestamp(begin, ZoneInfo(zone)).date()
    last = first + timedelta(days=draw(st.integers(0, 2)))
    doc.update({"from": first.isoformat(), "to": last.isoformat(), "timeZone": zone})
    return (
        doc,
        Exclusion(_midnight(first, zone), _midnight(last + timedelta(days=1), zone), scope),
        names,
    )


def _midnight(day: date, zone: str) -> float:
    return datetime(day.year, day.month, day.day, tzinfo=ZoneInfo(zone)).timestamp()


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    clusters = tuple(f"c{i}" for i in range(1, draw(st.integers(1, 5)) + 1))
    n_stages = draw(st.integers(1, 3))
    # Each cluster is named by a home stage, and maybe by others too: the first wins.
    home = {c: draw(st.integers(0, n_stages - 1)) for c in clusters}
    names = [
        {c for c in clusters if home[c] == i} | _subset(draw, clusters) for i in range(n_stages)
    ]
    stage_of = {c: min(i for i in range(n_stages) if c in names[i]) for c in clusters}
    concurrency = tuple(draw(st.integers(1, 3)) for _ in range(n_stages))
    soaks = tuple(_minutes(draw, 0, 180) for _ in range(n_stages))
    start = draw(_start_times())
    windows = [_window(draw, clusters) for _ in range(draw(st.integers(0, 2)))]
    exclusions = [_exclusion(draw, clusters, start) for _ in range(draw(st.integers(0, 1)))]

    def longest(cluster: str) -> int:
        mine = [w.seconds for _, w, n in windows if cluster in n]
        return int(max(mine)) // MINUTE if mine else LONGEST_TASK_MINUTES

    # Tasks, 1-2 per cluster, in a random plan order; each fits the longest window of
    # its cluster and needs only earlier tasks of its own stage or an earlier one.
    owners = draw(st.permutations([c for c in clusters for _ in range(draw(st.integers(1, 2)))]))
    tasks: list[Task] = []
    for k, cluster in enumerate(owners, start=1):
        earlier = [t.id for t in tasks if stage_of[t.cluster] <= stage_of[cluster]]
        after = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=3)) if earlier else []
        minutes = _minutes(draw, 10, min(LONGEST_TASK_MINUTES, longest(cluster)))
        minor = draw(st.booleans())
        tasks.append(
            Task(
                f"s{k}",
                f"cluster/{cluster}",
                cluster,
                "1.30.1",
                "1.31.0" if minor else "1.30.2",
                tuple(sorted(after, key=lambda i: int(i[1:]))),
                minor,
                minutes * 60.0,
            )
        )
    doc = {
        "apiVersion": "kupgrade.io/v1alpha1",
        "kind": "FleetRollout",
        "metadata": {"name": "generated"},
        "spec": {
            "stages": [
                {
                    "name": f"stage{i}",
                    "clusters": {"names": sorted(names[i])},
                    "maxConcurrency": concurrency[i],
                    "soak": f"{soaks[i]}m",
                }
                for i in range(n_stages)
            ],
            "windows": [d for d, _, _ in windows],
            "exclusions": [d for d, _, _ in exclusions],
        },
    }
    return Scenario(
        doc,
        clusters,
        stage_of,
        concurrency,
        soaks,
        tuple((w, n) for _, w, n in windows),
        tuple((e, n) for _, e, n in exclusions),
        tuple(tasks),
        start,
    )


def _no_reason(task: Task, needed: Task) -> Refusal | None:
    return None


def _placed(sc: Scenario, one_at_a_time: bool) -> tuple[Conductor, Schedule]:
    conductor = sc.conductor()
    # The generator keeps every rollout legal: nothing is refused before it starts.
    conductor.check(float(sc.start), _no_reason)
    return conductor, schedule(conductor, float(sc.start), one_at_a_time=one_at_a_time)


# --- properties of the schedule ---------------------------------------------------------


def _check_windows_and_exclusions(sc: Scenario, p: Placed) -> None:
    # SPEC X9: a step starts and finishes inside one occurrence of one of its cluster's
    # windows (any time when no window names the cluster) ...
    windows = sc.windows_of(p.task.cluster)
    if windows:
        occurrences = [o for w in windows for o in w.occurrences(p.start - 1, p.finish + 1)]
        assert any(b <= p.start and p.finish <= e for b, e in occurrences), (p, occurrences)
    # ... and overlaps no exclusion in its scope (all, or minor for a minor step).
    for exclusion in sc.exclusions_of(p.task.cluster):
        if exclusion.scope == "all" or p.task.minor:
            assert not (p.start < exclusion.end and p.finish > exclusion.start), (p, exclusion)


def _check_stages(sc: Scenario, placed: list[Placed]) -> None:
    # SPEC X9: a stage opens once the one before it is done (its last step finished) and
    # its soak is over; a stage with no step is done at once, with no soak.
    opens = float(sc.start)
    for index in range(len(sc.concurrency)):
        mine = [p for p in placed if sc.stage_of[p.task.cluster] == index]
        for p in mine:
            assert p.start >= opens, (index, p, opens)
        if mine:
            opens = max(p.finish for p in mine) + sc.soak_minutes[index] * MINUTE


def _check_concurrency(sc: Scenario, placed: list[Placed]) -> None:
    # SPEC X9: at most maxConcurrency clusters of one stage have a step running at once
    # (a step finishing at t frees its slot at t). The count peaks at some step's start.
    for p in placed:
        stage = sc.stage_of[p.task.cluster]
        busy = {
            q.task.cluster
            for q in placed
            if sc.stage_of[q.task.cluster] == stage and q.start <= p.start < q.finish
        }
        assert len(busy) <= sc.concurrency[stage], (p, busy)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(scenarios(), st.booleans())
def test_schedule_keeps_every_rule(sc: Scenario, one_at_a_time: bool) -> None:
    conductor, placed = _placed(sc, one_at_a_time)
    # SPEC X9: the calendars the conductor builds are the ones the document names.
    for cluster in sc.clusters:
        calendar = conductor.calendars[cluster]
        assert set(calendar.windows) == set(sc.windows_of(cluster))
        assert set(calendar.exclusions) == set(sc.exclusions_of(cluster))
        assert conductor.stage_of[cluster] == sc.stage_of[cluster]
    # Every step fits a window and exclusions are finite: every step is placed.
    assert placed.outcome == "completed"
    assert [p.task for p in placed.placed] == list(sc.tasks)
    by_id = {p.task.id: p for p in placed.placed}
    for p in placed.placed:
        assert p.finish == p.start + p.task.seconds
        assert sc.start <= p.ready <= p.start
        _check_windows_and_exclusions(sc, p)
        # SPEC X1, X9: a step's `after` steps come first.
        for need in p.task.after:
            assert p.start >= by_id[need].finish, (p, by_id[need])
        if one_at_a_time:
            # one step of a cluster at a time
            for q in placed.placed:
                if q is not p and q.task.cluster == p.task.cluster:
                    assert q.finish <= p.start or p.finish <= q.start, (p, q)
    _check_stages(sc, placed.placed)
    _check_concurrency(sc, placed.placed)
    # the rollout is done when its last stage is: its last soak included, every stage done
    assert all(stage["status"] == "done" for stage in placed.stages)
    last = max(float(stage["finishedAt"]) for stage in placed.stages)
    assert placed.finish == max(last, *(p.finish for p in placed.placed))


# --- a naive minute-by-minute simulator of the same rules --------------------------------


def _naive_occurrences(window: Window, since: int, until: int) -> list[tuple[int, int]]:
    """Every occurrence starting on a local day from two days before `since` up to the
    day after `until`: the local start time on each listed weekday, lasting `seconds`."""
    zone = ZoneInfo(window.zone)
    day = datetime.fromtimestamp(since, zone).date() - timedelta(days=2)
    last = datetime.fromtimestamp(until, zone).date() + timedelta(days=1)
    hour, minute = window.start
    found = []
    while day <= last:
        if day.weekday() in window.days:
            begin = int(
                datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone).timestamp()
            )
            found.append((begin, begin + int(window.seconds)))
        day += timedelta(days=1)
    return found


class _Minutes:
    """One cluster's calendar painted minute by minute from the start (minute 0):
    which occurrences hold each minute, and how many minutes before each are excluded
    (one count for minor steps, one for the others)."""

    def __init__(self, sc: Scenario, cluster: str, length: int) -> None:
        t0 = sc.start // MINUTE
        windows = sc.windows_of(cluster)
        self.any_time = not windows
        self.holding: list[list[int]] = [[] for _ in range(length)]
        since, until = sc.start, sc.start + length * MINUTE
        occurrences = [o for w in windows for o in _naive_occurrences(w, since, until)]
        for index, (begin, end) in enumerate(occurrences):
            for m in range(max(begin // MINUTE - t0, 0), min(end // MINUTE - t0, length - 1) + 1):
                self.holding[m].append(index)  # the occurrence holds [begin, end], both ends
        self.excluded: dict[bool, list[int]] = {}
        for minor in (False, True):
            blocked = [False] * length
            for e in sc.exclusions_of(cluster):
                if e.scope == "all" or minor:
                    first = max(int(e.start) // MINUTE - t0, 0)
                    for m in range(first, min(int(e.end) // MINUTE - t0, length)):
                        blocked[m] = True  # the exclusion holds [start, end)
            counts = [0]
            for b in blocked:
                counts.append(counts[-1] + b)
            self.excluded[minor] = counts

    def fits(self, t: int, minutes: int, minor: bool) -> bool:
        """Every minute of [t, t + minutes] in one single occurrence, and no excluded
        minute in [t, t + minutes)."""
        counts = self.excluded[minor]
        if counts[t + minutes] - counts[t]:
            return False
        if self.any_time:
            return True
        common = set(self.holding[t])
        for m in range(t + 1, t + minutes + 1):
            if not common:
                return False
            common.intersection_update(self.holding[m])
        return bool(common)


def naive_starts(sc: Scenario, one_at_a_time: bool) -> dict[str, float] | None:
    """Each task's start (epoch seconds), minute by minute, or None when some task has
    not finished within the horizon."""
    length = HORIZON_MINUTES + LONGEST_TASK_MINUTES + 2
    calendars = {c: _Minutes(sc, c, length) for c in sc.clusters}
    minutes = {t.id: int(t.seconds) // MINUTE for t in sc.tasks}
    of_stage = [
        [t.id for t in sc.tasks if sc.stage_of[t.cluster] == i] for i in range(len(sc.concurrency))
    ]
    cluster_of = {t.id: t.cluster for t in sc.tasks}
    starts: dict[str, int] = {}
    finishes: dict[str, int] = {}
    running: set[str] = set()
    done: set[str] = set()
    stage = 0  # the open stage; those before it are done
    for t in range(HORIZON_MINUTES + 1):
        for task_id in [i for i in running if finishes[i] <= t]:
            running.discard(task_id)
            done.add(task_id)
        while stage < len(of_stage):
            mine = of_stage[stage]
            if not all(i in done for i in mine):
                break
            if mine and t < max(finishes[i] for i in mine) + sc.soak_minutes[stage]:
                break  # soaking, counted from its last finish
            stage += 1
        if len(done) == len(sc.tasks):
            return {i: float(sc.start + s * MINUTE) for i, s in starts.items()}
        for task in sc.tasks:  # plan order
            if task.id in starts or not all(a in done for a in task.after):
                continue
            if sc.stage_of[task.cluster] != stage:
                continue
            if one_at_a_time and any(cluster_of[r] == task.cluster for r in running):
                continue
            busy = {cluster_of[r] for r in running if sc.stage_of[cluster_of[r]] == stage}
            if task.cluster not in busy and len(busy) >= sc.concurrency[stage]:
                continue
            if not calendars[task.cluster].fits(t, minutes[task.id], task.minor):
                continue
            starts[task.id] = t
            finishes[task.id] = t + minutes[task.id]
            running.add(task.id)
    return None


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(scenarios())
def test_schedule_matches_a_naive_minute_by_minute_simulation(sc: Scenario) -> None:
    # SPEC X9: the same rules, applied one minute at a time, start every step at the
    # same moment as the event-driven schedule.
    expected = naive_starts(sc, one_at_a_time=True)
    assume(expected is not None)
    _, placed = _placed(sc, one_at_a_time=True)
    assert placed.outcome == "completed"
    assert {p.task.id: p.start for p in placed.placed} == expected


@settings(max_examples=60, deadline=None)
@given(
    st.sets(st.integers(0, 6), min_size=1),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(60, 600),
    st.sampled_from(ZONES),
    _start_times(),
)
def test_occurrences_are_the_local_start_on_each_listed_day(
    days: set[int], hour: int, minute: int, minutes: int, zone: str, since: int
) -> None:
    # SPEC X9: the naive simulator's occurrences and Window.occurrences agree.
    window = Window(frozenset(days), (hour, minute), minutes * 60.0, zone)
    until = since + 10 * DAY
    mine = [o for o in _naive_occurrences(window, since, until) if o[1] > since and o[0] < until]
    assert [(int(b), int(e)) for b, e in window.occurrences(since, until)] == mine


# --- examples -----------------------------------------------------------------------------


def _at(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def test_a_step_longer_than_every_window_is_never_placed() -> None:
    # SPEC X9: a six-hour step does not fit a four-hour window, whatever the day.
    calendar = Calendar([Window(frozenset(range(7)), (1, 0), 4 * HOUR, "UTC")], [])
    assert calendar.longest() == 4 * HOUR
    at = _at("2026-05-04T00:00:00+00:00")
    assert calendar.fit(at, 6 * HOUR, minor=False) is None
    assert calendar.fit(at, 6 * HOUR, minor=True, horizon=30 * DAY) is None
    assert calendar.fit(at, 4 * HOUR, minor=False) == _at("2026-05-04T01:00:00+00:00")
    assert Calendar([], []).longest() == math.inf


def test_a_berlin_window_opens_at_local_one_across_the_spring_change() -> None:
    # SPEC X9: local 01:00 in Europe/Berlin is 00:00Z before 2026-03-29 03:00 CEST and
    # 23:00Z the day before after it; the window still lasts four real hours.
    berlin = ZoneInfo("Europe/Berlin")
    window = Window(frozenset(range(7)), (1, 0), 4 * HOUR, "Europe/Berlin")
    since, until = _at("2026-03-27T12:00:00+00:00"), _at("2026-03-31T12:00:00+00:00")
    found = list(window.occurrences(since, until))
    assert [(datetime.fromtimestamp(b, UTC).isoformat(), e - b) for b, e in found] == [
        ("2026-03-28T00:00:00+00:00", 4 * HOUR),
        ("2026-03-29T00:00:00+00:00", 4 * HOUR),
        ("2026-03-29T23:00:00+00:00", 4 * HOUR),
        ("2026-03-30T23:00:00+00:00", 4 * HOUR),
    ]
    for begin, _ in found:
        local = datetime.fromtimestamp(begin, berlin)
        assert (local.hour, local.minute) == (1, 0)
    # The occurrence of 29 March runs 01:00 CET to 06:00 CEST: four hours, not five.
    calendar = Calendar([window], [])
    assert calendar.open_at(_at("2026-03-29T03:59:00+00:00")) == (
        _at("2026-03-29T00:00:00+00:00"),
        _at("2026-03-29T04:00:00+00:00"),
    )
    assert calendar.open_at(_at("2026-03-29T04:00:00+00:00")) is None
    # A four-hour step asked for after it starts at the next local 01:00 (23:00Z).
    assert calendar.fit(_at("2026-03-29T00:30:00+00:00"), 4 * HOUR, minor=False) == _at(
        "2026-03-29T23:00:00+00:00"
    )


def test_a_minor_exclusion_defers_a_minor_step_but_not_a_patch_step() -> None:
    # SPEC X9: scope `minor` holds only steps that change the minor version.
    rollout = read_rollout(
        {
            "apiVersion": "kupgrade.io/v1alpha1",
            "kind": "FleetRollout",
            "spec": {
                "stages": [{"name": "all", "maxConcurrency": 2}],
                "exclusions": [
                    {"from": "2026-12-20", "to": "2026-12-21", "scope": "minor", "timeZone": "UTC"}
                ],
            },
        },
        "example",
    )
    start = _at("2026-12-20T08:00:00+00:00")
    tasks = [
        Task("s1", "cluster/a", "a", "1.30.1", "1.31.0", (), True, 2.0 * HOUR),
        Task("s2", "cluster/b", "b", "1.30.1", "1.30.2", (), False, 2.0 * HOUR),
    ]
    conductor = Conductor(rollout, [Facts("a", "user"), Facts("b", "user")], tasks)
    placed = schedule(conductor, start, one_at_a_time=True)
    starts = {p.task.id: p.start for p in placed.placed}
    assert starts == {"s1": _at("2026-12-22T00:00:00+00:00"), "s2": start}
    assert placed.outcome == "completed"
    # the same through the calendar
    calendar = conductor.calendars["a"]
    assert calendar.fit(start, 2.0 * HOUR, minor=True) == _at("2026-12-22T00:00:00+00:00")
    assert calendar.fit(start, 2.0 * HOUR, minor=False) == start
    # a minor step that ends as the exclusion begins still goes first
    early = _at("2026-12-19T22:00:00+00:00")
    assert calendar.fit(early, 2.0 * HOUR, minor=True) == early
    assert calendar.fit(early + MINUTE, 2.0 * HOUR, minor=True) == _at("2026-12-22T00:00:00+00:00")
