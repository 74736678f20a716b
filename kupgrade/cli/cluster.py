"""`kupgrade cluster`: create, list, describe, serve and delete simulated clusters.

State lives under $KUPGRADE_HOME (default ~/.kupgrade), one directory per cluster with
its SQLite store, its release mirror and extracted payloads.
"""

from __future__ import annotations

import shutil
import signal
import sys
import threading
from contextlib import suppress
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer
from rich.table import Table

from kupgrade.cli import twin
from kupgrade.cli.live import ConsoleOpt, ConsolePortOpt
from kupgrade.cli.output import (
    Format,
    OutputOpt,
    command_group,
    print_json,
    report_error,
    stdout,
    user_errors,
)
from kupgrade.cli.storecheck import warn_invalid_objects
from kupgrade.controllers.nodes import metrics as node_metrics
from kupgrade.errors import InputError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.homes import CLUSTER_NAME, cluster_names, cluster_root, home, opened
from kupgrade.sim.lock import ControllerLock
from kupgrade.sim.platform import CreateAsk
from kupgrade.sim.platforms import platform_named, platform_of
from kupgrade.sim.profile import node_names, profile_schema
from kupgrade.sim.profiles import load_profile, sized
from kupgrade.sim.runs import local_loop
from kupgrade.sim.store_errors import StoreError
from kupgrade.sim.upgrades import shape_profile
from kupgrade.versions.times import rfc3339
from kupgrade.views.cluster_live import maybe_cluster_console

cluster_app = command_group("Create, import, list and delete simulated clusters.")
cluster_app.command("import")(twin.import_command)
cluster_app.command("calibration")(twin.calibration_command)


# --- cluster create | list | delete ------------------------------------------------------


NameArg = Annotated[
    str, typer.Argument(help="Cluster name (a directory under $KUPGRADE_HOME/clusters).")
]
ProfileOpt = Annotated[
    Path | None,
    typer.Option("--profile", help="Cluster profile YAML (format: `kupgrade cluster profile`)."),
]
VersionOpt = Annotated[str | None, typer.Option("--version", help="Release the cluster starts at.")]
ChannelOpt = Annotated[str | None, typer.Option("--channel", help="Update channel.")]
UpstreamOpt = Annotated[str | None, typer.Option("--upstream", help="Update service graph URL.")]
PlatformOpt = Annotated[
    str | None,
    typer.Option(
        "--platform",
        help="gdc for a distributed-cloud (bare metal) cluster, kubernetes for a plain "
        "kubeadm cluster; otherwise an OpenShift cluster on this infrastructure platform "
        "(AWS, BareMetal, None, ...).",
    ),
]
RoleOpt = Annotated[
    str | None, typer.Option("--role", help="gdc: admin, hybrid, standalone or user.")
]
ManagedByOpt = Annotated[
    str | None, typer.Option("--managed-by", help="gdc: a user cluster's admin or hybrid cluster.")
]
MastersOpt = Annotated[
    int | None,
    typer.Option("--masters", min=1, help="Control-plane nodes (replace the profile's)."),
]
ControlPlanesOpt = Annotated[
    int | None, typer.Option("--control-planes", min=1, help="kubernetes: control-plane nodes.")
]
WorkersOpt = Annotated[
    int | None, typer.Option("--workers", min=1, help="Worker nodes (replace the profile's).")
]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="Random seed (same seed, same run).")]


