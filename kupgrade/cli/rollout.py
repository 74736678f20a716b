"""`kupgrade fleet rollout`: a fleet's upgrade in stages, windows and gates (SPEC X9)."""

from __future__ import annotations

import getpass
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table

from kupgrade.cli.backends import CaOpt, TokenOpt
from kupgrade.cli.live import ConsoleOpt, ConsolePortOpt, KubeconfigOpt
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
from kupgrade.cli.rollout_live import (
    ContextsOpt,
    PollOpt,
    PrometheusMapOpt,
    apply_live,
    live_root,
    plan_live,
    resume_live,
    start_live,
    status_live,
    urls,
)
from kupgrade.cluster.kubeconfig import context_names
from kupgrade.errors import InputError
from kupgrade.plan.rollout_doc import EXAMPLE, Rollout, read_rollout
from kupgrade.sim.fleet.engines import engine_named
from kupgrade.sim.fleet.home import locked, opened_fleet
from kupgrade.sim.fleet.live import Reach
from kupgrade.sim.fleet.rehearsal import Rehearsal
from kupgrade.sim.fleet.rollout import RolloutPacer, apply_request, drop_request, stored_rollout
from kupgrade.sim.fleet.rollout_task import rehearse_rollout, rollout_job
from kupgrade.sim.fleet.rollouts import (
    RolloutRefusedError,
    begin,
    clear_taken,
    fleet_copy,
    go_on,
    outcome_of,
    plan_report,
    refused_report,
    rollout_report,
    rollout_view,
    settings_of,
    take_requests,
)
from kupgrade.sim.lock import ClusterBusyError, ControllerLock
from kupgrade.skew.inventory import read_yaml
from kupgrade.versions.times import rfc3339
from kupgrade.views.gantt import gantt_lines
from kupgrade.views.live_server import published

app = command_group("Staged fleet rollouts: stages, soak, approvals, windows and health gates.")

FleetOpt = Annotated[
    str | None, typer.Option("--fleet", help="Fleet name (the only one if omitted).")
]
FileArg = Annotated[Path, typer.Argument(help="The rollout (`kupgrade fleet rollout example`).")]
ToOpt = Annotated[
    str | None,
    typer.Option("--to", help="Target version (default: the rollout's, then the fleet's)."),
]
SpeedOpt = Annotated[
    float,
    typer.Option(
        "--speed", min=0, help="Simulated seconds per wall second (0: as fast as possible)."
    ),
]
ByOpt = Annotated[str | None, typer.Option("--by", help="Who does it (default: the login name).")]


def _read(file: Path) -> Rollout:
    return read_rollout(read_yaml(file, "rollout"), str(file))


def _who(by: str | None) -> str:
    if by:
        return by
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "someone"


@app.command("example")
@user_errors
def example_command(output: OutputOpt = Format.text) -> None:
    """Print a rollout with every field explained (as data, without the comments, with -o).

    **Examples**

    ```
    kupgrade fleet rollout example > rollout.yaml
    kupgrade fleet rollout example -o json
    ```
    """
    if output.data:
        print_json(read_rollout(yaml.safe_load(EXAMPLE), "example").document)
        return
    typer.echo(EXAMPLE, nl=False)


