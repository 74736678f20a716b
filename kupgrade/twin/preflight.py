"""`kupgrade upgrade --preflight`: every blocker named before an upgrade starts (SPEC X8).

The cluster (a twin, or any simulated cluster) is read as it stands (twin/checks.py), then
the upgrade is requested and rehearsed on copies of it, never on the cluster itself: a
few runs with different seeds give the forecast's range, the drains that waited and the
runs that did not finish. A blocker is an exit code: 1 unless every blocker found is of a
class the user accepted.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec

from kupgrade.cluster.backend import Obj
from kupgrade.collector import paused
from kupgrade.errors import InputError, KupgradeError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.fleet.downtime import Downtime, measured
from kupgrade.sim.homes import IMPORT_META, copy_cluster
from kupgrade.sim.platform import UpgradeAsk
from kupgrade.sim.platforms import platform_of
from kupgrade.sim.profile import Profile, Spec
from kupgrade.sim.report import HOLD_UPS
from kupgrade.sim.runs import local_loop
from kupgrade.sim.store import Store
from kupgrade.sim.upgrades import upgrade_cluster
from kupgrade.skew.removed_apis import Use
from kupgrade.twin.checks import CLASSES, Blocker, Cluster, metric_uses, standing
from kupgrade.twin.importer import Source, import_twin
from kupgrade.versions.goduration import go_duration, parse_go_duration

HORIZON = 3 * 86400.0  # a rehearsal still running after three days is stalled
WAITS = ("EvictionBlocked", "DrainWaiting", "DrainThresholdExceeded", "DrainTimeout")


@dataclass
class Preflight:
    cluster: str
    version: str
    target: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    blockers: list[Blocker] = field(default_factory=list)
    waits: list[dict[str, Any]] = field(default_factory=list)
    window: float | None = None

    @property
    def blocked(self) -> bool:
        return any(not b.accepted for b in self.blockers)

    def forecast(self) -> dict[str, Any]:
        done = [r["seconds"] for r in self.runs if r["outcome"] == "completed"]
        return {
            "seconds": {"low": min(done), "high": max(done)} if done else None,
            "runs": len(self.runs),
            "completed": len(done),
            "pools": self._ranges("pools"),
            "stages": self._ranges("stages"),
            "window": self.window,
            "fits": None if self.window is None or not done else max(done) <= self.window,
        }

    def _ranges(self, part: str) -> dict[str, dict[str, float]]:
        """Each pool's (or stage's) span over the rehearsals, shortest and longest."""
        spans: dict[str, list[float]] = defaultdict(list)
        for run in self.runs:
            for name, seconds in run[part].items():
                spans[name].append(seconds)
        return {n: {"low": min(s), "high": max(s)} for n, s in sorted(spans.items())}

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "version": self.version,
            "target": self.target,
            "blocked": self.blocked,
            "forecast": self.forecast(),
            "blockers": [b.to_json() for b in self.blockers],
            "drainWaits": self.waits,
        }

    def lines(self) -> list[str]:
        f = self.forecast()
        out = [f"Preflight of {self.cluster}: {self.version} -> {self.target}", ""]
        if f["seconds"]:
            low, high = f["seconds"]["low"], f["seconds"]["high"]
            fits = ""
            if self.window is not None:
                fits = (
                    f"; fits the {_d(self.window)} window"
                    if f["fits"]
                    else (f"; does NOT fit the {_d(self.window)} window")
                )
            out.append(
                f"Forecast: {_span(low, high)} ({f['completed']} of {f['runs']} rehearsals finished){fits}"
            )
            for part, span in [*f["stages"].items(), *f["pools"].items()]:
                out.append(f"  {part}: {_span(span['low'], span['high'])}")
        else:
            out.append(f"Forecast: none of {f['runs']} rehearsals finished")
        for wait in self.waits:
            out.append(f"Drain of {wait['node']} waits {_d(wait['seconds'])}: {wait['message']}")
        out.append("")
        if not self.blockers:
            out.append("No blockers.")
        for b in self.blockers:
            tag = "accepted" if b.accepted else "BLOCKER"
            out.append(f"{tag} [{b.check}] {b.message}")
            out.append(
                f"  objects: {', '.join(b.objects[:12])}{' ...' if len(b.objects) > 12 else ''}"
            )
            out.append(f"  fix: {b.fix}")
        return out


def _d(seconds: float) -> str:
    return go_duration(round(seconds))


def _span(low: float, high: float) -> str:
    return _d(low) if round(low) == round(high) else f"{_d(low)} to {_d(high)}"


def parse_window(text: str) -> float:
    """A maintenance window's length as Go writes durations (4h, 90m, 2h30m)."""
    seconds = parse_go_duration(text)
    if seconds <= 0:
        raise InputError(f"{text!r} is not a duration", field="--window", hint="e.g. 4h or 2h30m")
    return seconds


