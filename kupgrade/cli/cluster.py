"""`kupgrade cluster`, `upgrade`, `controller run` and `get`: simulated clusters end to end.

State lives under $KUPGRADE_HOME (default ~/.kupgrade), one directory per cluster with
its SQLite store, its release mirror and extracted payloads.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer
from rich.table import Table

from kupgrade.apiserver.server import APIServer, version_info
from kupgrade.cli.cluster_view import live_view, print_report, summary_columns
from kupgrade.cli.gdc import gdc_spec, gdc_status, gdc_upgrade
from kupgrade.cli.kube import kube_spec, kube_status, kube_upgrade
from kupgrade.cli.live import ConsoleOpt, ConsolePortOpt, ContextOpt, KubeconfigOpt, backend
from kupgrade.cli.output import (
    ClusterOpt,
    Format,
    OutputOpt,
    print_json,
    report_error,
    stderr,
    stdout,
    user_errors,
)
from kupgrade.cli.skew import BmctlOpt, ReleasesOpt
from kupgrade.cli.upgrade_status import Details, show_status
from kupgrade.cluster.backend import Backend
from kupgrade.cluster.clusterversion import (
    bypassed_risk,
    clear_request,
    latest_release,
    no_target,
    request_update,
    requested_release,
    set_channel,
)
from kupgrade.cluster.kube import KubeBackend
from kupgrade.cluster.remote import InformedBackend
from kupgrade.controllers.nodes import metrics as node_metrics
from kupgrade.errors import InputError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.create import create_cluster
from kupgrade.sim.fleet.home import rehearsing
from kupgrade.sim.homes import CLUSTER_NAME, cluster_names, cluster_root, home, opened
from kupgrade.sim.lock import ControllerLock, die_with_parent
from kupgrade.sim.loop import Local, Loop, Outcome
from kupgrade.sim.openshift.platform import availability
from kupgrade.sim.platforms import platform_named
from kupgrade.sim.profile import Pool, Spec, node_names, profile_schema
from kupgrade.sim.profiles import load_profile
from kupgrade.sim.runs import local_loop, served_loop
from kupgrade.sim.store import Store, StoreError
from kupgrade.skew.inventory import kube_field
from kupgrade.versions.times import rfc3339
from kupgrade.views.cluster_live import cluster_console
from kupgrade.views.live_server import LiveServer, listening
from kupgrade.views.upgrade_text import check_for_upgrade, render_upgrade

cluster_app = typer.Typer(help="Create, list and delete simulated clusters.", no_args_is_help=True)
controller_app = typer.Typer(help="Run the controllers of a cluster.", no_args_is_help=True)


# --- cluster create | list | delete ------------------------------------------------------


@cluster_app.command("create")
@user_errors
def create_command(
    name: Annotated[
        str, typer.Argument(help="Cluster name (a directory under $KUPGRADE_HOME/clusters).")
    ],
    profile: Annotated[
        Path | None,
        typer.Option(
            "--profile", help="Cluster profile YAML (format: `kupgrade cluster profile`)."
        ),
    ] = None,
    version: Annotated[
        str | None, typer.Option("--version", help="Release the cluster starts at.")
    ] = None,
    channel: Annotated[str | None, typer.Option("--channel", help="Update channel.")] = None,
    upstream: Annotated[
        str | None, typer.Option("--upstream", help="Update service graph URL.")
    ] = None,
    platform: Annotated[
        str | None,
        typer.Option(
            "--platform",
            help="gdc for a distributed-cloud (bare metal) cluster, kubernetes for a plain "
            "kubeadm cluster; otherwise an OpenShift cluster on this infrastructure platform "
            "(AWS, BareMetal, None, ...).",
        ),
    ] = None,
    role: Annotated[
        str | None,
        typer.Option("--role", help="gdc: admin, hybrid, standalone or user."),
    ] = None,
    managed_by: Annotated[
        str | None,
        typer.Option("--managed-by", help="gdc: a user cluster's admin or hybrid cluster."),
    ] = None,
    masters: Annotated[
        int | None,
        typer.Option("--masters", min=1, help="Control-plane nodes (replace the profile's)."),
    ] = None,
    control_planes: Annotated[
        int | None,
        typer.Option("--control-planes", min=1, help="kubernetes: control-plane nodes."),
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Worker nodes (replace the profile's).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Random seed (same seed, same run).")
    ] = None,
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
    spec = loaded.spec
    changes: dict[str, Any] = {
        k: v
        for k, v in {
            "version": version,
            "channel": channel,
            "upstream": upstream,
            "platform": platform,
            "seed": seed,
        }.items()
        if v is not None
    }
    pools = list(spec.pools)
    for pool_name, count in (("master", masters), ("worker", workers)):
        if count is not None:
            # The flag wins over the file: the pool gets this many generated nodes, in
            # place of any machines the profile names.
            pools = [
                msgspec.structs.replace(p, nodes=count, machines=[], created=[])
                if p.name == pool_name
                else p
                for p in pools
            ]
            if not any(p.name == pool_name for p in pools):
                pools.append(Pool(pool_name, count))
    spec = msgspec.structs.replace(spec, pools=pools, **changes)
    spec = gdc_spec(
        spec, role, managed_by, version_given=version is not None or profile is not None
    )
    spec = kube_spec(spec, control_planes, version_given=version is not None or profile is not None)
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
            with opened(name) as (_, store, _spec):
                rows.append(
                    {
                        "name": name,
                        **summary_columns(store),
                        "time": rfc3339(float(store.meta("now", 0))),
                    }
                )
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
        raise InputError(f"no example for platform {platform!r}", field="--platform",
                         hint="openshift or gdc")  # fmt: skip
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
    ```
    """
    root = cluster_root(name, field="NAME")
    lock = ControllerLock.acquire(root)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with opened(root.name) as (_, store, spec):
            runner = local_loop(root, store, spec, with_controllers=controllers)
            with (
                APIServer(
                    runner.transport.sim, root, root.name, version_info(store), port, clock=runner
                ) as server,
                maybe_console(server.kubeconfig, console_port if console else None) as live,
            ):
                info = {"cluster": root.name, "server": f"https://127.0.0.1:{server.port}",
                        "kubeconfig": str(server.kubeconfig), "clock": runner.mode}  # fmt: skip
                if live is not None:
                    info["console"] = live.url
                if output.data:
                    print_json(info)
                else:
                    stdout.print(f"serving the API of cluster {root.name} at {info['server']}; "
                                 f"export KUBECONFIG={server.kubeconfig}", highlight=False)  # fmt: skip
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


