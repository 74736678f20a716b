"""`kupgrade rehearse sweep`: one cluster's upgrade rehearsed over every combination of
settings and seeds, each on its own copy, and the spread of what came out (durations,
downtime, drains that waited) per combination.

Users tune their pools' maxUnavailable and their budgets by rehearsing again and again;
a sweep does the again and again at once. Every run is independent (a copy, a seed, a
setting), so an engine runs them side by side (sim/fleet/engines.py: this process, or
Ray tasks); the cluster travels to them as bytes once (sim/fleet/shipping.py).

Settings are the knobs users turn on the cluster's own objects, as `oc patch` or
`kubectl patch` would:
- `pools.NAME.maxUnavailable`: the MachineConfigPool's spec.maxUnavailable (SPEC E2);
- `pools.NAME.concurrentNodes` / `pools.NAME.minimumAvailable`: the distributed-cloud
  NodePool's spec.upgradeStrategy.parallelUpgradeConfig (SPEC F);
- `budgets.NAMESPACE/NAME.maxUnavailable` / `.minAvailable`: the PodDisruptionBudget's
  spec (SPEC E3), the other of the two removed as the API allows only one.
"""

from __future__ import annotations

import itertools
import math
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from kupgrade.errors import InputError
from kupgrade.sim.fleet.engines import Engine
from kupgrade.sim.fleet.shipping import Shipped, pack, unpack
from kupgrade.sim.platform import UpgradeAsk
from kupgrade.sim.profile import Profile
from kupgrade.sim.store import Store
from kupgrade.twin.preflight import WAITS, request_on_copy, run_copy

MAX_RUNS = 10_000
QUANTITY = re.compile(r"(0|[1-9][0-9]{0,8})%?")


@dataclass(frozen=True)
class Knob:
    """Where a setting lands: a kind, a name, and a path in its spec."""

    kind: str
    name: str
    namespace: str
    path: tuple[str, ...]
    drops: tuple[str, ...] = ()  # spec fields that cannot stand beside it


POOL_KNOBS = {
    "maxUnavailable": ("MachineConfigPool", ("maxUnavailable",)),
    "concurrentNodes": (
        "NodePool",
        ("upgradeStrategy", "parallelUpgradeConfig", "concurrentNodes"),
    ),
    "minimumAvailable": (
        "NodePool",
        ("upgradeStrategy", "parallelUpgradeConfig", "minimumAvailable"),
    ),
}
BUDGET_KNOBS = {"maxUnavailable": "minAvailable", "minAvailable": "maxUnavailable"}


def knob(key: str) -> Knob:
    """The object and field a `--set` key names."""
    parts = key.split(".")
    if len(parts) == 3 and parts[0] == "pools" and parts[2] in POOL_KNOBS and parts[1]:
        kind, path = POOL_KNOBS[parts[2]]
        return Knob(kind, parts[1], "", path)
    if len(parts) == 3 and parts[0] == "budgets" and parts[2] in BUDGET_KNOBS:
        namespace, slash, name = parts[1].partition("/")
        if slash and namespace and name:
            return Knob(
                "PodDisruptionBudget", name, namespace, (parts[2],), (BUDGET_KNOBS[parts[2]],)
            )
    raise InputError(
        f"--set {key!r} names no setting",
        field="--set",
        hint="pools.POOL.maxUnavailable (OpenShift), pools.POOL.concurrentNodes or "
        "pools.POOL.minimumAvailable (distributed cloud), or "
        "budgets.NAMESPACE/NAME.maxUnavailable|minAvailable",
    )


def quantity(text: str, key: str) -> int | str:
    """An integer or a percentage, as the API takes an IntOrString."""
    value = text.strip()
    if not QUANTITY.fullmatch(value) or (value.endswith("%") and int(value[:-1]) > 100):
        raise InputError(
            f"--set {key}: {text!r} is not a count or a percentage",
            field="--set",
            hint="e.g. 1, 2 or 10%",
        )
    return value if value.endswith("%") else int(value)