def preflight(
    root: Path,
    spec: Spec,
    ask: UpgradeAsk,
    *,
    window: float | None = None,
    accept: frozenset[str] = frozenset(),
    runs: int = 3,
) -> Preflight:
    """Check the cluster at `root` and rehearse `ask` on copies of it (SPEC X8). The
    cluster's own store is never opened: the first copy is read for the checks, so a
    100,000-pod cluster is loaded once per rehearsal, not once more for them."""
    unknown = accept - set(CLASSES)
    if unknown:
        raise InputError(
            f"{', '.join(sorted(unknown))} is not a class of blocker",
            field="--accept",
            hint=f"one of {', '.join(CLASSES)}",
        )
    target = ask.to or ""
    result = Preflight(root.name, spec.version, target, window=window)
    standing_found: list[Blocker] = []  # read from the first copy, before its request
    met: list[Blocker] = []  # what the requests met
    for seed in range(spec.seed, spec.seed + max(1, runs)):
        look = None if result.runs else (lambda s: standing_found.extend(_look(s, spec, target)))
        run, refused = _rehearse(root, spec, ask, seed, look)
        met += [b for b in refused if b not in met]
        if run is None:
            break
        result.runs.append(run)
    result.waits = _waits(result.runs)
    blockers = [*standing_found, *met, *_outcomes(result, window)]
    result.blockers = [
        Blocker(b.check, b.message, b.objects, b.fix, b.check in accept) for b in blockers
    ]
    return result


def _look(store: Store, spec: Spec, target: str) -> list[Blocker]:
    """What the cluster's store says before anything is asked of it: the checks of the
    cluster as it stands, with the API uses its import found."""
    api = SimCluster(store)
    record = store.meta(IMPORT_META)
    uses = (
        [_use(u) for u in (record or {}).get("apiUses") or []] if isinstance(record, dict) else []
    )
    metrics = Path(spec.metrics) if spec.metrics else None
    with paused():  # a big cluster's pods and budgets, read once (kupgrade/collector.py)
        return _standing(api, spec, target, [*uses, *metric_uses(metrics, api.now())])


def _standing(api: SimCluster, spec: Spec, target: str, uses: list[Use]) -> list[Blocker]:
    """The checks of the cluster as it stands (twin/checks.py)."""
    # Each budget's pods as the simulated disruption controller counts them (sim/budgets.py).
    pods, budgets = api.list("Pod"), api.list("PodDisruptionBudget")
    members: dict[tuple[str, str], list[Obj]] = {_named(b): [] for b in budgets}
    for pod in pods:
        for budget in api.budgets_for(pod):
            members[_named(budget)].append(pod)
    selected = [(b, members[_named(b)]) for b in budgets]
    facts = Cluster(spec.version, target, spec.platform, pods, selected)
    workloads = [
        {
            "kind": w.kind,
            "namespace": w.namespace,
            "name": w.name,
            "replicas": w.replicas,
            "down": w.start_seconds + w.termination_seconds,
        }
        for w in spec.workloads
    ]
    return standing(api, facts, workloads, uses)