@app.command("plan")
@user_errors
def plan_command(
    file: FileArg,
    fleet: FleetOpt = None,
    to: ToOpt = None,
    kubeconfig: KubeconfigOpt = None,
    contexts: ContextsOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Place the fleet's plan into the rollout's stages and windows on forecast durations.

    Every step starts as early as its `after` steps (which keep every state legal), its
    stage, the stage's maxConcurrency and its cluster's windows and exclusions allow;
    approvals are taken as given when asked and gates as passing. Refused (exit 1) with
    the rule, the objects and the fix when a step fits no window or the stage order would
    break a skew rule.

    **Examples**

    ```
    kupgrade fleet rollout plan rollout.yaml --fleet lab-fleet
    kupgrade fleet rollout plan rollout.yaml --fleet lab-fleet -o json
    ```

    With --kubeconfig, the clusters its contexts reach (--context picks some), each
    forecast by its twin (`kupgrade cluster import CONTEXT`) or two hours: nothing is
    asked of them.
    """
    rollout = _read(file)
    if kubeconfig is not None:
        reach = Reach(kubeconfig, contexts or context_names(kubeconfig), {})
        _finish(plan_live(rollout, reach, fleet or rollout.name, to), output)
        return
    with opened_fleet(fleet) as (root, store, info, members):
        report = plan_report(Rehearsal(store, members, info), rollout, root.name, to)
    _finish(report, output)


@app.command("rehearse")
@user_errors
def rehearse_command(
    file: FileArg,
    fleet: FleetOpt = None,
    to: ToOpt = None,
    speed: SpeedOpt = 0.0,
    console: ConsoleOpt = False,
    console_port: ConsolePortOpt = 0,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Run the rollout on a copy of the fleet's simulated clusters, on one virtual clock.

    Windows, exclusions and soaks are kept on the virtual clock, gates read each cluster's
    metrics snapshot at its time, approvals are taken as given when asked (said in the
    events), and every rule is checked at every state. The fleet itself is not changed.
    Exit 1 unless the rollout completes.

    **Examples**

    ```
    kupgrade fleet rollout rehearse rollout.yaml --fleet lab-fleet
    kupgrade fleet rollout rehearse rollout.yaml --fleet lab-fleet -o json
    kupgrade fleet rollout rehearse rollout.yaml --fleet lab-fleet --engine ray -o json
    ```

    With --engine ray the rehearsal runs as one Ray task (a rollout's stages tie every
    cluster, so it is not cut into parts), on this machine or on the Ray cluster at
    --address; the report is the same.
    """
    rollout = _read(file)
    chosen = engine_named(engine, address)
    wall = time.monotonic()
    if chosen.name != "local":
        if speed or console:
            raise InputError(
                "--speed and --console follow this process's clock: they go with --engine local",
                field="--engine",
                hint="leave --engine out to watch the rehearsal, or drop --speed/--console",
            )
        with opened_fleet(fleet) as (root, _store, info, members):
            job = rollout_job(
                root, {n: m[0] for n, m in members.items()}, info, rollout, file=str(file), to=to
            )
        if not output.data:
            stderr.print(
                "1 part: a rollout's stages, windows and gates tie every cluster", highlight=False
            )
        report = chosen.map(rehearse_rollout, [job])[0]
        report["wallSeconds"] = round(time.monotonic() - wall, 3)
        _finish(report, output)
        return
    with (
        opened_fleet(fleet) as (root, _store, info, members),
        fleet_copy(root, members) as (copy, copies),
    ):
        rehearsal = Rehearsal(copy, copies, info)
        report = _begin_and_run(
            rehearsal,
            rollout,
            str(file),
            to,
            root.name,
            _How(speed, output, _port(console, console_port)),
            assume=True,
        )
    report["wallSeconds"] = round(time.monotonic() - wall, 3)
    _finish(report, output)


@dataclass(frozen=True)
class _How:
    """How a run goes: its pace, its output, and its web console's port (None: none)."""

    speed: float
    output: Format
    console: int | None = None


def _begin_and_run(
    rehearsal: Rehearsal,
    rollout: Rollout,
    file: str,
    to: str | None,
    name: str,
    how: _How,
    *,
    assume: bool,
    root: Path | None = None,
) -> dict[str, Any]:
    try:
        begin(rehearsal, rollout, file, to, assume=assume)
    except RolloutRefusedError as refused:
        settings = settings_of(rehearsal, rollout, to)
        return refused_report(rehearsal, rollout, name, settings.target, refused)
    return _run(rehearsal, rollout, name, how, root)


def _run(
    rehearsal: Rehearsal, rollout: Rollout, name: str, how: _How, root: Path | None
) -> dict[str, Any]:
    with (
        published(
            how.console,
            lambda: rollout_view(rehearsal, rollout, name),
            lambda url: stderr.print(f"console of rollout {rollout.name}: {url}", highlight=False),
            lambda: (
                f"the rollout is {outcome_of(rehearsal.state_status() or 'over')}; "
                "this is the state it left"
            ),
        ) as watch,
        _Progress(rehearsal, root, how.output, watch) as progress,
    ):
        rehearsal.run(progress, how.speed)
        if progress.bars is not None:
            progress.draw(rehearsal)
    if root is not None:
        take_requests(rehearsal, root)
        rehearsal.commit()
        clear_taken(root, rehearsal.fleet)
    return rollout_report(rehearsal, rollout, name)


class _Progress:
    """While the run goes: a bar per stage (its steps done, and what it waits for) and a
    line per stage, gate and approval event, on stderr for text output; requests from
    other processes taken (at most twice a second)."""

    def __init__(
        self, rehearsal: Rehearsal, root: Path | None, output: Format, watch: Any = None
    ) -> None:
        self.root = root
        self.watch = watch
        self.polled = 0.0
        self.drawn = 0.0
        self.bars: Progress | None = None
        self.seen = len(rehearsal.fleet.events())
        if not output.data:
            self.bars = Progress(
                TextColumn("{task.fields[stage]:<12}"),
                BarColumn(bar_width=30),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                console=getattr(stderr, "real", stderr),
            )
            self.tasks: dict[str, TaskID] = {}

    def __enter__(self) -> _Progress:
        if self.bars is not None:
            self.bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bars is not None:
            self.bars.stop()

    def __call__(self, rehearsal: Rehearsal) -> None:
        if self.watch is not None:
            self.watch(rehearsal)
        if self.root is not None and time.monotonic() - self.polled > 0.5:
            self.polled = time.monotonic()
            if take_requests(rehearsal, self.root):
                rehearsal.moved = True
                rehearsal.commit()
                clear_taken(self.root, rehearsal.fleet)
        if self.bars is None or time.monotonic() - self.drawn < 0.2:
            return
        self.draw(rehearsal)

    def draw(self, rehearsal: Rehearsal) -> None:
        """The bars as the store has them now, and the events since the last drawing."""
        assert self.bars is not None
        self.drawn = time.monotonic()
        pacer = rehearsal.pacer
        if not isinstance(pacer, RolloutPacer):
            return
        conductor = pacer.conductor
        done = {i for i, r in rehearsal.steps.items() if "finishedAt" in r}
        for index, stage in enumerate(conductor.rollout.stages):
            tasks = conductor.stage_tasks(index)
            status = conductor.state["stages"][index]["status"]
            said = conductor.waits(index) if status != "done" else "done"
            window = pacer.next_window()
            if status == "running" and window is not None:
                said += f"; next window {rfc3339(window)}"
            if stage.name not in self.tasks:
                self.tasks[stage.name] = self.bars.add_task(
                    said, total=len(tasks), stage=stage.name
                )
            finished = sum(1 for t in tasks if t.id in done)
            self.bars.update(self.tasks[stage.name], completed=finished, description=said)
        events = rehearsal.fleet.events()
        start = float((rehearsal.state or {}).get("startedAt", rehearsal.now))
        for e in events[self.seen :]:
            if e["object"].startswith(("stage/", "gate/", "rollout")) or e["reason"].startswith(
                "Rollout"
            ):
                self.bars.console.print(
                    f"{(e['at'] - start) / 3600:7.2f}h  {e['object']}: {e['message']}",
                    highlight=False,
                    markup=False,
                )
        self.seen = len(events)


@app.command("start")
@user_errors
def start_command(
    file: FileArg,
    fleet: FleetOpt = None,
    to: ToOpt = None,
    speed: SpeedOpt = 0.0,
    kubeconfig: KubeconfigOpt = None,
    contexts: ContextsOpt = None,
    prometheus: PrometheusMapOpt = None,
    token_file: TokenOpt = None,
    ca_file: CaOpt = None,
    poll: PollOpt = 10.0,
    console: ConsoleOpt = False,
    console_port: ConsolePortOpt = 0,
    output: OutputOpt = Format.text,
) -> None:
    """Carry the rollout out on the fleet's simulated clusters.

    It goes until every stage is done, a stage waits for approval (`approve`, then
    `resume`), or a gate or a broken rule halts it. Safe to kill at any moment:
    `resume` goes on without repeating or reordering work; `start` again with the same
    file does the same.

    **Examples**

    ```
    kupgrade fleet rollout start rollout.yaml --fleet lab-fleet
    kupgrade fleet rollout start rollout.yaml --fleet lab-fleet --speed 600 -o json
    ```

    With --kubeconfig (`--kubeconfig fleet.kubeconfig --fleet prod --to 4.14.0`) the
    clusters are real ones (or simulated clusters' APIs), one per context (--context
    picks some), upgraded through their API as `kupgrade upgrade
    --kubeconfig --to` does, on the wall clock; gates ask each context's Prometheus
    (--prometheus CONTEXT=URL). The rollout is kept under --fleet (default: its name).
    """
    rollout = _read(file)
    if kubeconfig is not None:
        metrics = urls(prometheus)
        reach = Reach(
            kubeconfig, contexts or context_names(kubeconfig), metrics, token_file, ca_file
        )
        name = fleet or rollout.name
        _finish(
            start_live(rollout, str(file), name, reach, to=to, poll=poll, output=output), output
        )
        return
    with opened_fleet(fleet) as (root, store, info, members), locked(root, list(members)):
        rehearsal = Rehearsal(store, members, info)
        under_way = stored_rollout(rehearsal)
        if (
            under_way is not None
            and rehearsal.state_status() == "completed"
            and (under_way.document == rollout.document)
        ):
            report = rollout_report(rehearsal, under_way, root.name)  # done: its report again
        elif under_way is not None and rehearsal.state_status() == "stopped":
            stop = (rehearsal.state or {}).get("stop") or {}
            raise InputError(
                f"rollout {under_way.name} stopped ({stop.get('kind')}): {stop.get('why', '')}",
                hint=f"see `kupgrade fleet rollout status --fleet {root.name}`; delete the "
                "fleet and create it again to start over",
            )
        elif under_way is not None and rehearsal.state_status() in ("running", "waiting", "halted"):
            if under_way.document != rollout.document:
                raise InputError(
                    f"rollout {under_way.name} of fleet {root.name} is under way with another document",
                    file=str(file),
                    hint=f"go on with it: `kupgrade fleet rollout resume --fleet {root.name}`",
                )
            go_on(rehearsal, under_way, assume=False)
            report = _run(
                rehearsal,
                under_way,
                root.name,
                _How(speed, output, _port(console, console_port)),
                root,
            )
        else:
            _fresh(rehearsal, root.name)
            report = _begin_and_run(
                rehearsal,
                rollout,
                str(file),
                to,
                root.name,
                _How(speed, output, _port(console, console_port)),
                assume=False,
                root=root,
            )
    _finish(report, output)


def _fresh(rehearsal: Rehearsal, name: str) -> None:
    status = rehearsal.state_status()
    if status in ("running", "waiting", "halted"):
        raise InputError(
            f"a rehearsal of fleet {name} is under way",
            hint=f"let it finish: `kupgrade fleet rehearse --fleet {name}`",
        )


@app.command("resume")
@user_errors
def resume_command(
    file: Annotated[
        Path | None, typer.Argument(help="The rollout (default: the one under way).")
    ] = None,
    fleet: FleetOpt = None,
    speed: SpeedOpt = 0.0,
    by: ByOpt = None,
    poll: PollOpt = 10.0,
    console: ConsoleOpt = False,
    console_port: ConsolePortOpt = 0,
    output: OutputOpt = Format.text,
) -> None:
    """Go on with the rollout: after a crash, an approval, a wait or a halt (a halt is
    cleared, and its gates measure their `for` afresh).

    **Examples**

    ```
    kupgrade fleet rollout resume --fleet lab-fleet
    kupgrade fleet rollout resume rollout.yaml --fleet lab-fleet -o json
    ```
    """
    live = live_root(fleet)
    if live is not None:
        _finish(resume_live(live, _who(by), poll, output), output)
        return
    with opened_fleet(fleet) as (root, store, info, members), locked(root, list(members)):
        rehearsal = Rehearsal(store, members, info)
        rollout = _under_way(rehearsal, root.name, file)
        go_on(rehearsal, rollout, assume=False, by=_who(by))
        report = _run(
            rehearsal, rollout, root.name, _How(speed, output, _port(console, console_port)), root
        )
    _finish(report, output)


def _under_way(rehearsal: Rehearsal, name: str, file: Path | None) -> Rollout:
    rollout = stored_rollout(rehearsal)
    if rollout is None:
        raise InputError(
            f"fleet {name} has no rollout",
            hint=f"start one: `kupgrade fleet rollout start ROLLOUT.yaml --fleet {name}`",
        )
    if file is not None and _read(file).document != rollout.document:
        raise InputError(
            f"the rollout of fleet {name} was started from another document",
            file=str(file),
            hint="leave the file out to use the one under way",
        )
    return rollout


@app.command("status")
@user_errors
def status_command(
    file: Annotated[
        Path | None, typer.Argument(help="The rollout (default: the one under way).")
    ] = None,
    fleet: FleetOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Stages, clusters, windows and gates as far as the rollout got, with a Gantt chart.

    **Examples**

    ```
    kupgrade fleet rollout status --fleet lab-fleet
    kupgrade fleet rollout status --fleet lab-fleet -o json
    ```
    """
    live = live_root(fleet)
    if live is not None:
        _print(status_live(live), output)
        return
    with opened_fleet(fleet) as (root, store, info, members):
        rehearsal = Rehearsal(store, members, info)
        rollout = _under_way(rehearsal, root.name, file)
        report = rollout_report(rehearsal, rollout, root.name)
    _print(report, output)


@app.command("approve")
@user_errors
def approve_command(
    args: Annotated[list[str], typer.Argument(help="[ROLLOUT.yaml] STAGE: the stage to approve.")],
    fleet: FleetOpt = None,
    by: ByOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Approve a stage (before it asks, too); recorded with who and when.

    **Examples**

    ```
    kupgrade fleet rollout approve production --fleet lab-fleet --by alice
    ```
    """
    if len(args) not in (1, 2):
        raise InputError(
            "give the stage to approve (and optionally the rollout file first)", field="STAGE"
        )
    file, stage = (Path(args[0]), args[1]) if len(args) == 2 else (None, args[0])
    said = _request(fleet, file, "approve", by, output, stage=stage)
    _said(said, output)


@app.command("halt")
@user_errors
def halt_command(
    file: Annotated[
        Path | None, typer.Argument(help="The rollout (default: the one under way).")
    ] = None,
    fleet: FleetOpt = None,
    by: ByOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Halt the rollout: steps under way finish, nothing more starts until `resume`.

    **Examples**

    ```
    kupgrade fleet rollout halt --fleet lab-fleet --by alice
    ```
    """
    _said(_request(fleet, file, "halt", by, output), output)


def _request(
    fleet: str | None, file: Path | None, kind: str, by: str | None, output: Format, **details: Any
) -> dict[str, Any]:
    """Applied at once when no run holds the fleet; else a request file the run takes."""
    body = {"kind": kind, "by": _who(by), "at": time.time(), **details}
    live = live_root(fleet)
    if live is not None:
        try:
            said = apply_live(live, body)
        except ClusterBusyError:
            drop_request(live, kind, **{k: v for k, v in body.items() if k != "kind"})
            said = "by the run under way"
        return {"fleet": live.name, "request": kind, "applied": said, "by": body["by"], **details}
    with opened_fleet(fleet) as (root, store, info, members):
        rehearsal = Rehearsal(store, members, info)
        rollout = _under_way(rehearsal, root.name, file)
        if kind == "approve" and details["stage"] not in [s.name for s in rollout.stages]:
            raise InputError(
                f"the rollout has no stage {details['stage']!r}",
                hint=f"its stages are {', '.join(s.name for s in rollout.stages)}",
            )
        with _fleet_lock(root) as free:
            if not free:
                drop_request(root, kind, **{k: v for k, v in body.items() if k != "kind"})
                return {
                    "fleet": root.name,
                    "request": kind,
                    "applied": "by the run under way",
                    **details,
                }
            rehearsal.pacer = RolloutPacer(rehearsal, rollout, assume_approvals=False)
            said = apply_request(rehearsal.pacer, body, rehearsal.now)
            rehearsal.pacer.save()
            store.commit()
    return {"fleet": root.name, "request": kind, "applied": said, "by": body["by"], **details}


@contextmanager
def _fleet_lock(root: Path) -> Iterator[bool]:
    try:
        lock = ControllerLock.acquire(root)
    except ClusterBusyError:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def _said(said: dict[str, Any], output: Format) -> None:
    if output.data:
        print_json(said)
        return
    what = said["applied"]
    hint = (
        f"; `kupgrade fleet rollout resume --fleet {said['fleet']}` goes on"
        if said["request"] == "approve" and what != "by the run under way"
        else ""
    )
    stdout.print(
        f"fleet {said['fleet']}: {said['request']} {what}{hint}", highlight=False, markup=False
    )


def _finish(report: dict[str, Any], output: Format) -> None:
    _print(report, output)
    if report["outcome"] in ("halted", "refused"):
        raise typer.Exit(1)


def _hours(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds / 3600:.2f}h"


def _print(report: dict[str, Any], output: Format) -> None:
    if output.data:
        print_json(report)
        return
    if report.get("refused"):
        r = report["refused"]
        stdout.print(
            f"rollout {report['rollout']} refused: {', '.join(r['rules'])}: {r['message']}\n"
            f"  objects: {', '.join(r['objects'])}\n  fix: {r['fix']}",
            highlight=False,
            markup=False,
        )
        return
    stages = Table(
        "STAGE", "CLUSTERS", "STATUS", "OPENED", "DONE", "SOAK UNTIL", "APPROVAL", "GATES", box=None
    )
    for s in report.get("stages", []):
        approval = s["approval"]
        gates = "; ".join(
            f"{g['gate']}@{g['cluster']}={'no data' if g['value'] is None else format(g['value'], 'g')}"
            for g in s["gates"]
        )
        stages.add_row(
            s["name"],
            ", ".join(s["clusters"][:6]) + (" ..." if len(s["clusters"]) > 6 else ""),
            s["status"],
            _hours(s["openedAt"]),
            _hours(s["doneAt"]),
            _hours(s["soakUntil"]),
            ""
            if approval is None
            else (
                f"by {approval['approvedBy']}"
                if approval["approvedBy"]
                else "waiting"
                if approval["askedAt"] is not None
                else "needed"
            ),
            gates,
        )
    stdout.print(stages)
    steps = Table(
        "STEP", "STAGE", "OBJECT", "FROM", "TO", "START", "END", "FORECAST", "WAITED FOR", box=None
    )
    for s in report["steps"]:
        steps.add_row(
            s["id"],
            s["stage"] or "",
            s["object"],
            s["from"],
            s["to"],
            _hours(s["startedAt"]),
            _hours(s["finishedAt"]),
            _hours(s["forecastSeconds"]),
            s.get("heldBy") or "",
        )
    stdout.print(steps)
    if report.get("windows"):
        windows = Table("WINDOW CLUSTERS", "DAYS", "START", "DURATION", "ZONE", "NEXT", box=None)
        for w in report["windows"]:
            windows.add_row(
                _selector(w.get("clusters") or {}),
                ",".join(w.get("days") or ["every day"]),
                w["start"],
                w["duration"],
                w.get("timeZone", "UTC"),
                w["next"] or "",
            )
        stdout.print(windows)
    for line in gantt_lines(report["steps"]):
        stdout.print(line, highlight=False, markup=False)
    tail = f"rollout {report['rollout']} of fleet {report['fleet']}: {report['outcome']}"
    if report.get("finishedAt") is not None:
        tail += f" after {_hours(report['finishedAt'])}"
    stdout.print(tail, highlight=False, markup=False)
    if report.get("halt"):
        stdout.print(f"  halted: {report['halt'].get('why', '')}", highlight=False, markup=False)
    if report.get("waitingFor"):
        stdout.print(f"  waiting: {report['waitingFor']}", highlight=False, markup=False)


def _selector(selector: dict[str, Any]) -> str:
    """A cluster selector in a few words (every cluster when empty)."""
    parts = [f"{k}={','.join(v) if isinstance(v, list) else v}" for k, v in selector.items()]
    return " ".join(parts) or "every cluster"


def _port(console: bool, port: int) -> int | None:
    """The web console's port when one was asked for (0: any free one)."""
    return port if console else None
