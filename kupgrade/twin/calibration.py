"""The twin's timings measured on the cluster's own history (SPEC X7).

A twin's durations should be its cluster's, not the profile's guesses: its updates
(ClusterVersion history), each operator's rollout (ClusterOperator Progressing
transitions), a node's OS update and reboot (the machine-config daemon's and the kubelet's
Node events) and each workload's pod start-up (Pod conditions). Every figure says whether
it was measured and from what, so the forecast tells measured from default. The input is
whatever a must-gather or a live API holds: a missing, mistyped or unparsable value drops
one sample, never the calibration.
"""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from msgspec import structs

from kupgrade.sim.profile import Spec, operators_of
from kupgrade.twin.shapes import as_dict, as_list

Obj = Mapping[str, Any]
Marks = list[tuple[float, int, str]]  # one node's events: (time, causal rank, reason)
DEFAULT = "default (profile)"
NO_UPDATE = "no completed update in ClusterVersion history"
YEAR = 365 * 86400.0  # a longer span is a broken clock, and the profile refuses it too
FLOOR_MINUTES = 0.5  # an operator whose finish hides behind an earlier one still takes time
# One update gives one sample per operator; the twin draws each rollout uniformly from a
# range, so the measured minutes are widened by a fifth each way: the rehearsal's runs vary
# around what the cluster did, as the cluster's own next rollout will (SPEC X7).
SPREAD = (0.8, 1.2)

# The machine-config daemon's Node events (openshift/machine-config-operator):
# pkg/daemon/update.go applyOSChanges records OSUpdateStarted, then creates OSUpdateStaged
# once rpm-ostree has staged the new OS; pkg/daemon/update.go reboot records Reboot ("Node
# will reboot into config ...") just before it asks systemd to reboot.
STARTED, STAGED, REBOOT = "OSUpdateStarted", "OSUpdateStaged", "Reboot"
# The kubelet's (kubernetes pkg/kubelet/events/event.go NodeReady, recorded by
# pkg/kubelet/nodestatus/setters.go ReadyCondition when Ready turns True).
READY = "NodeReady"
_RANK = {STARTED: 0, STAGED: 1, REBOOT: 2, READY: 3}  # same-second events in causal order


@dataclass(frozen=True)
class Figure:
    """One duration the twin uses: the range, and whether the cluster's history gave it."""

    name: str
    seconds: tuple[float, float]
    measured: bool
    source: str
    samples: int

    def to_json(self) -> dict[str, Any]:
        # Field by field: asdict's deep copy cost a second for a 4,000-workload twin.
        return {
            "name": self.name,
            "seconds": list(self.seconds),
            "measured": self.measured,
            "source": self.source,
            "samples": self.samples,
        }


@dataclass(frozen=True)
class Calibration:
    """The figures in a fixed order: the cluster update, operators by runlevel, the node
    phases, then workloads by namespace and name."""

    figures: tuple[Figure, ...]

    def to_json(self) -> list[dict[str, Any]]:
        return [f.to_json() for f in self.figures]

    def figure(self, name: str) -> Figure | None:
        return next((f for f in self.figures if f.name == name), None)


@dataclass(frozen=True)
class _Update:
    version: str
    started: float
    completed: float
    install: bool


# A field as found, or an empty one of the expected type: a wrong type drops a sample.
def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _time(value: object) -> float | None:
    """A timestamp, or None: unlike versions.times.parse_time's 0.0, a missing time must
    drop its sample rather than stand for 1970. Zone-less times are UTC, as the API's are."""
    if isinstance(value, str) and 0 < len(value) <= 64:
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, datetime):  # a datetime: a YAML loader resolved the timestamp
        return None
    try:
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def _span(start: float | None, end: float | None) -> float | None:
    """A duration that can be one: both ends known, not negative, under a year."""
    if start is None or end is None or not 0 <= end - start <= YEAR:
        return None
    return end - start


def _spread(low: float, high: float) -> tuple[float, float]:
    return (round(low, 1), round(high, 1))


def _default(name: str, low: float, high: float) -> Figure:
    return Figure(name, (low, high), False, DEFAULT, 0)


def _range(name: str, samples: list[float], source: str) -> Figure:
    return Figure(name, _spread(min(samples), max(samples)), True, source, len(samples))