def _named(obj: Obj) -> tuple[str, str]:
    return (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def preflight_live(
    source: Source,
    ask: UpgradeAsk,
    *,
    window: float | None = None,
    accept: frozenset[str] = frozenset(),
    runs: int = 3,
) -> Preflight:
    """The preflight of a live cluster: a temporary twin imported read-only, checked and
    rehearsed, then removed; the cluster itself is only read (SPEC X7, X8)."""
    with tempfile.TemporaryDirectory(prefix="kupgrade-twin-") as tmp:
        name = source.context or "live"
        made = import_twin(Path(tmp), name, source)
        root = Path(tmp) / "clusters" / name
        return preflight(root, made.twin.profile.spec, ask, window=window, accept=accept, runs=runs)


def _use(raw: dict[str, Any]) -> Use:
    removed = raw.get("reported_removed_in")
    return Use(
        **{
            **raw,
            "notes": tuple(raw.get("notes") or ()),
            "reported_removed_in": tuple(removed) if removed else None,
        }
    )


def _rehearse(
    root: Path,
    spec: Spec,
    ask: UpgradeAsk,
    seed: int,
    look: Callable[[Store], object] | None = None,
) -> tuple[dict[str, Any] | None, list[Blocker]]:
    """One rehearsal on a copy of the cluster with `seed`: its outcome, duration, each
    pool's span and its drains' waits, and the blockers its request met. A request the
    platform refuses by a rule is a blocker; one refused only for its known risks is
    rehearsed all the same, the risks accepted on the copy, so the forecast still comes."""
    with tempfile.TemporaryDirectory(prefix="kupgrade-preflight-") as tmp:
        copy = Path(tmp) / root.name
        copy_cluster(root, copy)
        store = Store(copy / "cluster.db")
        try:
            if look is not None:
                look(store)
            profile = msgspec.convert(store.meta("profile"), Profile)
            profile.spec.seed = seed
            store.set_meta("profile", msgspec.to_builtins(profile))
            store.set_meta("seed", seed)
            blockers, accepted = request_on_copy(copy, store, profile.spec, ask, spec.version)
            if not accepted:
                return None, blockers
            store.commit()
            return run_copy(copy, store, profile.spec, seed), blockers
        finally:
            store.close()


def request_on_copy(
    copy: Path, store: Store, spec: Spec, ask: UpgradeAsk, version: str
) -> tuple[list[Blocker], bool]:
    """Ask for the upgrade on the copy: the blockers the request met, and whether it
    was taken (then the rehearsal runs)."""
    try:
        said = upgrade_cluster(copy, store, spec, ask)
    except KupgradeError as exc:
        if not exc.rule:  # the request itself is wrong: the user's to fix, not a blocker
            raise
        risk = exc.rule.startswith("SPEC A")  # a conditional update's risks (SPEC A4)
        found = Blocker(
            "risk" if risk else "skew",
            f"the upgrade is {'not recommended' if risk else 'refused'}: {' '.join(exc.message.split())}",
            (f"ClusterVersion {version}" if risk else f"cluster at {version}",),
            exc.hint
            or (
                "accept the risk with --allow-not-recommended once it is understood"
                if risk
                else "see the rule"
            ),
        )
        if not risk or ask.allow_not_recommended:
            return [found], False
        accepted, taken = request_on_copy(
            copy, store, spec, replace(ask, allow_not_recommended=True), version
        )
        return [found, *accepted], taken
    if said.exit:
        words = " ".join([*said.errors, *said.lines]).strip()
        check = "skew" if "skew" in words.lower() else "risk"
        refusal = Blocker(
            check,
            f"the upgrade is refused: {words}",
            (f"ClusterVersion {version}",),
            "see the refusal's own fix",
        )
        return [refusal], False
    return [], True


def run_copy(
    copy: Path, store: Store, spec: Spec, seed: int, *, downtime: bool = False
) -> dict[str, Any]:
    """The rehearsal of the requested upgrade, as its report's figures; with `downtime`,
    each workload's seconds down and short too (a look at every pod each time pods
    change: a sweep asks for it, a preflight of a big twin does without)."""
    loop = local_loop(copy, store, spec)
    started = loop.now()
    watch = Downtime(store) if downtime else None
    if watch is not None:
        watch.update(started)
    outcome = loop.run(
        until="completed",
        max_seconds=HORIZON,
        on_step=(lambda run: watch.update(run.now())) if watch is not None else None,
    )
    events = [e for e in loop.events() if e["at"] >= started]
    pool_of = platform_of(spec).pool_of
    nodes = {n["metadata"]["name"]: pool_of(n) for n in SimCluster(store).list("Node")}
    return {
        "seed": seed,
        "outcome": outcome.reason,
        "seconds": outcome.now - started,
        "pools": _pool_spans(events, nodes),
        "stages": _stage_spans(events),
        "waits": [e for e in events if e["reason"] in WAITS],
        "holdUps": [e for e in events if e["reason"] in HOLD_UPS][-5:],
        "failing": loop.failing() if outcome.reason != "completed" else None,
        "downtime": measured(store, outcome.now) if watch is not None else {},
    }


def _pool_spans(events: list[dict[str, Any]], pools: dict[str, str]) -> dict[str, float]:
    """How long each pool's nodes took, from the first node's start to the last's end."""
    spans: dict[str, list[float]] = defaultdict(list)
    for e in events:
        obj = e["object"]
        if obj.startswith("node/") and obj[5:] in pools:
            spans[pools[obj[5:]]].append(e["at"])
    return {p: max(at) - min(at) for p, at in sorted(spans.items()) if p}


# What each platform's events call the parts of an upgrade: the version controller's
# operators, a distributed-cloud upgrade's stages and components, a Kubernetes plan's steps.
STAGE_KINDS = {
    "clusteroperator": "control plane",
    "stage": "cluster stages",
    "component": "cluster stages",
    "step": "plan steps",
    "csv": "operators (OLM)",
}


def _stage_spans(events: list[dict[str, Any]]) -> dict[str, float]:
    """How long each part of the upgrade took, from its first event to its last."""
    spans: dict[str, list[float]] = defaultdict(list)
    for e in events:
        part = STAGE_KINDS.get(str(e["object"]).split("/", 1)[0])
        if part is not None:
            spans[part].append(e["at"])
    return {p: max(at) - min(at) for p, at in sorted(spans.items())}


def _waits(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drains that waited, per node, over the longest of the rehearsals."""
    longest: dict[str, dict[str, Any]] = {}
    for run in runs:
        first: dict[str, dict[str, Any]] = {}
        for e in run["waits"]:
            node = e["object"].removeprefix("node/")
            seen = first.setdefault(
                node, {"node": node, "from": e["at"], "to": e["at"], "message": e["message"]}
            )
            seen["to"] = e["at"]
        for node, w in first.items():
            seconds = w["to"] - w["from"]
            if seconds > longest.get(node, {}).get("seconds", 0):
                longest[node] = {"node": node, "seconds": seconds, "message": w["message"]}
    return [longest[n] for n in sorted(longest)]


def _outcomes(result: Preflight, window: float | None) -> list[Blocker]:
    found = []
    for run in result.runs:
        if run["outcome"] != "completed":
            held = "; ".join(
                f"{e['object']} {e['reason']}: {e['message']}" for e in run["holdUps"][-3:]
            )
            why = f": {run['failing']}" if run.get("failing") else ""
            found.append(
                Blocker(
                    "stalled",
                    f"the rehearsal with seed {run['seed']} did not finish ({run['outcome']} after "
                    f"{_d(run['seconds'])}){why}" + (f"; last hold-ups: {held}" if held else ""),
                    tuple(sorted({e["object"] for e in run["holdUps"]}))
                    or (f"ClusterVersion {result.version}",),
                    "fix the blockers above, then run the preflight again",
                )
            )
            break
    forecast = result.forecast()
    if window is not None and forecast["fits"] is False:
        high = forecast["seconds"]["high"]
        found.append(
            Blocker(
                "window",
                f"the upgrade may take {_d(high)}, longer than the {_d(window)} window",
                (f"ClusterVersion {result.version}",),
                "ask for a longer window, raise the pools' maxUnavailable, or update the "
                "pools in a later window (pause them now)",
            )
        )
    return found