# --- availability ------------------------------------------------------------------------


def refresh_availability(store: Store, spec: Spec) -> list[str]:
    """`upgrade`'s explicit check of the update service (SPEC A3), committed at once."""
    notes = availability(SimCluster(store), spec, throttled=False).refresh(explicit=True)
    store.commit()
    return notes


# --- upgrade -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Ask:
    """What `upgrade` was asked, in `oc adm upgrade`'s flags."""

    to: str | None = None
    image: str | None = None
    latest: bool = False
    clear: bool = False
    explicit: bool = False  # --allow-explicit-upgrade
    include_not_recommended: bool = False  # shows them; also allows --to, as it always has
    allow_not_recommended: bool = False
    with_warnings: bool = False  # --allow-upgrade-with-warnings
    force: bool = False

    @property
    def target(self) -> bool:
        return bool(self.to or self.image or self.latest)

    def check(self) -> None:
        """oc's Complete: the flags that do not go together."""
        if self.clear and self.target:
            raise InputError("--clear may not be specified with any other flags", field="--clear")
        if sum(map(bool, (self.to, self.image, self.latest))) > 1:
            raise InputError("give one of --to, --to-image or --to-latest", field="--to")


def live_upgrade(api: KubeBackend, ask: Ask, output: Format) -> None:
    """`upgrade --kubeconfig`: the status as `oc adm upgrade` prints it, or a request with
    the same guards, written to the cluster's ClusterVersion."""
    cv = api.get("ClusterVersion", "version")
    if cv is None:
        raise InputError("the cluster has no ClusterVersion (it is not OpenShift)",
                         field="--kubeconfig", hint="use `kupgrade skew check --kubeconfig`")  # fmt: skip
    desired = status_or_request(api, cv, ask, output)
    if desired is not None:
        said(desired, output, ".")


