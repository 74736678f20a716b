"""`kupgrade fleet`: a fleet file made into simulated clusters on one virtual clock, and
its plan rehearsed on them with every rule checked at every state (SPEC X5)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kupgrade.cli.live import ConsoleOpt, ConsolePortOpt
from kupgrade.cli.output import (
    AddressOpt,
    EngineOpt,
    Format,
    OutputOpt,
    command_group,
    print_json,
    stderr,
    stdout,
    user_errors,
)
from kupgrade.cli.rollout import app as rollout_app
from kupgrade.errors import InputError
from kupgrade.sim.fleet.distributed import rehearse_in_parts
from kupgrade.sim.fleet.doc import read_fleet
from kupgrade.sim.fleet.engines import Engine, engine_named
from kupgrade.sim.fleet.home import create_fleet, delete_fleet, fleet_names, locked, opened_fleet
from kupgrade.sim.fleet.rehearsal import PlanRefusedError, Rehearsal, Settings
from kupgrade.sim.fleet.report import fleet_report, fleet_view
from kupgrade.sim.fleet.rollout import ROLLOUT
from kupgrade.sim.homes import home
from kupgrade.skew.inventory import read_yaml
from kupgrade.views.live_server import published

app = command_group("Fleets of simulated clusters: create, rehearse a plan, roll out, status.")
app.add_typer(rollout_app, name="rollout")

FleetOpt = Annotated[
    str | None, typer.Option("--fleet", help="Fleet name (the only one if omitted).")
]


@app.command("create")
@user_errors
def create_command(
    file: Annotated[Path, typer.Argument(help="Fleet file (the format `kupgrade plan` reads).")],
    name: Annotated[
        str | None, typer.Option("--name", help="Fleet name (default: the file's name).")
    ] = None,
    output: OutputOpt = Format.text,
) -> None:
    """Create every cluster of a fleet file as a simulated cluster, on one clock.

    Distributed-cloud fleets (admin, hybrid, user and standalone clusters with node pools
    and a release history) and Kubernetes fleets (`platform: kubernetes`, clusters as
    `{cp, pools}` or skew inventories) are read as `kupgrade plan` reads them; `target`,
    `available` and `policy` become the rehearsal's defaults. An optional `simulation:`
    section sets `start`, `seed`, `controlPlanes`, `nodesPerPool` and a cluster `profile`
    (workloads, node timings, faults, scripted changes), for every cluster or under
    `clusters: {NAME: ...}` for one. Each member is an ordinary simulated cluster.

    **Examples**

    ```
    kupgrade fleet create lab-fleet.yaml
    kupgrade get nodes --cluster lab-user-1
    ```
    """
    fleet = read_fleet(read_yaml(file, "fleet file"), str(file))
    fleet_name = name or file.stem
    root = create_fleet(fleet_name, fleet)
    info = {
        "fleet": fleet_name,
        "path": str(root),
        "platform": fleet.platform,
        "clusters": [m.name for m in fleet.members],
    }
    if output.data:
        print_json(info)
        return
    stdout.print(
        f"created fleet {fleet_name} ({fleet.platform}): {len(fleet.members)} clusters "
        f"({', '.join(info['clusters'][:8])}{', ...' if len(fleet.members) > 8 else ''})",
        highlight=False,
        markup=False,
    )


@app.command("list")
@user_errors
def list_command(output: OutputOpt = Format.text) -> None:
    """List the fleets.

    **Examples**

    ```
    kupgrade fleet list
    kupgrade fleet list -o json
    ```
    """
    rows = []
    for name in fleet_names():
        with opened_fleet(name, simulated=False) as (_, store, info, _members):
            # a live fleet (contexts of a kubeconfig) keeps only its rollout
            state = store.meta("rehearsal") or store.meta("live") or {}
            rows.append(
                {
                    "name": name,
                    "platform": info.get("platform"),
                    "clusters": len(info.get("members") or info.get("contexts") or []),
                    "rehearsal": state.get("status", "not started"),
                    "target": state.get("target"),
                }
            )
    if output.data:
        print_json(rows)
        return
    table = Table("NAME", "PLATFORM", "CLUSTERS", "REHEARSAL", "TARGET", box=None)
    for r in rows:
        table.add_row(
            r["name"], r["platform"], str(r["clusters"]), r["rehearsal"], r["target"] or ""
        )
    stdout.print(table)


@app.command("delete")
@user_errors
def delete_command(
    name: Annotated[str, typer.Argument(help="Fleet to delete, with its clusters.")],
    output: OutputOpt = Format.text,
) -> None:
    """Delete a fleet and every cluster it created.

    **Examples**

    ```
    kupgrade fleet delete lab-fleet
    ```
    """
    members = delete_fleet(name)
    if output.data:
        print_json({"deleted": name, "clusters": members})
    else:
        stdout.print(f"deleted fleet {name} and its {len(members)} clusters", highlight=False)


def _settings(
    rehearsal: Rehearsal,
    to: str | None,
    available: str | None,
    policy: str | None,
    max_parallel: int,
) -> Settings:
    info = rehearsal.info
    target = to or info.get("target")
    if not target:
        raise InputError(
            "no target version",
            field="--to",
            hint="pass --to VERSION (or put `target:` in the fleet file)",
        )
    offered = [v.strip() for v in available.split(",") if v.strip()] if available else None
    chosen = rehearsal.part.policy(policy or info.get("policy"))
    return Settings(
        str(target),
        offered if offered is not None else list(info.get("available") or []),
        chosen,
        max_parallel,
    )


def _plan_steps(path: Path) -> list[dict[str, Any]]:
    """A plan as `kupgrade plan -o json` writes it (steps: id, object, from, to, after)."""
    data = read_yaml(path, "plan")
    steps = data.get("steps") if isinstance(data, dict) else None
    if not isinstance(steps, list) or not all(
        isinstance(s, dict) and {"id", "object", "from", "to"} <= s.keys() for s in steps
    ):
        raise InputError(
            "a plan has `steps`, each with id, object, from, to and after",
            file=str(path),
            hint="write one with `kupgrade plan FLEET.yaml -o json`",
        )
    ids = {str(s["id"]) for s in steps}
    out = []
    for s in steps:
        after = [str(a) for a in s.get("after") or []]
        missing = [a for a in after if a not in ids]
        if missing:
            raise InputError(
                f"step {s['id']} comes after {missing[0]!r}, which the plan does not have",
                file=str(path),
                field=f"steps[{s['id']}].after",
            )
        out.append(
            {
                "id": str(s["id"]),
                "object": str(s["object"]),
                "from": str(s["from"]),
                "to": str(s["to"]),
                "after": after,
                "leave_pools": [str(p) for p in s.get("leave_pools") or []],
            }
        )
    return out


@app.command("rehearse")
@user_errors
def rehearse_command(
    fleet: FleetOpt = None,
    to: Annotated[
        str | None, typer.Option("--to", help="Target version (default: the fleet file's).")
    ] = None,
    available: Annotated[
        str | None, typer.Option("--available", help="Releases steps may land on, comma-separated.")
    ] = None,
    policy: Annotated[
        str | None,
        typer.Option("--policy", help="kubernetes: k8s-n2, k8s-n3 or auto; gdc fleets: gdc."),
    ] = None,
    max_parallel: Annotated[
        int,
        typer.Option(
            "--max-parallel", min=0, help="Steps running at once (0: as many as the plan allows)."
        ),
    ] = 0,
    plan_file: Annotated[
        Path | None,
        typer.Option(
            "--plan", help="Rehearse this plan (`kupgrade plan -o json`) instead of planning."
        ),
    ] = None,
    speed: Annotated[
        float,
        typer.Option(
            "--speed", min=0, help="Simulated seconds per wall second (0: as fast as possible)."
        ),
    ] = 0.0,
    console: ConsoleOpt = False,
    console_port: ConsolePortOpt = 0,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Carry the fleet's plan out on its simulated clusters, checking every rule at every state.

    The planner plans from where the clusters are (or --plan gives a plan, as `kupgrade
    plan -o json` writes one); each step starts when its `after` steps are done and its
    cluster is free, up to --max-parallel at once, carried out by its cluster's upgrade
    controller. A broken rule, a refused step or a failed upgrade stops the rehearsal
    (exit 1) and names the state, the rule and the objects. Safe to kill at any moment:
    the same command again goes on from where it was; once done, it shows the report.

    **Examples**

    ```
    kupgrade fleet rehearse --fleet lab-fleet --to 1.29.100-gke.251 --max-parallel 2
    kupgrade fleet rehearse --fleet lab-fleet -o json
    kupgrade fleet rehearse --fleet lab-fleet --speed 600 --console --console-port 8089
    kupgrade fleet rehearse --fleet lab-fleet --engine ray -o json
    ```

    With --console, a web page on loopback shows the fleet as the rehearsal goes: its
    clusters by role and version, and the plan's steps with the ones running.

    With --engine ray the fleet is cut into parts that no rule, plan step or shared limit
    ties (each management group of a distributed-cloud fleet, each Kubernetes cluster),
    and each part is rehearsed in a Ray task on its own clock, on this machine or on the
    Ray cluster at --address; the report is the one a single process gives. A part that
    stops makes the fleet rehearse again in one process, which decides where it stops.
    """
    ray = engine_named(engine, address)
    if ray.name != "local" and (speed or console):
        raise InputError(
            "--speed and --console follow one clock: they go with --engine local",
            field="--engine",
            hint="leave --engine out to watch the rehearsal, or drop --speed/--console",
        )
    wall = time.monotonic()
    report = None
    with opened_fleet(fleet) as (root, store, info, members), locked(root, list(members)):
        rehearsal = Rehearsal(store, members, info)
        state = rehearsal.state
        if (
            state is not None
            and state["status"] in ("running", "waiting", "halted")
            and (store.meta(ROLLOUT))
        ):
            raise InputError(
                f"a rollout of fleet {root.name} is under way",
                hint=f"go on with it: `kupgrade fleet rollout resume --fleet {root.name}`",
            )
        if state is not None and state["status"] == "running":
            _same_settings(state, to, available, policy, max_parallel, plan_file)
            rehearsal.resume()
        elif (
            state is not None
            and state["status"] == "completed"
            and to in (None, state["target"])
            and plan_file is None
        ):
            pass  # done already: its report again, as a rerun script expects
        elif state is not None and state["status"] == "stopped":
            raise InputError(
                f"the last rehearsal stopped ({state['stop']['kind']}): "
                f"{state['stop'].get('why', '')}",
                hint=f"see `kupgrade fleet status --fleet {root.name}`; delete the fleet "
                "and create it again to start over",
            )
        else:
            settings = _settings(rehearsal, to, available, policy, max_parallel)
            try:
                rehearsal.begin(settings, _plan_steps(plan_file) if plan_file else None)
            except PlanRefusedError as refused:
                if output.data:
                    print_json({"refused": refused.plan.to_json()})
                raise
        if not _in_parts(rehearsal, root, ray, output):
            with published(
                console_port if console else None,
                lambda: fleet_view(rehearsal, root.name),
                lambda url: stderr.print(f"console of fleet {root.name}: {url}", highlight=False),
                lambda: (
                    f"the rehearsal is {rehearsal.state_status() or 'over'}; "
                    "this is the state it left"
                ),
            ) as watch:
                progress = _progress(rehearsal, output)
                rehearsal.run(both(progress, watch), speed)
            report = fleet_report(rehearsal, root.name, time.monotonic() - wall)
    if report is None:  # put in place by the parts: read as the stores now hold it
        with opened_fleet(fleet) as (root, store, info, members):
            report = fleet_report(
                Rehearsal(store, members, info), root.name, time.monotonic() - wall
            )
    _print(report, output)
    if report["outcome"] != "completed":
        raise typer.Exit(1)