def _spans(pairs: list[tuple[float | None, float | None]]) -> list[float]:
    return [d for start, end in pairs if (d := _span(start, end)) is not None]


def _conditions(obj: Obj) -> dict[str, Obj]:
    """An object's status conditions by type (the first of a type, as the API keeps one)."""
    conds: dict[str, Obj] = {}
    for raw in as_list(as_dict(obj.get("status")).get("conditions")):
        conds.setdefault(_text(as_dict(raw).get("type")), as_dict(raw))
    return conds


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _by_kind(objects: Sequence[Obj]) -> dict[str, list[Obj]]:
    """One pass over the objects and the items of Lists (as `kubectl get -o yaml` writes
    them): only these kinds carry history the twin uses."""
    kinds: dict[str, list[Obj]] = {k: [] for k in ("ClusterVersion", "ClusterOperator")}
    kinds.update({k: [] for k in ("Event", "Node", "Pod")})
    for obj in map(as_dict, objects if isinstance(objects, Sequence) else ()):
        listed = _text(obj.get("kind")).endswith("List")
        for item in map(as_dict, as_list(obj.get("items")) if listed else [obj]):
            if (bucket := kinds.get(_text(item.get("kind")))) is not None:
                bucket.append(item)
    return kinds


def _completed(versions: list[Obj]) -> list[_Update]:
    """The Completed entries of the ClusterVersion's history (the one named `version`).
    The cluster-version operator prepends each update, so the last entry is the install."""
    named = [cv for cv in versions if as_dict(cv.get("metadata")).get("name") == "version"]
    cv = (named or versions or [{}])[0]
    history = as_list(as_dict(cv.get("status")).get("history"))
    updates = []
    for i, raw in enumerate(history):
        entry = as_dict(raw)
        if entry.get("state") != "Completed":
            continue
        started, completed = _time(entry.get("startedTime")), _time(entry.get("completionTime"))
        if started is None or completed is None or _span(started, completed) is None:
            continue  # running, or a broken clock
        install = i == len(history) - 1
        updates.append(_Update(_text(entry.get("version")), started, completed, install))
    return updates


def _cluster_update(updates: list[_Update]) -> Figure:
    """How long the cluster's updates took, min to max. An install is a different job
    (it builds machines too), so it counts only when the history has no update at all."""
    used = [u for u in updates if not u.install]
    source = f"{_plural(len(used), 'completed update')} in ClusterVersion history"
    if not used and (used := [u for u in updates if u.install]):
        source = "the install in ClusterVersion history (no completed update)"
    if not used:
        return Figure("cluster update", (0.0, 0.0), False, NO_UPDATE, 0)
    return _range("cluster update", [u.completed - u.started for u in used], source)


def _finishes(operators: list[Obj], update: _Update) -> dict[str, float]:
    """When each ClusterOperator stopped Progressing within the update. Its status.versions
    say which version it reached but not when, so the Progressing=False transition (set
    by the operator once its rollout is done) is the only clock."""
    done: dict[str, float] = {}
    for co in operators:
        name = _text(as_dict(co.get("metadata")).get("name"))
        cond = _conditions(co).get("Progressing", {})
        at = _time(cond.get("lastTransitionTime")) if cond.get("status") == "False" else None
        if name and at is not None and update.started <= at <= update.completed:
            done.setdefault(name, at)
    return done


def _operators(spec: Spec, operators: list[Obj], updates: list[_Update]) -> list[Figure]:
    """A figure per profile operator. The cluster-version operator applies runlevels in
    order, so an operator's rollout starts when the runlevels before it have finished:
    its minutes are its finish minus the latest finish before its runlevel (the update's
    start for the first). Only an update counts: an install runs every component at once
    (cluster-version-operator pkg/cvo/sync_worker.go, InitializingPayload)."""
    ops = list({o.name: o for o in reversed(operators_of(spec))}.values())
    ops.sort(key=lambda o: (o.runlevel, o.name))
    newest = max((u for u in updates if not u.install), key=lambda u: u.completed, default=None)
    done = _finishes(operators, newest) if newest else {}
    figures: list[Figure] = []
    before = newest.started if newest else 0.0
    for _, group in itertools.groupby(ops, key=lambda o: o.runlevel):
        level = list(group)
        for op in level:
            at = done.get(op.name)
            if at is None or newest is None:
                figures.append(_default(f"operator {op.name}", *(m * 60 for m in op.minutes)))
                continue
            minutes = max(FLOOR_MINUTES, (at - before) / 60)
            seconds = _spread(minutes * 60 * SPREAD[0], min(minutes * 60 * SPREAD[1], YEAR))
            update = f"the {newest.version} update" if newest.version else "the newest update"
            source = f"from ClusterOperator/{op.name} Progressing transition in {update}"
            figures.append(Figure(f"operator {op.name}", seconds, True, source, 1))
        before = max([before, *(done[o.name] for o in level if o.name in done)])
    return figures


