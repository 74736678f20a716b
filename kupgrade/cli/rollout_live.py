"""`kupgrade fleet rollout` on real clusters: the contexts of a kubeconfig (SPEC X6, X9)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from kupgrade.cli.live import backend
from kupgrade.cli.output import Format, stderr
from kupgrade.cluster.backend import Backend
from kupgrade.errors import InputError
from kupgrade.plan.rollout_doc import Rollout
from kupgrade.sim.fleet.home import FLEET_DB, INFO, fleet_root
from kupgrade.sim.fleet.live import (
    LIVE,
    OPENSHIFT,
    LiveGauges,
    LiveRollout,
    Reach,
    is_live,
    live_fleet,
    live_info,
    live_plan,
    live_report,
    reach_of,
    refused_live,
    stored_live,
)
from kupgrade.sim.fleet.rehearsal import PlanRefusedError
from kupgrade.sim.fleet.rollout import apply_request
from kupgrade.sim.fleet.rollouts import clear_taken, take_into
from kupgrade.sim.lock import ControllerLock
from kupgrade.sim.store import Store, read_meta

ContextsOpt = Annotated[
    list[str] | None,
    typer.Option("--context", help="With --kubeconfig: a context to include (default: every one)."),
]
PrometheusMapOpt = Annotated[
    list[str] | None,
    typer.Option("--prometheus", help="With --kubeconfig: CONTEXT=URL of a cluster's Prometheus."),
]
PollOpt = Annotated[
    float, typer.Option("--poll", min=0.1, help="With --kubeconfig: seconds between two looks.")
]


def urls(given: list[str] | None) -> dict[str, str]:
    """`--prometheus CONTEXT=URL` options as a mapping."""
    out = {}
    for item in given or []:
        context, sep, url = item.partition("=")
        if not sep or not context or not url.startswith(("http://", "https://")):
            raise InputError(
                f"--prometheus {item!r} is not CONTEXT=URL",
                field="--prometheus",
                hint="e.g. --prometheus prod-east=https://thanos.example.com",
            )
        out[context] = url
    return out


def live_root(fleet: str | None) -> Path | None:
    """The fleet's directory when it is a live fleet (None: a simulated one)."""
    root = fleet_root(fleet)
    return root if is_live(read_meta(root / FLEET_DB, INFO) or {}) else None


@contextmanager
def opened_live(root: Path, *, lock: bool) -> Iterator[LiveRollout]:
    """A live fleet's rollout (under the fleet's lock when `lock`)."""
    store = Store(root / FLEET_DB)
    held = ControllerLock.acquire(root) if lock else None
    try:
        info = dict(store.meta(INFO) or {})
        rollout = stored_live(store)
        if rollout is None:
            raise InputError(
                f"fleet {root.name} has no rollout",
                hint=f"start one: `kupgrade fleet rollout start ROLLOUT.yaml --kubeconfig K "
                f"--fleet {root.name}`",
            )
        reach = reach_of(info)
        yield LiveRollout(store, rollout, _apis(reach), LiveGauges(reach))
    finally:
        if held is not None:
            held.release()
        store.close()


def _apis(reach: Reach) -> dict[str, Backend]:
    return {context: backend(reach.kubeconfig, context) for context in reach.contexts}


def _target(rollout: Rollout, to: str | None) -> str:
    target = to or rollout.target_for(LIVE) or rollout.target_for(OPENSHIFT)
    if not target:
        raise InputError(
            "the rollout names no target version",
            field="--to",
            hint="pass --to VERSION or set spec.target",
        )
    return str(target)


def plan_live(rollout: Rollout, reach: Reach, name: str, to: str | None) -> dict[str, Any]:
    """Where each context's update lands on forecasts (nothing written, nothing asked)."""
    return live_plan(rollout, _apis(reach), _target(rollout, to), name)


def start_live(
    rollout: Rollout,
    file: str,
    name: str,
    reach: Reach,
    *,
    to: str | None,
    poll: float,
    output: Format,
) -> dict[str, Any]:
    """Start (or go on with) the rollout of a live fleet; its report."""
    root = live_fleet(name, live_info(reach))
    store = Store(root / FLEET_DB)
    lock = ControllerLock.acquire(root)
    try:
        live = LiveRollout(store, rollout, _apis(reach), LiveGauges(reach))
        under_way = stored_live(store)
        if under_way is not None and under_way.document != rollout.document:
            raise InputError(
                f"fleet {name} has a rollout under way from another document",
                hint=f"go on with it: `kupgrade fleet rollout resume --fleet {name}`",
            )
        if under_way is None:
            try:
                live.begin(_target(rollout, to), file, time.time())
            except PlanRefusedError as refused:
                return refused_live(rollout, name, refused)
        return run_live(live, root, poll, output)
    finally:
        lock.release()
        started = stored_live(store) is not None
        store.close()
        if not started:  # refused, or a cluster could not take part: leave nothing behind
            shutil.rmtree(root, ignore_errors=True)


def run_live(live: LiveRollout, root: Path, poll: float, output: Format) -> dict[str, Any]:
    """Passes to the end (or a wait, or a halt): requests taken, events said on stderr."""
    seen = [len(live.store.events())]

    def on_pass(run: LiveRollout) -> None:
        if take_into(run.store, run, root, time.time()):
            run.store.commit()
            clear_taken(root, run.store)
        if output.data:
            return
        events = run.store.events()
        for e in events[seen[0] :]:
            stderr.print(
                f"{e['object']}: {e['reason']} {e['message']}", highlight=False, markup=False
            )
        seen[0] = len(events)

    live.run(poll, on_pass)
    return live_report(live, root.name)


def resume_live(root: Path, by: str, poll: float, output: Format) -> dict[str, Any]:
    with opened_live(root, lock=True) as live:
        if live.conductor.halted is not None:
            live.conductor.resume(by, time.time())
            live.save()
            live.store.commit()
        return run_live(live, root, poll, output)


def status_live(root: Path) -> dict[str, Any]:
    with opened_live(root, lock=False) as live:
        return live_report(live, root.name)


def apply_live(root: Path, body: dict[str, Any]) -> str:
    """A request applied at once to a live fleet no run holds."""
    with opened_live(root, lock=True) as live:
        said = apply_request(live, body, time.time())
        live.save()
        live.store.commit()
        return said