def _in_parts(rehearsal: Rehearsal, root: Path, engine: Engine, output: Format) -> bool:
    """The running rehearsal carried out part by part on a distributed engine (True), or
    left to this process (False: the local engine, or a part that stopped)."""
    if engine.name == "local" or rehearsal.state_status() != "running":
        return False

    def said(line: str) -> None:
        if not output.data:
            stderr.print(line, highlight=False)

    return rehearse_in_parts(rehearsal, root, home() / "clusters", engine, said)


def _same_settings(
    state: dict[str, Any],
    to: str | None,
    available: str | None,
    policy: str | None,
    max_parallel: int,
    plan_file: Path | None,
) -> None:
    """A rehearsal under way goes on as it began: options that say otherwise are refused
    (the same ones, as a script that reruns its command passes them, are fine)."""
    offered = [v.strip() for v in available.split(",") if v.strip()] if available else None
    given = {
        "--to": (to, state["target"]),
        "--available": (offered, state["available"]),
        "--policy": (policy, state["policy"]),
        "--max-parallel": (max_parallel or None, state["maxParallel"] or None),
    }
    for flag, (asked, stored) in given.items():
        if asked is not None and asked != stored:
            raise InputError(
                f"a rehearsal of this fleet is under way with {flag} {stored}",
                field=flag,
                hint="run `kupgrade fleet rehearse` without it to go on with that rehearsal",
            )
    if plan_file is not None:
        raise InputError(
            "a rehearsal of this fleet is under way with its own plan",
            field="--plan",
            hint="run `kupgrade fleet rehearse` without --plan to go on with it",
        )