def _occurrences(event: Obj) -> list[float]:
    """When an event happened: its first and, when the recorder folded repeats into it
    (count, series), its last occurrence; core/v1 and events.k8s.io/v1 field names."""
    firsts = [event.get(k) for k in ("firstTimestamp", "deprecatedFirstTimestamp", "eventTime")]
    lasts = [event.get(k) for k in ("lastTimestamp", "deprecatedLastTimestamp")]
    lasts.append(as_dict(event.get("series")).get("lastObservedTime"))
    first = min((t for t in map(_time, firsts) if t is not None), default=None)
    last = max((t for t in map(_time, lasts) if t is not None), default=None)
    if first is None or last is None:
        return [t for t in (first, last) if t is not None]
    return [first, last] if last - first >= 1.0 else [first]


def _node_marks(events: list[Obj]) -> dict[str, Marks]:
    """The update and reboot events of each node, as (time, causal rank, reason)."""
    marks: dict[str, Marks] = defaultdict(list)
    for event in events:
        reason = _text(event.get("reason"))
        subject = as_dict(event.get("involvedObject") or event.get("regarding"))
        name = _text(subject.get("name"))
        if reason in _RANK and subject.get("kind") == "Node" and name:
            marks[name].extend((at, _RANK[reason], reason) for at in _occurrences(event))
    return marks


def _ready_since(nodes: list[Obj]) -> dict[str, float]:
    """When each node last became Ready: the end of a reboot whose NodeReady event expired."""
    since: dict[str, float] = {}
    for node in nodes:
        name = _text(as_dict(node.get("metadata")).get("name"))
        cond = _conditions(node).get("Ready", {})
        at = _time(cond.get("lastTransitionTime")) if cond.get("status") == "True" else None
        if name and at is not None:
            since.setdefault(name, at)
    return since


def _walk(marks: Marks, ready: float | None) -> tuple[list[float], list[float]]:
    """One node's update and reboot spans. The twin's update phase ends when the node
    reboots (sim/openshift/world.py records Reboot then), so an update runs from
    OSUpdateStarted to Reboot, or to OSUpdateStaged when the Reboot event is gone; a
    reboot runs from Reboot to the next NodeReady, or to the Ready condition after it."""
    updates: list[tuple[float | None, float | None]] = []
    reboots: list[tuple[float | None, float | None]] = []
    started = staged = rebooting = None
    for at, _, reason in sorted(marks):
        if reason == STARTED:
            updates.append((started, staged))  # a start never staged measures nothing
            started, staged = at, None
        elif reason == STAGED and started is not None:
            staged = at
        elif reason == REBOOT:
            updates.append((started, at))
            started, staged, rebooting = None, None, at
        elif reason == READY and rebooting is not None:
            reboots.append((rebooting, at))
            rebooting = None
    updates.append((started, staged))
    reboots.append((rebooting, ready))  # _span drops a Ready condition from before it
    return _spans(updates), _spans(reboots)


def _nodes(spec: Spec, events: list[Obj], nodes: list[Obj]) -> list[Figure]:
    """The node update and reboot ranges, min to max over every node's spans."""
    ready = _ready_since(nodes)
    spans: dict[str, list[float]] = {"update": [], "reboot": []}
    on = {"update": 0, "reboot": 0}  # how many nodes gave a span of the phase
    for name, marks in _node_marks(events).items():
        for phase, found in zip(("update", "reboot"), _walk(marks, ready.get(name)), strict=True):
            spans[phase] += found
            on[phase] += bool(found)
    figures = []
    for phase, what in (
        ("update", "OSUpdateStarted to Reboot (or OSUpdateStaged)"),
        ("reboot", "Reboot to NodeReady (or Ready condition)"),
    ):
        found, on_nodes = spans[phase], _plural(on[phase], "node")
        source = f"{_plural(len(found), 'span')} of {what} in Node events on {on_nodes}"
        default = getattr(spec.node_phases, phase)
        figures.append(
            _range(f"node {phase}", found, source) if found else _default(f"node {phase}", *default)
        )
    return figures


