"""The FleetRollout document (SPEC X9): stages of clusters, windows, exclusions and gates,
read strictly (an unknown field, a window that never opens, an unknown time zone or a gate
query that does not parse is refused in one line naming its field)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from kupgrade.errors import InputError
from kupgrade.plan.windows import WEEKDAYS, Exclusion, Window
from kupgrade.risks.promql.engine import parse as parse_promql
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.versions.goduration import parse_go_duration

API_VERSION = "kupgrade.io/v1alpha1"
KIND = "FleetRollout"
MAX_SOAK = 30 * 86400.0  # as GKE's rollout sequencing allows
SCOPES = ("all", "minor")
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_CLOCK = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")


class _Base(msgspec.Struct, forbid_unknown_fields=True, rename="camel", omit_defaults=True):
    pass


class Selector(_Base):
    """Clusters by name, by role or by labels; what is given must all match, and an
    empty selector selects every cluster."""

    names: list[str] | None = None
    roles: list[str] | None = None
    labels: dict[str, str] | None = None

    def selects(self, name: str, role: str, labels: dict[str, str]) -> bool:
        return (
            (self.names is None or name in self.names)
            and (self.roles is None or role in self.roles)
            and (self.labels is None or all(labels.get(k) == v for k, v in self.labels.items()))
        )


class GateDoc(_Base):
    name: str
    promql: str
    threshold: float
    for_: str = msgspec.field(default="0s", name="for")
    interval: str = "1m"


class StageDoc(_Base):
    name: str
    clusters: Selector = msgspec.field(default_factory=Selector)
    max_concurrency: int = 1
    soak: str = "0s"
    approval: bool = False
    gates: list[GateDoc] = msgspec.field(default_factory=list)


class WindowDoc(_Base):
    start: str
    duration: str
    clusters: Selector = msgspec.field(default_factory=Selector)
    days: list[str] | None = None
    time_zone: str = "UTC"


class ExclusionDoc(_Base):
    from_: str = msgspec.field(name="from")
    to: str
    scope: str = "all"
    clusters: Selector = msgspec.field(default_factory=Selector)
    time_zone: str = "UTC"


class Durations(_Base):
    """Forecasts the user states: one for every step, or per cluster."""

    default: str | None = None
    clusters: dict[str, str] = msgspec.field(default_factory=dict)
    twins: dict[str, str] = msgspec.field(default_factory=dict)  # cluster -> its twin


class SpecDoc(_Base):
    stages: list[StageDoc]
    target: str | dict[str, str] | None = None
    available: list[str] | None = None
    policy: str | None = None
    windows: list[WindowDoc] = msgspec.field(default_factory=list)
    exclusions: list[ExclusionDoc] = msgspec.field(default_factory=list)
    durations: Durations = msgspec.field(default_factory=Durations)


class Metadata(_Base):
    name: str = "rollout"


class RolloutFile(_Base):
    api_version: str
    kind: str
    spec: SpecDoc
    metadata: Metadata = msgspec.field(default_factory=Metadata)


# --- what the scheduler reads ------------------------------------------------------------


@dataclass(frozen=True)
class Gate:
    name: str
    promql: str
    threshold: float
    hold: float  # seconds above the threshold before the rollout halts (`for`)
    interval: float  # seconds between two evaluations


@dataclass(frozen=True)
class Stage:
    name: str
    clusters: Selector
    max_concurrency: int
    soak: float
    approval: bool
    gates: tuple[Gate, ...]


@dataclass(frozen=True)
class Scoped:
    """A window or an exclusion with the clusters it is for."""

    clusters: Selector
    rule: Window | Exclusion


@dataclass(frozen=True)
class Rollout:
    name: str
    stages: tuple[Stage, ...]
    windows: tuple[Scoped, ...]
    exclusions: tuple[Scoped, ...]
    target: str | dict[str, str] | None
    available: list[str] | None
    policy: str | None
    default_duration: float | None
    durations: dict[str, float]
    twins: dict[str, str]  # a cluster's twin (`kupgrade cluster import`), for its forecast
    document: dict[str, Any]  # as written, for the store

    def target_for(self, platform: str) -> str | None:
        if isinstance(self.target, dict):
            return self.target.get(platform)
        return self.target


def read_rollout(data: Any, where: str) -> Rollout:
    """The document checked field by field; InputError naming the first bad one."""
    if not isinstance(data, dict):
        raise InputError("a rollout is a mapping (kind: FleetRollout)", file=where)
    try:
        doc = msgspec.convert(_as_written(data), RolloutFile)
    except msgspec.ValidationError as exc:
        raise InputError(
            str(exc).replace("`$.", "`").replace("`$`", "the document"),
            file=where,
            hint="`kupgrade fleet rollout example` prints every field with what it means",
        ) from None
    if doc.api_version != API_VERSION or doc.kind != KIND:
        raise InputError(
            f"apiVersion {doc.api_version!r}, kind {doc.kind!r}: not a rollout",
            file=where,
            hint=f"a rollout has apiVersion: {API_VERSION} and kind: {KIND}",
        )
    spec = doc.spec
    if not spec.stages:
        raise InputError("a rollout has at least one stage", file=where, field="spec.stages")
    names = [s.name for s in spec.stages]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"two stages are named {twice[0]!r}", file=where, field="spec.stages")
    return Rollout(
        doc.metadata.name,
        tuple(_stage(s, where, f"spec.stages[{i}]") for i, s in enumerate(spec.stages)),
        tuple(_window(w, where, f"spec.windows[{i}]") for i, w in enumerate(spec.windows)),
        tuple(_exclusion(e, where, f"spec.exclusions[{i}]") for i, e in enumerate(spec.exclusions)),
        spec.target,
        spec.available,
        spec.policy,
        _duration(spec.durations.default, where, "spec.durations.default")
        if spec.durations.default
        else None,
        {
            n: _duration(d, where, f"spec.durations.clusters.{n}")
            for n, d in spec.durations.clusters.items()
        },
        dict(spec.durations.twins),
        msgspec.to_builtins(doc),
    )


def _as_written(data: dict[str, Any]) -> dict[str, Any]:
    """What YAML 1.1 turned into other types, back as the user wrote it: unquoted dates
    and times of exclusions (`from: 2026-12-20` is a date to PyYAML), and a window's
    unquoted start (`start: 22:30` is the base-60 integer 1350; `01:00` stays a string)."""
    spec = data.get("spec")
    if not isinstance(spec, dict):
        return data
    spec = dict(spec)
    exclusions = spec.get("exclusions")
    if isinstance(exclusions, list):
        spec["exclusions"] = [
            {k: _iso(v) if k in ("from", "to") else v for k, v in e.items()}
            if isinstance(e, dict)
            else e
            for e in exclusions
        ]
    windows = spec.get("windows")
    if isinstance(windows, list):
        spec["windows"] = [
            {**w, "start": f"{w['start'] // 60:02d}:{w['start'] % 60:02d}"}
            if isinstance(w, dict) and type(w.get("start")) is int and w["start"] >= 60
            else w
            for w in windows
        ]
    return {**data, "spec": spec}


def _iso(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


def _duration(text: str, where: str, field: str, *, zero: bool = False) -> float:
    """Go's durations (90m, 2h30m) and whole days (3d), as soaks are often written."""
    text = str(text).strip()
    if text.endswith("d") and text[:-1].isdigit():
        seconds = int(text[:-1]) * 86400.0
    else:
        seconds = parse_go_duration(text)
        if seconds == 0 and not re.fullmatch(r"0+(\.0*)?[hms]?", text):
            seconds = -1.0
    if seconds < 0 or (seconds == 0 and not zero) or not math.isfinite(seconds):
        raise InputError(
            f"{text!r} is not a duration{'' if zero else ' above zero'}",
            file=where,
            field=field,
            hint="write it as Go does (90m, 2h30m) or in days (3d)",
        )
    return seconds


