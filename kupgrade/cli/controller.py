"""`kupgrade controller run`: a cluster's controllers on its virtual clock, in a child
process as they run in a pod (a handoff to their new version starts a new one), or over a
served cluster's Kubernetes API through a kubeconfig."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kupgrade.cli.leading import (
    IdentityOpt,
    Lead,
    LeaderElectOpt,
    LeaseDurationOpt,
    LeaseNameOpt,
    LeaseNamespaceOpt,
    RenewDeadlineOpt,
    RetryPeriodOpt,
    TerminatedError,
    leading,
)
from kupgrade.cli.live import ConsoleOpt, ConsolePortOpt, ContextOpt, KubeconfigOpt
from kupgrade.cli.output import (
    ClusterOpt,
    Format,
    OutputOpt,
    command_group,
    print_json,
    real,
    stderr,
    stdout,
    user_errors,
)
from kupgrade.cli.profiling import (
    ProfileRunOpt,
    check_profile_path,
    forget_profile,
    profiled,
)
from kupgrade.cli.storecheck import warn_invalid_objects
from kupgrade.cluster.leader import Timings, check_lease_names
from kupgrade.errors import InputError, KupgradeError
from kupgrade.sim.homes import cluster_root, opened
from kupgrade.sim.lock import ControllerLock, die_with_parent
from kupgrade.sim.loop import Local, Loop, Outcome
from kupgrade.sim.runs import local_loop, served_loop
from kupgrade.views.bars import live_bars
from kupgrade.views.cluster_live import maybe_cluster_console
from kupgrade.views.live_server import LiveServer, listening
from kupgrade.views.report import print_report

if TYPE_CHECKING:
    from kupgrade.cluster.remote import InformedBackend

controller_app = command_group("Run the controllers of a cluster.")


class Until(StrEnum):
    completed = "completed"
    idle = "idle"


HANDOFF_EXIT = 3


@controller_app.command("run")
@user_errors
def run_command(
    cluster: ClusterOpt = None,
    until: Annotated[
        Until,
        typer.Option(
            "--until", help="Stop when the update completed, or when nothing is left to do."
        ),
    ] = Until.completed,
    speed: Annotated[
        float,
        typer.Option(
            "--speed", min=0, help="Simulated seconds per real second (0: as fast as possible)."
        ),
    ] = 0.0,
    api: Annotated[
        bool,
        typer.Option(
            "--api", help="Serve the cluster's Kubernetes API while it runs (kubectl, oc)."
        ),
    ] = False,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="--api: the port (0: any free one).")
    ] = 0,
    console: ConsoleOpt = False,
    console_port: ConsolePortOpt = 0,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    leader_elect: LeaderElectOpt = False,
    lease_namespace: LeaseNamespaceOpt = "kube-system",
    lease_name: LeaseNameOpt = "kupgrade-controller",
    identity: IdentityOpt = None,
    lease_duration: LeaseDurationOpt = 15.0,
    renew_deadline: RenewDeadlineOpt = 10.0,
    retry_period: RetryPeriodOpt = 2.0,
    profile_run: ProfileRunOpt = None,
    child: Annotated[bool, typer.Option("--child", hidden=True)] = False,
    console_fd: Annotated[int | None, typer.Option("--console-fd", hidden=True)] = None,
    output: OutputOpt = Format.text,
) -> None:
    """Run the controllers on the virtual clock; safe to kill and re-run at any moment.

    The controllers run in a child process, as they run in a pod: when the version
    controller applies its own new version the process exits and a new one
    starts from the stored state and carries on. With --kubeconfig they act through
    the Kubernetes API of a cluster served with `kupgrade cluster serve-api NAME
    --no-controllers`, reading from watches and writing objects as on a real cluster.

    **Examples**

    ```
    kupgrade controller run --cluster demo
    kupgrade controller run --cluster demo --until idle --speed 600 -o json
    kupgrade controller run --cluster demo --speed 60 --api --port 6443
    kupgrade controller run --cluster demo --speed 120 --console --console-port 8088
    kupgrade controller run --context rehearsal --until idle -o json
    kupgrade controller run --context rehearsal --until idle --leader-elect --identity a
    kupgrade controller run --cluster demo --until idle --profile-run run-profile.txt
    ```

    --profile-run FILE writes where the run's time went: its share by part of kupgrade
    and the functions that spent the most (cProfile; the run takes about 1.6 times as
    long meanwhile), with the raw statistics beside it as FILE.pstats.

    With --leader-elect (through an API only) the controllers first take the
    coordination.k8s.io Lease --lease-namespace/--lease-name (kube-system/kupgrade-controller:
    kube-system, where kube-controller-manager keeps its own, whatever the kubeconfig's
    namespace), renew it every --retry-period, and stop at once, writing nothing more, when
    it is not renewed within --renew-deadline or another replica holds it (exit 1). A
    replica that finds the Lease held says so once, waits, and takes it once the holder
    has not renewed it for --lease-duration. SIGTERM releases the Lease, so that another
    replica takes it at once (exit 143). Timings as client-go's: 15 s, 10 s, 2 s; the
    identity defaults to HOSTNAME_UUID; requests carry the User-Agent
    kupgrade-controller/IDENTITY, which the API server's audit log records. In a pod
    without --kubeconfig (and no ~/.kube/config) the pod's service account is used.
    """
    if leader_elect:
        check_lease_names(lease_namespace, lease_name)
    if profile_run is not None:
        profile_run = profile_run.absolute()
        check_profile_path(profile_run)
        if not child:
            forget_profile(profile_run)
    lead = (
        Lead(
            lease_namespace,
            lease_name,
            identity,
            Timings(lease_duration, renew_deadline, retry_period).check(),
        )
        if leader_elect
        else None
    )
    if kubeconfig is not None or context is not None or lead is not None:
        if cluster is not None or api or console:
            raise InputError(
                "--kubeconfig names the cluster: --cluster, --api and --console do not go with it",
                field="--kubeconfig",
                hint="serve the cluster with `kupgrade cluster serve-api NAME --no-controllers`",
            )
        _run_remote(kubeconfig, context, until, output, lead, speed, profile_run)
        return
    served = Served(
        port if api or console else None,
        console_port if console else None,
        console_fd,
        profile_run,
    )
    if not child:
        _supervise(cluster, until, speed, output, served)
        return
    root = cluster_root(cluster)
    held = ControllerLock.inherited(root) or ControllerLock.acquire(root)
    try:
        _run_child(cluster, until, speed, output, served)
    finally:
        held.release()


@dataclass(frozen=True)
class Served:
    """What `controller run` serves while it runs: the API, and the console reading it
    (None: not served; 0: any free port)."""

    api: int | None = None
    console: int | None = None
    console_fd: int | None = None  # the parent's listening socket the console serves on
    profile: Path | None = None  # --profile-run: where the child writes its profile

    def args(self) -> list[str]:
        out = ["--api", "--port", str(self.api)] if self.api is not None else []
        if self.console is not None:
            out += ["--console", "--console-port", str(self.console)]
        if self.profile is not None:
            out += ["--profile-run", str(self.profile)]
        return out + (["--console-fd", str(self.console_fd)] if self.console_fd is not None else [])


def _supervise(
    cluster: str | None, until: Until, speed: float, output: Format, served: Served
) -> None:
    """The parent: hold the cluster's lock, start a child, start another after a handoff
    (on the console's port of the first, so that an open page carries on)."""
    listener = listening(served.console) if served.console is not None else None
    if listener is not None:
        served = Served(served.api, listener.getsockname()[1], listener.fileno(), served.profile)
    args = [sys.executable, "-m", "kupgrade", "controller", "run", "--until", until.value]
    args += ["--speed", str(speed), "-o", output.value, "--child", *served.args()]
    if cluster:
        args += ["--cluster", cluster]
    try:
        lock = ControllerLock.acquire(cluster_root(cluster))  # a wrong name fails here, once
    except BaseException:
        if listener is not None:
            listener.close()
        raise
    fds = (lock.fd,) if listener is None else (lock.fd, listener.fileno())
    try:
        while True:
            with subprocess.Popen(
                args,
                stdout=subprocess.PIPE,
                env=lock.child_env(),
                pass_fds=fds,
                preexec_fn=die_with_parent(),  # noqa: PLW1509 - no other thread runs here
            ) as child:
                said, _ = child.communicate()
            if child.returncode < 0:  # killed by a signal: said in one line, exit 1
                raise KupgradeError(
                    _lost_child(child.pid, -child.returncode),
                    hint="run `kupgrade controller run` again to carry on",
                )
            if child.returncode != HANDOFF_EXIT:
                sys.stdout.write(said.decode())
                raise typer.Exit(child.returncode)
            if output is Format.text:
                stderr.print(
                    "the version controller handed over to its new version; a new process carries on",
                    highlight=False,
                )
    finally:
        if listener is not None:
            listener.close()
        lock.release()


def _lost_child(pid: int, number: int) -> str:
    """What a run whose controllers' process died of a signal tells its user."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    return (
        f"the controllers' process {pid} was stopped by {name}; the cluster keeps every "
        "step committed before it"
    )


@contextmanager
def maybe_api(runner: Loop[Local], root: Path, served: Served) -> Iterator[LiveServer | None]:
    """The cluster's Kubernetes API while the controllers run, and the console reading
    it, when asked for."""
    if served.api is None:
        yield None
        return
    from kupgrade.apiserver.server import APIServer  # noqa: PLC0415 - only when serving

    with (
        APIServer(
            runner.transport.sim,
            root,
            root.name,
            served.api,
            clock=runner,
        ) as server,
        maybe_cluster_console(server.kubeconfig, served.console, served.console_fd) as live,
    ):
        stderr.print(
            f"API of cluster {root.name} at https://127.0.0.1:{server.port}; "
            f"export KUBECONFIG={server.kubeconfig}",
            highlight=False,
        )
        if live is not None:
            stderr.print(f"console of cluster {root.name}: {live.url}", highlight=False)
        yield live


def _run_remote(
    kubeconfig: Path | None,
    context: str | None,
    until: Until,
    output: Format,
    lead: Lead | None,
    speed: float = 0.0,
    profile: Path | None = None,
) -> None:
    """The controllers in this process, acting over a served cluster's API (while this
    replica holds the lease, with --leader-elect)."""
    # Imported here: lightkube's client (0.2 s) is for runs over an API only.
    from kupgrade.cluster.remote import InformedBackend  # noqa: PLC0415

    api = InformedBackend(kubeconfig, context)
    try:
        with leading(api, lead):
            _run_served(api, until, output, speed, profile)
    except TerminatedError as stopped:  # SIGTERM: the outcome said, the exit code a shell's
        if output.data:
            print_json({"outcome": "terminated", "message": str(stopped)})
        stderr.print(str(stopped), highlight=False, markup=False)
        raise typer.Exit(TerminatedError.code) from None
    finally:
        api.close()


def _run_served(
    api: InformedBackend, until: Until, output: Format, speed: float, profile: Path | None
) -> None:
    runner = served_loop(api)
    started, wall = api.now(), time.monotonic()

    def paced(run: Loop[Any]) -> None:  # --speed: simulated seconds per real second
        time.sleep(max(0.0, wall + (run.now() - started) / speed - time.monotonic()))

    with profiled(profile, f"controller run over {api.where}"):
        outcome = runner.run(until.value, on_step=paced if speed > 0 else None)
    said_profile(profile)
    what = f"the cluster behind {api.where}"
    _finish(runner, outcome, (started, wall), output, what, until)


def _finish(
    runner: Loop[Any],
    outcome: Outcome,
    since: tuple[float, float],
    output: Format,
    what: str,
    until: Until,
) -> None:
    """The run's report; a cluster left failing is said, with exit 1 (SPEC C3-C7: the
    controller keeps retrying; this run stops and says why), and so is a run asked to
    complete that stopped before (stalled, or nothing left to do), with what holds it."""
    started, wall = since
    report = runner.report(outcome, started, time.monotonic() - wall)
    if output.data:
        print_json(report)
    else:
        print_report(report, started, real(stdout))
    problem = runner.failing()
    if problem is not None:
        stderr.print(
            f"error: {what} is left failing: {' '.join(problem.split())}; " + runner.retry_hint,
            highlight=False,
            markup=False,
        )
        raise typer.Exit(1)
    if until is Until.completed and outcome.reason != "completed":
        stderr.print(
            f"error: {what} did not complete its update: {_why_stopped(runner, outcome)}",
            highlight=False,
            markup=False,
        )
        raise typer.Exit(1)


def _why_stopped(runner: Loop[Any], outcome: Outcome) -> str:
    """Why a run stopped short, in one line: how, what waits, the last warning."""
    how = {
        "stalled": f"nothing moved for {runner.platform.stall_seconds / 60:.0f} simulated "
        "minutes, so the run stopped",
        "idle": "the controllers have nothing left to do",
        "limit": "the run reached its time limit",
    }.get(outcome.reason, f"the run ended ({outcome.reason})")
    waiting = [
        f"{row.label} {row.done}/{row.total}" + (f" ({row.state})" if row.state else "")
        for row in runner.progress()
        if row.done < row.total
    ]
    if waiting:
        how += "; waiting: " + ", ".join(waiting[:3])
    # What blocks (an eviction a budget refused names the pod and the budget), then the
    # last warning (the controller's own alarm).
    events = runner.events()
    blocked = [e for e in events if str(e.get("reason", "")).endswith("Blocked")]
    warned = [e for e in events if e.get("kind") == "Warning"]
    for event in {id(e): e for e in (blocked[-1:] + warned[-1:])}.values():
        how += f"; {event['object']}: {' '.join(str(event['message']).split())}"
    return how + "; `kupgrade upgrade status` shows the whole picture"


def _run_child(
    cluster: str | None, until: Until, speed: float, output: Format, served: Served
) -> None:
    """The controllers' process: one run of the loop until done, handoff or failure."""
    with opened(cluster) as (root, store, spec):
        warn_invalid_objects(root.name, store)
        runner = local_loop(root, store, spec)
        started = float(store.meta("run_started") or runner.now())
        store.set_meta("run_started", started)
        wall = time.monotonic()
        with (
            maybe_api(runner, root, served) as live,
            live_bars(real(stderr), speed, runner.now(), wall) as on_step,
        ):
            with profiled(served.profile, f"controller run of cluster {root.name}"):
                outcome = runner.run(until.value, on_step=on_step, restart_on_handoff=False)
            if live is not None and outcome.reason != "handoff":
                live.end(f"the run ended ({outcome.reason}); this is the state it left")
        if outcome.reason == "handoff":
            raise typer.Exit(HANDOFF_EXIT)
        store.set_meta("run_started", None)
        store.commit()
        said_profile(served.profile)
        _finish(runner, outcome, (started, wall), output, f"cluster {root.name}", until)


def said_profile(path: Path | None) -> None:
    if path is not None:
        stderr.print(
            f"where the run's time went: {path} (raw: {path.name}.pstats)",
            highlight=False,
            markup=False,
        )