def _owner(pod: Obj) -> str:
    """The workload a pod belongs to: its controller, a ReplicaSet standing for the
    Deployment named by its name without the pod-template hash; no controller, itself."""
    meta = as_dict(pod.get("metadata"))
    for raw in as_list(meta.get("ownerReferences")):
        ref = as_dict(raw)
        name = _text(ref.get("name"))
        if ref.get("controller") is True and name:
            return name.rsplit("-", 1)[0] if ref.get("kind") == "ReplicaSet" else name
    return _text(meta.get("name"))


def _startup(pod: Obj) -> float | None:
    """Seconds from scheduled (or started) to Ready for a Running, Ready pod."""
    status = as_dict(pod.get("status"))
    if status.get("phase") != "Running":
        return None
    conds = _conditions(pod)
    ready = conds.get("Ready", {})
    if ready.get("status") != "True":
        return None
    start = _time(conds.get("PodScheduled", {}).get("lastTransitionTime"))
    start = start if start is not None else _time(status.get("startTime"))
    return _span(start, _time(ready.get("lastTransitionTime")))


def _workloads(spec: Spec, pods: list[Obj]) -> list[Figure]:
    """A figure per profile workload: the median start-up of its pods (one slow pod of a
    hundred should not set the twin's every start-up)."""
    wanted = {(w.namespace, w.name): w for w in reversed(spec.workloads)}
    samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    for pod in pods:
        key = (_text(as_dict(pod.get("metadata")).get("namespace")) or "default", _owner(pod))
        if key in wanted and (took := _startup(pod)) is not None:
            samples[key].append(took)
    figures = []
    for key in sorted(wanted):
        name, found = f"pod start-up {key[0]}/{key[1]}", samples.get(key)
        if not found:
            figures.append(_default(name, wanted[key].start_seconds, wanted[key].start_seconds))
            continue
        middle = statistics.median(found)
        source = f"median of {_plural(len(found), 'Running pod')} (PodScheduled to Ready)"
        figures.append(Figure(name, _spread(middle, middle), True, source, len(found)))
    return figures


def calibrate(objects: Sequence[Obj], spec: Spec) -> Calibration:
    """The twin's figures from the cluster's objects (SPEC X7); what the history does not
    show keeps the profile's value and says so."""
    kinds = _by_kind(objects)
    updates = _completed(kinds["ClusterVersion"])
    operators = _operators(spec, kinds["ClusterOperator"], updates)
    nodes, pods = _nodes(spec, kinds["Event"], kinds["Node"]), _workloads(spec, kinds["Pod"])
    return Calibration((_cluster_update(updates), *operators, *nodes, *pods))


def calibrated(spec: Spec, calibration: Calibration) -> Spec:
    """A copy of the profile with the measured figures in place (SPEC X7). The cluster
    update's figure is not a profile field: the forecast compares against it."""
    measured = {f.name: f.seconds for f in calibration.figures if f.measured}
    changes: dict[str, Any] = {}
    ops = operators_of(spec)
    if any(f"operator {o.name}" in measured for o in ops):
        changes["operators"] = [
            structs.replace(o, minutes=(s[0] / 60, s[1] / 60)) if s else o
            for o, s in ((o, measured.get(f"operator {o.name}")) for o in ops)
        ]
    phases = {p: measured[f"node {p}"] for p in ("update", "reboot") if f"node {p}" in measured}
    if phases:
        changes["node_phases"] = structs.replace(spec.node_phases, **phases)
    starts = [measured.get(f"pod start-up {w.namespace}/{w.name}") for w in spec.workloads]
    if any(starts):
        changes["workloads"] = [
            structs.replace(w, start_seconds=s[0]) if s else w
            for w, s in zip(spec.workloads, starts, strict=True)
        ]
    return structs.replace(spec, **changes)