def _stage(stage: StageDoc, where: str, at: str) -> Stage:
    if not 1 <= stage.max_concurrency <= 10_000:
        raise InputError(
            f"maxConcurrency is {stage.max_concurrency}; it is at least 1",
            file=where,
            field=f"{at}.maxConcurrency",
        )
    soak = _duration(stage.soak, where, f"{at}.soak", zero=True)
    if soak > MAX_SOAK:
        raise InputError(
            f"a soak of {stage.soak} is longer than 30 days", file=where, field=f"{at}.soak"
        )
    return Stage(
        stage.name,
        stage.clusters,
        stage.max_concurrency,
        soak,
        stage.approval,
        tuple(_gate(g, where, f"{at}.gates[{i}]") for i, g in enumerate(stage.gates)),
    )


def _gate(gate: GateDoc, where: str, at: str) -> Gate:
    try:
        parse_promql(gate.promql)
    except PromQLError as exc:
        raise InputError(
            f"gate {gate.name}: {exc.message}",
            file=where,
            field=f"{at}.promql",
            hint="the query is PromQL, as Prometheus's /api/v1/query takes it",
        ) from None
    if not math.isfinite(gate.threshold):
        raise InputError(
            "a gate's threshold is a finite number", file=where, field=f"{at}.threshold"
        )
    return Gate(
        gate.name,
        gate.promql,
        gate.threshold,
        _duration(gate.for_, where, f"{at}.for", zero=True),
        _duration(gate.interval, where, f"{at}.interval"),
    )