def both(*calls: Any) -> Any:
    """One step callback that calls each given one (None: none)."""
    given = [c for c in calls if c is not None]
    return (lambda r: [c(r) for c in given]) if given else None


def _progress(rehearsal: Rehearsal, output: Format) -> Any:
    """One line on stderr each time a step ends (long work shows progress)."""
    if output.data:
        return None
    seen = {"done": sum(1 for r in rehearsal.steps.values() if "finishedAt" in r)}
    total = len(rehearsal.steps)

    def show(r: Rehearsal) -> None:
        done = sum(1 for rec in r.steps.values() if "finishedAt" in rec)
        if done != seen["done"]:
            seen["done"] = done
            stderr.print(f"{done}/{total} steps done", highlight=False)

    return show


@app.command("status")
@user_errors
def status_command(fleet: FleetOpt = None, output: OutputOpt = Format.text) -> None:
    """The rehearsal as far as it got: steps, clusters, downtime, critical path.

    **Examples**

    ```
    kupgrade fleet status --fleet lab-fleet
    kupgrade fleet status --fleet lab-fleet -o json
    ```
    """
    with opened_fleet(fleet) as (root, store, info, members):
        report = fleet_report(Rehearsal(store, members, info), root.name)
    _print(report, output)


def _minutes(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds / 60:.1f}m"