def parse_set(text: str) -> tuple[str, list[int | str]]:
    """`KEY=V1,V2,...` as the key (checked) and its values in the order given."""
    key, eq, values = text.partition("=")
    key = key.strip()
    if not eq or not values.strip():
        raise InputError(
            f"--set {text!r} is not KEY=VALUE[,VALUE...]",
            field="--set",
            hint="e.g. --set pools.worker.maxUnavailable=1,2,10%",
        )
    knob(key)
    found = [quantity(v, key) for v in values.split(",")]
    return key, list(dict.fromkeys(found))


def parse_seeds(text: str) -> list[int]:
    """`1-20`, `3,5,8` or a mix, in order, each once."""
    seeds: list[int] = []
    for piece in text.split(","):
        low, dash, high = piece.strip().partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise InputError(
                f"--seeds {text!r} is not a list of seeds",
                field="--seeds",
                hint="e.g. 1-20 or 1,2,3",
            )
        first, last = int(low), int(high) if dash else int(low)
        if last < first or last - first >= MAX_RUNS:
            raise InputError(
                f"--seeds {piece.strip()!r} is not a range from low to high",
                field="--seeds",
                hint=f"e.g. 1-20 (at most {MAX_RUNS} seeds)",
            )
        seeds += range(first, last + 1)
    return list(dict.fromkeys(seeds))


def _found(store: Store, where: Knob, cluster: str) -> dict[str, Any] | None:
    """The object a knob names. A pool is named without its namespace: a distributed-cloud
    NodePool lives in `cluster-NAME`, and an admin cluster's store holds its users' pools
    too, so the cluster's own namespace wins when the name is found in several."""
    if where.namespace or where.kind == "MachineConfigPool":
        return store.get(where.kind, where.name, where.namespace)
    named = [o for o in store.list(where.kind) if o["metadata"]["name"] == where.name]
    own = [o for o in named if o["metadata"].get("namespace") == f"cluster-{cluster}"]
    found = own or named
    return found[0] if found else None


def apply(store: Store, key: str, value: int | str, cluster: str = "") -> None:
    """Set `key` to `value` on the copy's object (refused if the cluster lacks it)."""
    where = knob(key)
    obj = _found(store, where, cluster)
    if obj is None:
        named = f"{where.namespace}/{where.name}" if where.namespace else where.name
        raise InputError(
            f"the cluster has no {where.kind} {named} for --set {key}",
            field="--set",
            hint=f"list them with `kupgrade get {where.kind.lower()}s -A`",
        )
    spec = obj.setdefault("spec", {})
    for drop in where.drops:
        spec.pop(drop, None)
    for step in where.path[:-1]:
        spec = spec.setdefault(step, {})
    spec[where.path[-1]] = value
    store.put(obj)


@dataclass(frozen=True)
class Combo:
    """One run: its settings and its seed."""

    settings: tuple[tuple[str, int | str], ...]
    seed: int


def combos(sets: list[tuple[str, list[int | str]]], seeds: list[int]) -> list[Combo]:
    keys = [k for k, _ in sets]
    if len(set(keys)) != len(keys):
        raise InputError("--set names a setting twice", field="--set", hint="give each key once")
    grid = list(itertools.product(*(v for _, v in sets)))
    if len(grid) * len(seeds) > MAX_RUNS:
        raise InputError(
            f"{len(grid)} settings × {len(seeds)} seeds is more than {MAX_RUNS} runs",
            field="--seeds",
            hint="sweep fewer values or seeds at a time",
        )
    return [Combo(tuple(zip(keys, values, strict=True)), s) for values in grid for s in seeds]


def run_combo(cluster: Shipped, job: tuple[UpgradeAsk, Combo]) -> dict[str, Any]:
    """One run on its own copy (a Ray task runs this): its outcome and figures."""
    ask, combo = job
    with tempfile.TemporaryDirectory(prefix="kupgrade-sweep-") as tmp:
        copy = unpack(cluster, Path(tmp) / cluster.name)
        store = Store(copy / "cluster.db")
        try:
            profile = msgspec.convert(store.meta("profile"), Profile)
            version = profile.spec.version
            profile.spec.seed = combo.seed
            store.set_meta("profile", msgspec.to_builtins(profile))
            store.set_meta("seed", combo.seed)
            for key, value in combo.settings:
                apply(store, key, value, cluster.name)
            blockers, accepted = request_on_copy(copy, store, profile.spec, ask, version)
            row: dict[str, Any] = {"settings": dict(combo.settings), "seed": combo.seed}
            if not accepted:
                return {**row, "outcome": "refused", "why": blockers[0].message}
            store.commit()
            run = run_copy(copy, store, profile.spec, combo.seed, downtime=True)
        finally:
            store.close()
    waited = {e["object"] for e in run["waits"] if e["reason"] in WAITS}
    return {
        **row,
        "outcome": run["outcome"],
        "seconds": round(float(run["seconds"]), 3),
        "downSeconds": round(sum(w["down"] for w in run["downtime"].values()), 3),
        "shortSeconds": round(sum(w["short"] for w in run["downtime"].values()), 3),
        "drainsWaited": len(waited),
    }