def status_or_request(
    api: Backend, cv: dict[str, Any], ask: Ask, output: Format
) -> dict[str, Any] | None:
    """Print the status as `oc adm upgrade` does, or clear or set spec.desiredUpdate with
    its guards: the release requested, which the caller commits and reports (None when
    nothing was requested; a clear is written and said here, for the caller to commit).

    The order and the words of openshift/oc pkg/cli/admin/upgrade/upgrade.go Run."""
    if ask.clear:
        _info(clear_request(api), api, output)
        return None
    if not ask.target:
        if output.data:
            print_json(cv)
            return None
        out, err = render_upgrade(cv, ask.include_not_recommended)
        sys.stdout.write("".join(line + "\n" for line in out))
        sys.stderr.write("".join(line + "\n" for line in err))
        return None
    at = cv["status"].get("desired") or {}
    if ask.to and ask.to == at.get("version"):
        _info(f"info: Cluster is already at version {ask.to}", api, output)
        return None
    if ask.image and ask.image == at.get("image"):
        _info(f"info: Cluster is already at {ask.image}", api, output)
        return None
    allow = ask.include_not_recommended or ask.allow_not_recommended
    if ask.latest:
        found = latest_release(cv, allow)
        if found is None:
            error = no_target(cv["status"], [], None, allow, latest=True)
            if error is not None:
                raise error
            version = (cv["status"].get("desired") or {}).get("version", "")
            _info(f"info: Cluster is already at the latest available version {version}", api,
                  output)  # fmt: skip
            return None
        desired, risk = found
    else:
        desired = requested_release(cv, ask.to, ask.image, ask.explicit, allow)
        risk = bypassed_risk(cv, desired)
    if risk is not None:
        _warn(f"with --allow-not-recommended you have accepted the risks with "
              f"{desired['version']} and bypassed Recommended={risk.get('status', '')} "
              f"{risk.get('reason', '')}: {risk.get('message', '')}")  # fmt: skip
    if ask.image and not desired["version"]:  # taken by --allow-explicit-upgrade alone
        _warn("The requested upgrade image is not one of the available updates. You have used "
              "--allow-explicit-upgrade for the update to proceed anyway")  # fmt: skip
    if ask.force:
        _warn(FORCE_WARNING)
    problem = check_for_upgrade(cv)
    if problem is not None and not (ask.with_warnings or ask.force):
        raise InputError(problem, hint="If you want to upgrade anyway, use "
                         "--allow-upgrade-with-warnings")  # fmt: skip
    if problem is not None and ask.with_warnings:
        _warn(f"--allow-upgrade-with-warnings is bypassing: {problem}")
    request_update(api, desired, ask.force)
    return desired


# openshift/oc pkg/cli/admin/upgrade/upgrade.go, printed when --force is set.
FORCE_WARNING = (
    "--force overrides cluster verification of your supplied release image and waives any "
    "update precondition failures. Only use this if you are testing unsigned release images "
    "or you are working around a known bug in the cluster-version operator and you have "
    "verified the authenticity of the provided image yourself."
)


def _info(text: str, api: Backend, output: Format) -> None:
    """What oc prints on stdout when nothing (more) is requested; as data with -o json."""
    if output.data:
        cv = api.get("ClusterVersion", "version") or {}
        print_json({"desiredUpdate": (cv.get("spec") or {}).get("desiredUpdate"), "message": text})
    else:
        stdout.print(text, highlight=False, markup=False)


def _warn(text: str) -> None:
    sys.stderr.write(f"warning: {text}\n")