def _print(report: dict[str, Any], output: Format) -> None:
    if output.data:
        print_json(report)
        return
    steps = Table(
        "STEP", "OBJECT", "FROM", "TO", "STATE", "READY", "START", "END", "WAITED FOR", box=None
    )
    for s in report["steps"]:
        waited = s["freedBy"] or s["waitedFor"] or ""
        if s["state"] == "waiting" and s["heldBy"]:
            waited = s["heldBy"]
        steps.add_row(
            s["id"],
            s["object"],
            s["from"],
            s["to"],
            s["state"],
            _minutes(s["readyAt"]),
            _minutes(s["startedAt"]),
            _minutes(s["finishedAt"]),
            waited,
        )
    stdout.print(steps)
    clusters = Table("CLUSTER", "START", "FINISH", "DOWN", "SHORT", "VERSIONS", box=None)
    for c in report["clusters"]:
        down = sum(w["down"] for w in c["downtime"].values())
        short = sum(w["short"] for w in c["downtime"].values())
        clusters.add_row(
            c["name"],
            _minutes(c["start"]),
            _minutes(c["finish"]),
            _minutes(down),
            _minutes(short),
            c["versions"],
        )
    stdout.print(clusters)
    if report["outcome"] == "not started":
        stdout.print(
            f"fleet {report['fleet']}: no rehearsal yet (`kupgrade fleet rehearse "
            f"--fleet {report['fleet']} --to VERSION`)",
            highlight=False,
            markup=False,
        )
        return
    path = " -> ".join(p["id"] for p in report["criticalPath"])
    stdout.print(
        f"fleet {report['fleet']}: {report['outcome']} after "
        f"{report['simulatedSeconds'] / 60:.1f} simulated minutes; critical path {path or '-'}",
        highlight=False,
        markup=False,
    )
    stop = report.get("stop")
    if stop:
        stdout.print(
            f"stopped ({stop['kind']}) at {_minutes(stop['at'])}: {stop.get('why', '')}",
            highlight=False,
            markup=False,
        )
        if stop.get("state"):
            stdout.print(f"  state after: {stop['state']}", highlight=False, markup=False)
        if stop.get("objects"):
            stdout.print(f"  objects: {', '.join(stop['objects'])}", highlight=False, markup=False)