@dataclass
class Sweep:
    cluster: str
    version: str
    target: str
    runs: list[dict[str, Any]] = field(default_factory=list)

    def groups(self) -> list[dict[str, Any]]:
        """Per combination of settings, in the order swept: the spread of its runs."""
        by: dict[str, list[dict[str, Any]]] = {}
        for run in self.runs:
            by.setdefault(_label(run["settings"]), []).append(run)
        return [_spread(label, runs) for label, runs in by.items()]

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "version": self.version,
            "target": self.target,
            "settings": self.groups(),
            "runs": self.runs,
        }


def _label(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items()) or "as the cluster is"


def nearest_rank(values: list[float], q: float) -> float:
    """The q-quantile by the nearest-rank method (the value a share q of runs stays at
    or under), so that p90 of 20 runs is a run's own figure."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _spread(label: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    done = [r for r in runs if r["outcome"] == "completed"]
    out: dict[str, Any] = {
        "settings": dict(runs[0]["settings"]),
        "label": label,
        "runs": len(runs),
        "completed": len(done),
        "stalled": sum(1 for r in runs if r["outcome"] not in ("completed", "refused")),
        "refused": sum(1 for r in runs if r["outcome"] == "refused"),
    }
    for name, key in (("duration", "seconds"), ("down", "downSeconds"), ("short", "shortSeconds")):
        values = [float(r[key]) for r in runs if key in r]
        out[name] = (
            {
                "min": min(values),
                "p50": nearest_rank(values, 0.5),
                "p90": nearest_rank(values, 0.9),
                "max": max(values),
            }
            if values
            else None
        )
    drains = [int(r["drainsWaited"]) for r in runs if "drainsWaited" in r]
    out["drainsWaited"] = (
        {"max": max(drains), "runs": sum(1 for d in drains if d)} if drains else None
    )
    return out


def sweep(
    root: Path,
    version: str,
    ask: UpgradeAsk,
    runs: list[Combo],
    engine: Engine,
    *,
    done: Callable[[int, int], None] | None = None,
) -> Sweep:
    """Every run of `runs` on its own copy of the cluster at `root`, on `engine`."""
    cluster = pack(root.name, root)
    for key, value in runs[0].settings if runs else ():
        _check_on(cluster, key, value)
    rows = engine.map(run_combo, [(ask, c) for c in runs], done, shared=cluster)
    return Sweep(root.name, version, ask.to or "", rows)


def _check_on(cluster: Shipped, key: str, value: int | str) -> None:
    """A setting the cluster cannot take is refused before any run starts."""
    with tempfile.TemporaryDirectory(prefix="kupgrade-sweep-") as tmp:
        copy = unpack(cluster, Path(tmp) / cluster.name)
        store = Store(copy / "cluster.db")
        try:
            apply(store, key, value, cluster.name)
        finally:
            store.close()


def strip(group: dict[str, Any], low: float, high: float, width: int = 40) -> str:
    """The spread of one combination's durations on a scale shared by all: `-` from the
    shortest run to the longest, `=` from p50 to p90, `|` at p50."""
    d = group["duration"]
    if d is None:
        return ""
    span = max(high - low, 1e-9)

    def col(v: float) -> int:
        return min(width - 1, max(0, round((float(v) - low) / span * (width - 1))))

    cells = [" "] * width
    for i in range(col(d["min"]), col(d["max"]) + 1):
        cells[i] = "-"
    for i in range(col(d["p50"]), col(d["p90"]) + 1):
        cells[i] = "="
    cells[col(d["p50"])] = "|"
    return "".join(cells).rstrip()