@cluster_app.command("create")
@user_errors
def create_command(
    name: NameArg,
    profile: ProfileOpt = None,
    version: VersionOpt = None,
    channel: ChannelOpt = None,
    upstream: UpstreamOpt = None,
    platform: PlatformOpt = None,
    role: RoleOpt = None,
    managed_by: ManagedByOpt = None,
    masters: MastersOpt = None,
    control_planes: ControlPlanesOpt = None,
    workers: WorkersOpt = None,
    seed: SeedOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Create a simulated cluster, settled at its first release.

    **Examples**

    ```
    kupgrade cluster create demo --version 4.13.40 --channel stable-4.14 \\
        --upstream http://127.0.0.1:8080/api/upgrades_info/graph
    kupgrade cluster create big --profile my-cluster.yaml --workers 50 --seed 7 -o json
    kupgrade cluster create admin --platform gdc --role admin --version 1.28.500-gke.120
    kupgrade cluster create user1 --platform gdc --role user --managed-by admin \\
        --version 1.28.500-gke.120 --workers 5
    kupgrade cluster create k8s --platform kubernetes --version v1.30.4 --control-planes 3 \\
        --workers 4
    ```

    A distributed-cloud cluster has a control-plane pool (`--masters` nodes), worker
    nodes (`--workers`) and, when its profile lists one, a load-balancer pool.
    """
    if not CLUSTER_NAME.fullmatch(name):
        raise InputError(
            f"invalid cluster name {name!r}", field="NAME", hint="use letters, digits and dashes"
        )
    loaded = load_profile(profile)
    given = {
        "version": version,
        "channel": channel,
        "upstream": upstream,
        "platform": platform,
        "seed": seed,
    }
    spec = msgspec.structs.replace(
        sized(loaded.spec, masters, workers), **{k: v for k, v in given.items() if v is not None}
    )
    ask = CreateAsk(role, managed_by, control_planes, version is not None or profile is not None)
    spec = shape_profile(spec, ask)
    root = create_cluster(home(), name, msgspec.structs.replace(loaded, spec=spec))
    info: dict[str, Any] = {
        "name": name,
        "path": str(root),
        "version": spec.version,
        "channel": spec.channel,
        "nodes": sum(len(node_names(p)) for p in spec.pools),
    }
    if spec.olm is not None and spec.olm.subscriptions:
        info["operators"] = _install_operators(name)
    if output.data:
        print_json(info)
    else:
        stdout.print(
            f"created cluster {name} at {spec.version} ({info['nodes']} nodes) in {root}",
            highlight=False,
        )


def _install_operators(name: str) -> list[str]:
    """A profile's subscriptions installed before the cluster is handed over: its
    controllers run until nothing is left to do (Manual plans wait for approval)."""
    with opened(name) as (root, store, spec):
        local_loop(root, store, spec).run(until="idle", max_seconds=6 * 3600)
        return sorted(
            f"{c['metadata']['namespace']}/{c['metadata']['name']} ({c['status'].get('phase')})"
            for c in store.list("ClusterServiceVersion")
        )


@cluster_app.command("list")
@user_errors
def list_command(output: OutputOpt = Format.text) -> None:
    """List the simulated clusters.

    **Examples**

    ```
    kupgrade cluster list
    kupgrade cluster list -o json
    ```
    """
    rows = []
    broken: list[StoreError] = []
    for name in cluster_names():
        try:
            with opened(name) as (_, store, spec):
                columns = platform_of(spec).summary(SimCluster(store))
                rows.append({"name": name, **columns, "time": rfc3339(float(store.meta("now", 0)))})
        except StoreError as exc:
            # One damaged cluster must not hide the others: list it as such, say why.
            broken.append(exc)
            rows.append(
                {"name": name, "VERSION": "", "PROGRESSING": "", "STATUS": "store unreadable"}
                | {"time": "", "error": exc.message}
            )
    if output.data:
        print_json(rows)
    else:
        table = Table("NAME", "VERSION", "PROGRESSING", "STATUS", "CLUSTER TIME", box=None)
        for r in rows:
            table.add_row(r["name"], r["VERSION"], r["PROGRESSING"], r["STATUS"], r["time"])
        stdout.print(table)
    for error in broken:
        report_error(error)
    if broken:
        raise typer.Exit(1)


@cluster_app.command("profile")
@user_errors
def profile_command(
    platform: Annotated[
        str,
        typer.Option("--platform", help="openshift or gdc: which example to print."),
    ] = "openshift",
    output: OutputOpt = Format.text,
) -> None:
    """The profile format of `cluster create --profile`: a commented example using every
    section, or with -o json the JSON Schema the loader checks profiles against.

    **Examples**

    ```
    kupgrade cluster profile > my-cluster.yaml
    kupgrade cluster profile --platform gdc > my-bare-metal-cluster.yaml
    kupgrade cluster profile -o json
    ```
    """
    example = platform_named(platform).example_profile()
    if example is None:
        raise InputError(
            f"no example for platform {platform!r}", field="--platform", hint="openshift or gdc"
        )
    if output.data:
        print_json(profile_schema())
    else:
        sys.stdout.write(example)


@cluster_app.command("metrics")
@user_errors
def metrics_command(
    name: Annotated[str | None, typer.Argument(help="The simulated cluster.")] = None,
    output: OutputOpt = Format.text,
) -> None:
    """The machine-config controller's metrics of a simulated cluster, as its /metrics
    serves them: mcc_drain_err per node whose drain has run past an hour (the
    MCCDrainError alert), and machine counts per pool.

    **Examples**

    ```
    kupgrade cluster metrics demo
    kupgrade cluster metrics demo -o json
    ```
    """
    with opened(name) as (_, store, _spec):
        api = SimCluster(store)
        if output.data:
            print_json(node_metrics.samples(api))
        else:
            sys.stdout.write(node_metrics.exposition(api))


@cluster_app.command("serve-api")
@user_errors
def serve_api_command(
    name: Annotated[str | None, typer.Argument(help="The simulated cluster.")] = None,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free one).")
    ] = 0,
    speed: Annotated[
        float,
        typer.Option("--speed", min=0.001, help="Simulated seconds per real second."),
    ] = 1.0,
    controllers: Annotated[
        bool,
        typer.Option(
            "--controllers/--no-controllers",
            help="Run the cluster's own controllers here; without them the world waits "
            "for `kupgrade controller run --kubeconfig`, which steps its clock.",
        ),
    ] = True,
    console: ConsoleOpt = False,
    console_port: ConsolePortOpt = 0,
    audit_log: Annotated[
        Path | None,
        typer.Option(
            "--audit-log",
            help="Append every request to this file as kube-apiserver's audit log does "
            "(audit.k8s.io/v1 Events at level Metadata, one JSON line each).",
        ),
    ] = None,
    output: OutputOpt = Format.text,
) -> None:
    """Serve a simulated cluster's Kubernetes API on loopback until interrupted, with its
    controllers running on a clock that follows real time: use kubectl or oc on it.

    With --console, a web page on loopback shows the cluster live as it reads it through
    this API: the upgrade's runlevels and operators (or stages, or plan steps), every
    node's phase and the budget holding its drain, the conditions and history, and the
    timeline so far.

    Writes a kubeconfig (mode 0600, a bearer token and the cluster's own CA) into the
    cluster's home and prints its path. With --no-controllers the controllers run in
    another process and act through this API, as they would on a real cluster; the
    clock (`kubectl get clocks`) then moves only when they step it.

    **Examples**

    ```
    kupgrade cluster serve-api demo --port 6443
    kupgrade cluster serve-api demo --speed 60 -o json
    kupgrade cluster serve-api demo --no-controllers
    kupgrade cluster serve-api demo --speed 60 --console --console-port 8088
    kupgrade cluster serve-api demo --audit-log audit.jsonl
    ```
    """
    # Imported here, where it serves: `cluster list`, `create` and the rest do not.
    from kupgrade.apiserver.server import APIServer  # noqa: PLC0415

    root = cluster_root(name, field="NAME")
    lock = ControllerLock.acquire(root)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with opened(root.name) as (_, store, spec):
            warn_invalid_objects(root.name, store)
            runner = local_loop(root, store, spec, with_controllers=controllers)
            with (
                APIServer(
                    runner.transport.sim, root, root.name, port, clock=runner, audit_log=audit_log
                ) as server,
                maybe_cluster_console(server.kubeconfig, console_port if console else None) as live,
            ):
                info = {
                    "cluster": root.name,
                    "server": f"https://127.0.0.1:{server.port}",
                    "kubeconfig": str(server.kubeconfig),
                    "clock": runner.mode,
                }
                if live is not None:
                    info["console"] = live.url
                if output.data:
                    print_json(info)
                else:
                    stdout.print(
                        f"serving the API of cluster {root.name} at {info['server']}; "
                        f"export KUBECONFIG={server.kubeconfig}",
                        highlight=False,
                    )
                    if live is not None:
                        stdout.print(f"console: {live.url}", highlight=False)
                sys.stdout.flush()
                with suppress(KeyboardInterrupt):
                    if controllers:
                        runner.live(speed, stop)
                    else:
                        while not stop.wait(0.5):
                            pass
                if live is not None:
                    live.end("the cluster's API server stopped")
                with store.lock:
                    runner.commit()
    finally:
        lock.release()


@cluster_app.command("delete")
@user_errors
def delete_command(
    name: Annotated[str, typer.Argument(help="Cluster to delete.")], output: OutputOpt = Format.text
) -> None:
    """Delete a simulated cluster and everything stored with it.

    **Examples**

    ```
    kupgrade cluster delete demo
    ```
    """
    root = cluster_root(name, field="NAME")
    shutil.rmtree(root)
    if output.data:
        print_json({"deleted": name})
    else:
        stdout.print(f"deleted cluster {name}", highlight=False)