def channel_command(
    cluster: str | None, channel: str, allow_explicit: bool, kubeconfig: Path | None,
    context: str | None, output: Format,
) -> None:  # fmt: skip
    """`upgrade channel`: set or clear spec.channel as `oc adm upgrade channel` does, on a
    cluster through its kubeconfig or on a simulated OpenShift cluster."""
    if kubeconfig is not None or context is not None:
        text, warnings = set_channel(backend(kubeconfig, context), channel, allow_explicit)
    else:
        with opened(cluster) as (_, store, spec):
            if spec.platform in ("gdc", "kubernetes"):
                raise InputError("`upgrade channel` applies to OpenShift clusters",
                                 field="ACTION")  # fmt: skip
            text, warnings = set_channel(SimCluster(store), channel, allow_explicit)
            store.commit()
    for warning in warnings:
        _warn(warning)
    if output.data:
        print_json({"channel": channel, "message": text})
    elif text:  # oc prints nothing when it set the channel
        stdout.print(text, highlight=False, markup=False)


def said(desired: dict[str, Any], output: Format, then: str) -> None:
    if output.data:
        print_json({"desiredUpdate": desired})
    else:
        stdout.print(f"Requested update to {desired.get('version') or desired['image']}{then}",
                     highlight=False)  # fmt: skip


class UpgradeAction(StrEnum):
    status = "status"
    channel = "channel"


