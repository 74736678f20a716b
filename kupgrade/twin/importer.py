"""`kupgrade cluster import`: a user's cluster, read from a live API (read-only) or a dump,
made a simulated cluster (a twin) whose rehearsals forecast the real one (SPEC X7).

The twin's clock starts at the capture's time: the newest timestamp the objects carry
(as oc's mock mode reads a capture), or the live cluster's clock. What the import had to
say (parts missing, input skipped, kinds not modelled), the calibration and the APIs the
dump's own objects use are kept in the twin's store, so that `cluster calibration` and a
preflight read them later without the dump.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kupgrade.cluster.apikinds import KINDS
from kupgrade.collector import paused
from kupgrade.errors import InputError, KupgradeError
from kupgrade.sim.create import create_cluster, refuse_existing
from kupgrade.sim.homes import IMPORT_META
from kupgrade.skew.removed_apis import TABLE, uses_in_objects
from kupgrade.twin.anonymize import anonymized
from kupgrade.twin.calibration import Calibration, calibrate, calibrated
from kupgrade.twin.dump import Dump, Obj, read_dumps
from kupgrade.twin.mapping import ADMIN_CONFIG_MAPS, READ_KINDS, Twin, twin_of
from kupgrade.versions.times import parse_time, rfc3339

# What a live import lists, kind by kind (GET only; a kind the server lacks is skipped):
# what a twin reads, but the ConfigMaps, of which it gets only the two it reads.
LIVE_KINDS = tuple(sorted(READ_KINDS - {"ConfigMap"}))


@dataclass(frozen=True)
class Source:
    """Where the cluster is read from: dump paths, or a kubeconfig (and its context)."""

    paths: tuple[Path, ...] = ()
    kubeconfig: Path | None = None
    context: str | None = None

    def describe(self) -> str:
        if self.paths:
            return ", ".join(str(p) for p in self.paths)
        return f"the cluster of {self.kubeconfig or 'the default kubeconfig'}" + (
            f" (context {self.context})" if self.context else ""
        )


@dataclass
class Imported:
    """A twin made: its profile, what the import said, its calibration."""

    name: str
    twin: Twin
    calibration: Calibration
    api_uses: list[dict[str, Any]]
    source: str

    def record(self) -> dict[str, Any]:
        """What the twin's store keeps of its import (`cluster calibration`, preflights)."""
        return {
            "source": self.source,
            "notes": self.twin.notes,
            "notModelled": self.twin.unmodelled,
            "calibration": self.calibration.to_json(),
            "apiUses": self.api_uses,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            **self.twin.to_json(),
            "calibration": self.calibration.to_json(),
            "apiUses": self.api_uses,
        }


def read_source(source: Source) -> tuple[Dump, float]:
    """The objects of the source and the time they were captured at."""
    if source.paths:
        dump = read_dumps(source.paths)
        return dump, captured_at(dump.objects.values())
    return read_live(source.kubeconfig, source.context)


def read_live(kubeconfig: Path | None, context: str | None) -> tuple[Dump, float]:
    """Every object a twin reads, listed from a live API server: GET requests only, no
    watch, nothing written. A kind the server does not serve is left out, one the user
    may not list is said."""
    # Imported here: lightkube's client costs 0.2 s that importing from files does not need.
    from kupgrade.cluster.kube import KubeBackend  # noqa: PLC0415

    api = KubeBackend(kubeconfig, context)
    dump = Dump()
    for kind in LIVE_KINDS:
        try:
            found = api.list(kind)
        except KupgradeError as exc:
            dump.problems.append(f"{kind}: {exc.message}")
            continue
        group, version = KINDS[kind][0], KINDS[kind][1]
        for obj in found:
            obj.setdefault("kind", kind)
            obj.setdefault("apiVersion", f"{group}/{version}" if group else version)
            dump.add(obj)
    for namespace, name in sorted(ADMIN_CONFIG_MAPS):
        try:
            found_map = api.get("ConfigMap", name, namespace)
        except KupgradeError:
            found_map = None
        if found_map is not None:
            found_map.setdefault("kind", "ConfigMap")
            dump.add(found_map)
    if not dump.objects:
        raise InputError(
            f"{api.where} lists no objects a twin reads"
            + (f" ({dump.problems[0]})" if dump.problems else ""),
            field="--kubeconfig",
            hint="check that the kubeconfig's user may list nodes and pods",
        )
    return dump, api.now()


def captured_at(objects: Iterable[Obj]) -> float:
    """The newest time a capture holds: its conditions' transitions, its events, its
    ClusterVersion history and its objects' creation (0 when none)."""
    newest = 0.0
    for obj in objects:
        stamps = [_meta_time(obj)]
        raw = obj.get("status")
        status: dict[str, Any] = raw if isinstance(raw, dict) else {}
        for c in status.get("conditions") or []:
            if isinstance(c, dict):
                stamps.append(parse_time(c.get("lastTransitionTime")))
        for h in status.get("history") or []:
            if isinstance(h, dict):
                stamps += [parse_time(h.get("startedTime")), parse_time(h.get("completionTime"))]
        if obj.get("kind") == "Event":
            stamps += [parse_time(obj.get(k)) for k in ("lastTimestamp", "eventTime")]
        newest = max(newest, *stamps)
    return newest


def _meta_time(obj: Obj) -> float:
    meta = obj.get("metadata")
    return parse_time(meta.get("creationTimestamp")) if isinstance(meta, dict) else 0.0


def import_twin(
    home: Path,
    name: str,
    source: Source,
    *,
    seed: int = 1,
    anonymize: bool = False,
    upstream: str | None = None,
) -> Imported:
    """Read the source, map it, calibrate it and create the twin `name` (SPEC X7)."""
    with paused():  # a dump is millions of acyclic dicts (kupgrade/collector.py)
        return _import(home, name, source, seed=seed, anonymize=anonymize, upstream=upstream)


def _import(
    home: Path, name: str, source: Source, *, seed: int, anonymize: bool, upstream: str | None
) -> Imported:
    refuse_existing(home, name)  # before the dump is read, not after
    dump, now = read_source(source)
    objects = list(dump.objects.values())
    kinds = {kind for kind, _, _ in dump.objects}
    if not kinds & READ_KINDS:
        raise InputError(
            f"holds {len(objects):,} objects, none of a kind a twin is made from "
            f"(it has {', '.join(sorted(kinds)[:5])}{', ...' if len(kinds) > 5 else ''})",
            file=source.describe(),
            hint="a twin reads Nodes, Pods, workloads, budgets and the ClusterVersion",
        )
    undated = now <= 0  # a directory of manifests carries no times of its own
    if undated:
        now = time.time()
    twin = twin_of(dump.objects, name=name, start=rfc3339(now), seed=seed)
    twin.notes[:0] = dump.notes()
    if undated:
        twin.notes.append("the dump holds no timestamps: the twin's clock starts now")
    calibration = calibrate(objects, twin.profile.spec)
    twin.profile.spec = calibrated(twin.profile.spec, calibration)
    if upstream is not None:
        twin.profile.spec.upstream = upstream
    if anonymize:
        twin.profile = anonymized(twin.profile)
    # Only uses of an API some Kubernetes minor removes are worth keeping (SPEC X8): the
    # objects are sorted out by their apiVersion first (a 100,000-pod dump has none).
    removable = {r.api_version for r in TABLE}
    old = [o for o in objects if o.get("apiVersion") in removable]
    uses = [asdict(u) for u in uses_in_objects(old)]
    imported = Imported(name, twin, calibration, uses, source.describe())
    create_cluster(home, name, twin.profile, {IMPORT_META: imported.record()})
    return imported
