"""`kupgrade rehearse`: rehearsals of one cluster over many settings and seeds."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from kupgrade.cli.output import (
    AddressOpt,
    ClusterOpt,
    EngineOpt,
    Format,
    OutputOpt,
    command_group,
    print_json,
    stderr,
    stdout,
    user_errors,
)
from kupgrade.errors import InputError
from kupgrade.sim.fleet.engines import engine_named
from kupgrade.sim.homes import spec_at
from kupgrade.sim.platform import UpgradeAsk
from kupgrade.twin.sweep import Sweep, combos, parse_seeds, parse_set, strip, sweep
from kupgrade.versions.goduration import go_duration

app = command_group("Rehearse one cluster's upgrade over many settings and seeds.")


@app.command("sweep")
@user_errors
def sweep_command(
    cluster: ClusterOpt = None,
    to: Annotated[str, typer.Option("--to", help="Version to upgrade to.")] = "",
    sets: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="KEY=V1,V2,... to sweep (repeatable; every combination runs): "
            "pools.POOL.maxUnavailable, pools.POOL.concurrentNodes, "
            "pools.POOL.minimumAvailable, budgets.NS/NAME.maxUnavailable|minAvailable.",
        ),
    ] = None,
    seeds: Annotated[
        str, typer.Option("--seeds", help="Seeds of each combination: 1-20, or 1,5,9.")
    ] = "1-5",
    available: Annotated[
        str | None,
        typer.Option(
            "--available", help="Kubernetes: releases a plan may land on, comma-separated."
        ),
    ] = None,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Rehearse the upgrade once per combination of --set values and seed, each on its own
    copy of the cluster, and show the spread: p50, p90 and longest duration, seconds
    workloads were down or short of replicas, and drains that waited.

    The cluster itself is never changed. Runs are independent: with --engine ray they run
    as Ray tasks, on this machine's cores or on the Ray cluster at --address. Exit 1 when
    a run does not complete or is refused.

    **Examples**

    ```
    kupgrade rehearse sweep --cluster demo --to 4.14.27 \\
        --set pools.worker.maxUnavailable=1,50% --seeds 1-2
    kupgrade rehearse sweep --cluster demo --to 4.14.27 --seeds 1-2 --engine ray -o json
    ```
    """
    if not to:
        raise InputError("no target version", field="--to", hint="pass --to VERSION")
    chosen = engine_named(engine, address)
    runs = combos([parse_set(s) for s in sets or []], parse_seeds(seeds))
    root, spec = spec_at(cluster)
    offered = tuple(v.strip() for v in (available or "").split(",") if v.strip())
    ask = UpgradeAsk(to=to, available=offered)

    def done(n: int, total: int) -> None:
        if not output.data:
            stderr.print(f"run {n} of {total} done ({chosen.name})", highlight=False)

    result = sweep(root, spec.version, ask, runs, chosen, done=done)
    if output.data:
        print_json(result.to_json())
    else:
        _print(result)
    if any(r["outcome"] != "completed" for r in result.runs):
        raise typer.Exit(1)


def _d(value: float | None) -> str:
    return "-" if value is None else go_duration(round(value))


def _print(result: Sweep) -> None:
    groups = result.groups()
    stdout.print(
        f"Sweep of {result.cluster}: {result.version} -> {result.target}, {len(result.runs)} runs",
        highlight=False,
    )
    durations = [g["duration"] for g in groups if g["duration"]]
    low = min((d["min"] for d in durations), default=0.0)
    high = max((d["max"] for d in durations), default=0.0)
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("settings", "runs", "done", "p50", "p90", "max", "down max", "short max"):
        table.add_column(column.upper())  # p50/p90/max: the names of -o json
    table.add_column("DRAINS WAITED")
    table.add_column(f"SPREAD {_d(low)} .. {_d(high)}", no_wrap=True)
    for g in groups:
        table.add_row(*_row(g), strip(g, low, high))
    stdout.print(table, highlight=False)
    stdout.print("spread: - shortest to longest run, = p50 to p90, | p50", highlight=False)


def _row(g: dict[str, Any]) -> list[str]:
    d, down, short, drains = g["duration"], g["down"], g["short"], g["drainsWaited"]
    return [
        g["label"],
        str(g["runs"]),
        str(g["completed"]),
        _d(d["p50"] if d else None),
        _d(d["p90"] if d else None),
        _d(d["max"] if d else None),
        _d(down["max"] if down else None),
        _d(short["max"] if short else None),
        f"{drains['max']} nodes in {drains['runs']} runs" if drains else "-",
    ]