def _zone(name: str, where: str, field: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(
            f"unknown time zone {name!r}",
            file=where,
            field=field,
            hint="an IANA name such as Europe/Berlin, America/New_York or UTC",
        ) from None
    return name


def _window(window: WindowDoc, where: str, at: str) -> Scoped:
    found = _CLOCK.fullmatch(window.start.strip())
    if found is None:
        raise InputError(
            f"start {window.start!r} is not a time of day",
            file=where,
            field=f"{at}.start",
            hint='write it as "HH:MM" (24-hour clock)',
        )
    days = [_day(d) for d in window.days] if window.days is not None else list(WEEKDAYS)
    unknown = [d for d in days if d not in WEEKDAYS]
    if unknown:
        raise InputError(
            f"{unknown[0]!r} is not a day",
            file=where,
            field=f"{at}.days",
            hint=f"days are {', '.join(WEEKDAYS)}",
        )
    if not days:
        raise InputError(
            "the window never opens: it lists no day",
            file=where,
            field=f"{at}.days",
            hint="list the days it opens on, or leave `days` out for every day",
        )
    seconds = _duration(window.duration, where, f"{at}.duration")
    return Scoped(
        window.clusters,
        Window(
            frozenset(WEEKDAYS.index(d) for d in days),
            (int(found.group(1)), int(found.group(2))),
            seconds,
            _zone(window.time_zone, where, f"{at}.timeZone"),
        ),
    )


def _day(text: str) -> str:
    """Sat, sat, SAT and Saturday alike."""
    found = text.strip()[:3].capitalize()
    full = {d: name for d, name in zip(WEEKDAYS, _DAY_NAMES, strict=True)}
    return found if found in full and full[found].startswith(text.strip().lower()) else text


def _instant(text: str, zone: str, where: str, field: str, *, end: bool) -> float:
    """A date (the whole day, in `zone`) or an RFC 3339 time."""
    text = str(text).strip()
    try:
        day = date.fromisoformat(text)
    except ValueError:
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise InputError(
                f"{text!r} is neither a date nor an RFC 3339 time",
                file=where,
                field=field,
                hint="write 2026-12-20 (a whole day) or 2026-12-20T18:00:00Z",
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=ZoneInfo(zone))
        return moment.astimezone(UTC).timestamp()
    if end:
        day += timedelta(days=1)
    return datetime.combine(day, time(), ZoneInfo(zone)).astimezone(UTC).timestamp()


def _exclusion(exclusion: ExclusionDoc, where: str, at: str) -> Scoped:
    if exclusion.scope not in SCOPES:
        raise InputError(
            f"scope {exclusion.scope!r} is not one of {', '.join(SCOPES)}",
            file=where,
            field=f"{at}.scope",
        )
    zone = _zone(exclusion.time_zone, where, f"{at}.timeZone")
    start = _instant(exclusion.from_, zone, where, f"{at}.from", end=False)
    end = _instant(exclusion.to, zone, where, f"{at}.to", end=True)
    if end <= start:
        raise InputError(
            f"the exclusion ends ({exclusion.to}) before it starts ({exclusion.from_})",
            file=where,
            field=f"{at}.to",
        )
    return Scoped(exclusion.clusters, Exclusion(start, end, exclusion.scope))


EXAMPLE = """\
# A staged rollout of a fleet (kupgrade fleet rollout plan|rehearse|start FILE --fleet NAME).
apiVersion: kupgrade.io/v1alpha1   # the rollout format's version
kind: FleetRollout                 # what the document is
metadata:
  name: weekend-minor              # how reports and events name the rollout
spec:
  # The version every cluster goes to: one version, or one per platform
  # ({gdc: 1.29.100-gke.251, kubernetes: 1.31.2}); default: the fleet file's target.
  target: 1.29.100-gke.251
  # Releases steps may land on (default: the fleet file's `available`).
  available: [1.28.500-gke.120, 1.29.100-gke.251]
  # Stages, in order. A cluster belongs to the first stage that selects it; a stage
  # starts once the stage before it is done and its soak is over.
  stages:
    - name: management             # distributed cloud: admin clusters go before their users
      clusters: {roles: [admin, hybrid]}
    - name: canary
      # Which clusters: {names: [...]}, {roles: [admin|hybrid|user|standalone|kubernetes]},
      # {labels: {KEY: VALUE}} (the fleet file's `labels` of each cluster); what is given
      # must all match, and {} selects every cluster not selected by an earlier stage.
      clusters: {names: [lab-user-1]}
      maxConcurrency: 1            # clusters of the stage upgrading at once (default 1)
      soak: 2h                     # wait after its last cluster finishes (Go durations or 3d; up to 30d)
      approval: false              # true: wait for `kupgrade fleet rollout approve canary`
      gates:                       # checked on each cluster of the stage, before it starts and while it soaks
        - name: error-budget
          # PromQL over the cluster's metrics: its snapshot on simulated clusters
          # (simulation.clusters.NAME.metrics in the fleet file), its Prometheus on real ones.
          # The largest value of the answer counts; no samples counts as passing.
          promql: 'sum(rate(http_errors_total[5m])) / sum(rate(http_requests_total[5m]))'
          threshold: 0.01          # halt when the value is above it ...
          for: 10m                 # ... for this long (default 0s: at once)
          interval: 1m             # how often it is evaluated (default 1m)
    - name: production
      clusters: {roles: [user]}
      maxConcurrency: 2
      approval: true
  # When steps may start and must finish, per cluster (a cluster no window selects may
  # move at any time). A step starts only where its forecast ends in the same window.
  windows:
    - clusters: {roles: [user]}    # which clusters (default: every one)
      days: [Sat, Sun]             # Mon Tue Wed Thu Fri Sat Sun (default: every day)
      start: "01:00"               # local time, 24-hour clock
      duration: 4h                 # real hours, also across a daylight-saving change
      timeZone: Europe/Berlin      # an IANA time zone (default UTC)
  # When no step may run: `from` and `to` are whole days (both included) in timeZone,
  # or RFC 3339 times; scope `minor` holds only minor-version steps, `all` every step.
  exclusions:
    - {from: "2026-12-20", to: "2027-01-05", scope: minor}   # clusters: {...} narrows it
  # Forecasts you know better than kupgrade's (from each cluster's profile by default).
  # Order: a cluster's own line here, then its twin's calibration (the measured length of
  # its last updates), then `default`, then the cluster's profile.
  durations:
    clusters: {lab-user-1: 90m}    # per cluster; `default: 2h` for every other one
    twins: {lab-user-2: lab-user-2-twin}   # twins made by `kupgrade cluster import`
"""