@user_errors
def upgrade_command(
    action: Annotated[
        UpgradeAction | None,
        typer.Argument(
            help="status: the update's progress as `oc adm upgrade status` shows it "
            "(control plane, nodes by pool, health). channel [CHANNEL]: set the update "
            "channel as `oc adm upgrade channel` does (none given: clear it)."
        ),
    ] = None,
    channel: Annotated[
        str | None, typer.Argument(help="channel: the channel to set.", show_default=False)
    ] = None,
    cluster: ClusterOpt = None,
    to: Annotated[
        str | None,
        typer.Option("--to", help="Update to this version (from the available updates)."),
    ] = None,
    to_image: Annotated[
        str | None, typer.Option("--to-image", help="Update to this release image.")
    ] = None,
    to_latest: Annotated[
        bool,
        typer.Option("--to-latest", help="Update to the highest available version."),
    ] = False,
    clear: Annotated[
        bool,
        typer.Option(
            "--clear", help="Cancel a requested update that has not started (no effect after)."
        ),
    ] = False,
    allow_explicit_upgrade: Annotated[
        bool,
        typer.Option(
            "--allow-explicit-upgrade", help="Allow --to-image, an update the graph does not offer."
        ),
    ] = False,
    include_not_recommended: Annotated[
        bool,
        typer.Option(
            "--include-not-recommended", help="Show, or allow --to, updates with known issues."
        ),
    ] = False,
    allow_not_recommended: Annotated[
        bool,
        typer.Option(
            "--allow-not-recommended",
            help="Allow --to or --to-latest to pick an update with known issues.",
        ),
    ] = False,
    allow_upgrade_with_warnings: Annotated[
        bool,
        typer.Option(
            "--allow-upgrade-with-warnings",
            help="Request an update while the cluster is updating, failing or invalid.",
        ),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Go on through failed verification and preconditions.")
    ] = False,
    allow_explicit_channel: Annotated[
        bool,
        typer.Option(
            "--allow-explicit-channel",
            help="channel: set a channel the current release does not list, or clear one it does.",
        ),
    ] = False,
    bmctl: BmctlOpt = None,
    leave_pools: Annotated[
        str | None,
        typer.Option("--leave-pools", help="gdc: worker pools to keep at their version (a,b)."),
    ] = None,
    nodepool: Annotated[
        str | None,
        typer.Option("--nodepool", help="gdc: upgrade only this worker pool (selective)."),
    ] = None,
    use_bootstrap: Annotated[
        bool,
        typer.Option(
            "--use-bootstrap",
            help="gdc: upgrade a self-managed cluster through a temporary bootstrap cluster.",
        ),
    ] = False,
    releases: ReleasesOpt = None,
    available: Annotated[
        str | None,
        typer.Option(
            "--available",
            help="kubernetes: releases steps may land on, "
            "comma-separated (the target is always one).",
        ),
    ] = None,
    policy: Annotated[
        str,
        typer.Option(
            "--policy", help="kubernetes: the skew policy (auto, k8s-n2, k8s-n3, kubeadm-X.Y)."
        ),
    ] = "auto",
    kubeadm: Annotated[
        str | None,
        typer.Option(
            "--kubeadm", help="kubernetes: the kubeadm version used (default: the target's)."
        ),
    ] = None,
    allow_experimental: Annotated[
        bool,
        typer.Option(
            "--allow-experimental-upgrades", help="kubernetes: kubeadm's, for pre-releases."
        ),
    ] = False,
    allow_rcs: Annotated[
        bool,
        typer.Option("--allow-release-candidate-upgrades", help="kubernetes: kubeadm's, for rcs."),
    ] = False,
    details: Annotated[
        Details,
        typer.Option(
            "--details",
            help="status: show every node, the updating operators, the "
            "health insights' descriptions, or all of them.",
        ),
    ] = Details.none,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Show the cluster's update status like `oc adm upgrade`, or request an update;
    `upgrade status` shows its progress like `oc adm upgrade status`.

    A distributed-cloud cluster's upgrade is checked against the skew rules of every
    simulated distributed-cloud cluster first and refused, with the rule, the objects and
    the fix, before anything changes.

    **Examples**

    ```
    kupgrade upgrade --cluster demo --include-not-recommended
    kupgrade upgrade --cluster demo --to 4.14.27
    kupgrade upgrade --cluster demo --to-latest
    kupgrade upgrade --cluster demo --clear
    kupgrade upgrade --cluster demo --to-image quay.io/ocp/release@sha256:<64 hex> \\
        --allow-explicit-upgrade
    kupgrade upgrade --cluster admin --to 1.29.100-gke.251 --use-bootstrap
    kupgrade upgrade --cluster user1 --to 1.29.100-gke.251 --leave-pools worker
    kupgrade upgrade --cluster user1 --nodepool worker --to 1.28.500-gke.120 -o json
    kupgrade upgrade --kubeconfig ~/.kube/config --to 4.14.27
    kupgrade upgrade --cluster k8s --to v1.31.2 --available v1.30.9,v1.31.2
    kupgrade upgrade channel stable-4.14 --cluster demo
    kupgrade upgrade status --cluster demo --details nodes
    kupgrade upgrade status --context prod -o json
    ```
    """
    ask = Ask(to, to_image, to_latest, clear, allow_explicit_upgrade, include_not_recommended,
              allow_not_recommended, allow_upgrade_with_warnings, force)  # fmt: skip
    if channel is not None and action is not UpgradeAction.channel:
        raise InputError(f"unexpected argument {channel!r}", field="ACTION",
                         hint="`upgrade channel CHANNEL` sets the channel")  # fmt: skip
    if allow_explicit_channel and action is not UpgradeAction.channel:
        raise InputError("--allow-explicit-channel goes with `upgrade channel`",
                         field="--allow-explicit-channel")  # fmt: skip
    if action is UpgradeAction.channel:
        if ask.target or clear:
            raise InputError("`upgrade channel` sets the channel: it takes no --to, --to-image, "
                             "--to-latest or --clear", field="--to")  # fmt: skip
        channel_command(cluster, channel or "", allow_explicit_channel, kubeconfig, context,
                        output)  # fmt: skip
        return
    if action is UpgradeAction.status:
        if ask.target or clear:
            raise InputError("`upgrade status` shows the update: it takes no --to, --to-image, "
                             "--to-latest or --clear", field="--to")  # fmt: skip
        if kubeconfig is not None or context is not None:
            show_status(backend(kubeconfig, context), details, output)
            return
        with opened(cluster) as (_, store, spec):
            if spec.platform in ("gdc", "kubernetes"):
                (gdc_status if spec.platform == "gdc" else kube_status)(store, output)
                return
            show_status(SimCluster(store), details, output)
        return
    ask.check()
    gdc_only = {"--bmctl": bmctl, "--leave-pools": leave_pools, "--nodepool": nodepool,
                "--use-bootstrap": use_bootstrap, "--releases": releases}  # fmt: skip
    if kubeconfig is not None:
        live_upgrade(backend(kubeconfig, context), ask, output)
        return
    kube_only = {"--kubeadm": kubeadm, "--allow-experimental-upgrades": allow_experimental,
                 "--allow-release-candidate-upgrades": allow_rcs}  # fmt: skip
    with opened(cluster) as (_, store, spec):
        fleet = rehearsing(store) if ask.target or clear else None
        if fleet is not None:
            raise InputError(f"cluster {store.meta('name')} is being upgraded by the rehearsal of "
                             f"fleet {fleet}", field="--to",
                             hint=f"let it finish: `kupgrade fleet rehearse --fleet {fleet}`")  # fmt: skip
        wrong = [flag for flag, value in kube_only.items() if value]
        if wrong and spec.platform != "kubernetes":
            raise InputError(f"{wrong[0]} applies to Kubernetes clusters", field=wrong[0])
        oc_only = {"--to-latest": to_latest, "--clear": clear,
                   "--allow-not-recommended": allow_not_recommended,
                   "--allow-upgrade-with-warnings": allow_upgrade_with_warnings}  # fmt: skip
        wrong = [flag for flag, value in oc_only.items() if value]
        if wrong and spec.platform in ("gdc", "kubernetes"):
            raise InputError(f"{wrong[0]} applies to OpenShift clusters", field=wrong[0],
                             hint="give the version with --to")  # fmt: skip
        if spec.platform == "kubernetes":
            if to_image:
                raise InputError("a Kubernetes cluster upgrades to a version", field="--to-image",
                                 hint="use --to VERSION")  # fmt: skip
            if to:
                tool = {"version": str(kube_field(kubeadm, "--kubeadm")) if kubeadm else None,
                        "force": force, "allowExperimental": allow_experimental,
                        "allowRCs": allow_rcs}  # fmt: skip
                kube_upgrade(store, to, available, policy, output,
                             {k: val for k, val in tool.items() if val})  # fmt: skip
            else:
                kube_status(store, output)
            return
        if spec.platform == "gdc":
            if to_image:
                raise InputError(
                    "a distributed-cloud cluster upgrades to a version",
                    field="--to-image",
                    hint="use --to VERSION",
                )
            if not to:
                gdc_status(store, output)
                return
            left = [p.strip() for p in (leave_pools or "").split(",") if p.strip()]
            gdc_upgrade(
                store, to, bmctl=bmctl, nodepool=nodepool, leave_pools=left,
                use_bootstrap=use_bootstrap, releases=releases, output=output,
            )  # fmt: skip
            return
        given = [flag for flag, value in gdc_only.items() if value]
        if given:
            raise InputError(f"{given[0]} applies to distributed-cloud clusters", field=given[0])
        for note in refresh_availability(store, spec):
            stderr.print(f"[yellow]note:[/] {note}", highlight=False)
        cv = store.get("ClusterVersion", "version")
        assert cv is not None
        desired = status_or_request(SimCluster(store), cv, ask, output)
        store.commit()  # a request, or a cleared one
        if desired is None:
            return
    said(desired, output, "; run `kupgrade controller run` to carry it out.")


# --- controller run ------------------------------------------------------------------------


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
    ```
    """
    if kubeconfig is not None or context is not None:
        if cluster is not None or api or console:
            raise InputError(
                "--kubeconfig names the cluster: --cluster, --api and --console do not go with it",
                field="--kubeconfig",
                hint="serve the cluster with `kupgrade cluster serve-api NAME --no-controllers`",
            )
        _run_remote(kubeconfig, context, until, output)
        return
    served = Served(port if api or console else None, console_port if console else None,
                    console_fd)  # fmt: skip
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

    def args(self) -> list[str]:
        out = ["--api", "--port", str(self.api)] if self.api is not None else []
        if self.console is not None:
            out += ["--console", "--console-port", str(self.console)]
        return out + (["--console-fd", str(self.console_fd)] if self.console_fd is not None else [])


def _supervise(
    cluster: str | None, until: Until, speed: float, output: Format, served: Served
) -> None:
    """The parent: hold the cluster's lock, start a child, start another after a handoff
    (on the console's port of the first, so that an open page carries on)."""
    listener = listening(served.console) if served.console is not None else None
    if listener is not None:
        served = Served(served.api, listener.getsockname()[1], listener.fileno())
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
            done = subprocess.run(
                args,
                stdout=subprocess.PIPE,
                check=False,
                env=lock.child_env(),
                pass_fds=fds,
                preexec_fn=die_with_parent(),
            )
            if done.returncode != HANDOFF_EXIT:
                sys.stdout.write(done.stdout.decode())
                raise typer.Exit(done.returncode)
            if output is Format.text:
                stderr.print(
                    "the version controller handed over to its new version; a new process carries on",
                    highlight=False,
                )
    finally:
        if listener is not None:
            listener.close()
        lock.release()


@contextmanager
def maybe_api(runner: Loop[Local], root: Path, served: Served) -> Iterator[LiveServer | None]:
    """The cluster's Kubernetes API while the controllers run, and the console reading
    it, when asked for."""
    if served.api is None:
        yield None
        return
    with (
        APIServer(
            runner.transport.sim,
            root,
            root.name,
            version_info(runner.transport.store),
            served.api,
            clock=runner,
        ) as server,
        maybe_console(server.kubeconfig, served.console, served.console_fd) as live,
    ):
        stderr.print(
            f"API of cluster {root.name} at https://127.0.0.1:{server.port}; "
            f"export KUBECONFIG={server.kubeconfig}",
            highlight=False,
        )
        if live is not None:
            stderr.print(f"console of cluster {root.name}: {live.url}", highlight=False)
        yield live


@contextmanager
def maybe_console(
    kubeconfig: Path, port: int | None, fd: int | None = None
) -> Iterator[LiveServer | None]:
    if port is None:
        yield None
        return
    with cluster_console(kubeconfig, port, fd) as live:
        yield live


def _run_remote(kubeconfig: Path | None, context: str | None, until: Until, output: Format) -> None:
    """The controllers in this process, acting over a served cluster's API."""
    api = InformedBackend(kubeconfig, context)
    try:
        runner = served_loop(api)
        started, wall = api.now(), time.monotonic()
        outcome = runner.run(until.value)
        _finish(runner, outcome, (started, wall), output, f"the cluster behind {api.where}")
    finally:
        api.close()


def _finish(
    runner: Loop[Any], outcome: Outcome, since: tuple[float, float], output: Format, what: str
) -> None:
    """The run's report; a cluster left failing is said, with exit 1 (SPEC C3-C7: the
    controller keeps retrying; this run stops and says why)."""
    started, wall = since
    print_report(runner.report(outcome, started, time.monotonic() - wall), started, output)
    problem = runner.failing()
    if problem is not None:
        stderr.print(
            f"error: {what} is left failing: {' '.join(problem.split())}; " + runner.retry_hint,
            highlight=False,
            markup=False,
        )
        raise typer.Exit(1)


def _run_child(
    cluster: str | None, until: Until, speed: float, output: Format, served: Served
) -> None:
    """The controllers' process: one run of the loop until done, handoff or failure."""
    with opened(cluster) as (root, store, spec):
        runner = local_loop(root, store, spec)
        started = float(store.meta("run_started") or runner.now())
        store.set_meta("run_started", started)
        wall = time.monotonic()
        with (
            maybe_api(runner, root, served) as live,
            live_view(runner, speed, runner.now(), wall) as on_step,
        ):
            outcome = runner.run(until.value, on_step=on_step, restart_on_handoff=False)
            if live is not None and outcome.reason != "handoff":
                live.end(f"the run ended ({outcome.reason}); this is the state it left")
        if outcome.reason == "handoff":
            raise typer.Exit(HANDOFF_EXIT)
        store.set_meta("run_started", None)
        store.commit()
        _finish(runner, outcome, (started, wall), output, f"cluster {root.name}")


# --- get -------------------------------------------------------------------------------
