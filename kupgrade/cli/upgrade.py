"""`kupgrade upgrade`: a cluster's update status or an update requested, its platform
answering (sim/upgrades.py); `upgrade status` as `oc adm upgrade status`, `upgrade
channel` as `oc adm upgrade channel`."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from kupgrade.cli.backends import CaOpt, MetricsOpt, PrometheusOpt, TimeOpt, TokenOpt
from kupgrade.cli.captured import FromOpt, NowOpt, captured, refuse_with_kubeconfig
from kupgrade.cli.live import ContextOpt, KubeconfigOpt, backend
from kupgrade.cli.output import ClusterOpt, Format, OutputOpt, print_json, stderr, user_errors
from kupgrade.cli.skew import BmctlOpt, ReleasesOpt
from kupgrade.cli.upgrade_kubeadm import kubeadm_only, show_dry_run, show_plan
from kupgrade.cli.upgrade_recommend import Where, check_flags, show_recommend
from kupgrade.cli.upgrade_status import Details, show_status
from kupgrade.cluster.upgrade_text import render_upgrade
from kupgrade.errors import InputError
from kupgrade.risks.backends import RiskSource
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.fleet.home import rehearsing
from kupgrade.sim.homes import opened, spec_at
from kupgrade.sim.openshift.multiarch import multi_arch_ask, multi_arch_on_sim, multi_arch_over_api
from kupgrade.sim.openshift.upgrade import channel as set_channel
from kupgrade.sim.platform import Said, UpgradeAsk
from kupgrade.sim.platforms import platform_of, platform_serving
from kupgrade.sim.profile import Spec
from kupgrade.sim.upgrades import upgrade_cluster, upgrade_over_api
from kupgrade.twin.importer import Source
from kupgrade.twin.preflight import parse_window, preflight, preflight_live
from kupgrade.views.status_capture import read_capture
from kupgrade.views.upgrade_recommend import Asked, accepted_names


class UpgradeAction(StrEnum):
    status = "status"
    channel = "channel"
    plan = "plan"
    recommend = "recommend"


def _flag(name: str, text: str) -> Any:
    return typer.Option(name, help=text)


ActionArg = Annotated[
    UpgradeAction | None,
    typer.Argument(
        help="status: the update's progress as `oc adm upgrade status` shows it "
        "(control plane, nodes by pool, health). channel [CHANNEL]: set the update "
        "channel as `oc adm upgrade channel` does (none given: clear it). plan: a "
        "Kubernetes cluster's upgrades as `kubeadm upgrade plan` shows them, over --available. "
        "recommend: the checks and updates `oc adm upgrade recommend` shows before an update."
    ),
]
ChannelArg = Annotated[
    str | None, typer.Argument(help="channel: the channel to set.", show_default=False)
]
ToOpt = Annotated[str | None, _flag("--to", "Update to this version (from the available updates).")]
ToImageOpt = Annotated[str | None, _flag("--to-image", "Update to this release image.")]
LatestOpt = Annotated[bool, _flag("--to-latest", "Update to the highest available version.")]
ClearOpt = Annotated[
    bool, _flag("--clear", "Cancel a requested update that has not started (no effect after).")
]
MultiArchOpt = Annotated[
    bool,
    _flag(
        "--to-multi-arch",
        "Move a single-architecture OpenShift cluster to the multi-architecture payload "
        "of its current version.",
    ),
]
ExplicitOpt = Annotated[
    bool, _flag("--allow-explicit-upgrade", "Allow --to-image, an update the graph does not offer.")
]
IncludeOpt = Annotated[
    bool, _flag("--include-not-recommended", "Show, or allow --to, updates with known issues.")
]
AllowOpt = Annotated[
    bool,
    _flag(
        "--allow-not-recommended", "Allow --to or --to-latest to pick an update with known issues."
    ),
]
WarningsOpt = Annotated[
    bool,
    _flag(
        "--allow-upgrade-with-warnings",
        "Request an update while the cluster is updating, failing or invalid.",
    ),
]
ForceOpt = Annotated[bool, _flag("--force", "Go on through failed verification and preconditions.")]
ExplicitChannelOpt = Annotated[
    bool,
    _flag(
        "--allow-explicit-channel",
        "channel: set a channel the current release does not list, or clear one it does.",
    ),
]
LeavePoolsOpt = Annotated[
    str | None, _flag("--leave-pools", "gdc: worker pools to keep at their version (a,b).")
]
NodepoolOpt = Annotated[
    str | None, _flag("--nodepool", "gdc: upgrade only this worker pool (selective).")
]
BootstrapOpt = Annotated[
    bool,
    _flag(
        "--use-bootstrap",
        "gdc: upgrade a self-managed cluster through a temporary bootstrap cluster.",
    ),
]
AvailableOpt = Annotated[
    str | None,
    _flag(
        "--available",
        "kubernetes: releases steps may land on, comma-separated (the target is always one).",
    ),
]
PolicyOpt = Annotated[
    str | None,
    _flag(
        "--policy", "kubernetes: the skew policy (auto, k8s-n2, k8s-n3, kubeadm-X.Y); default auto."
    ),
]
KubeadmOpt = Annotated[
    str | None,
    _flag(
        "--kubeadm",
        "kubernetes: the kubeadm version used (default: the target's; for `upgrade plan`, "
        "the newest available release at most one minor past the cluster's).",
    ),
]
ExperimentalOpt = Annotated[
    bool, _flag("--allow-experimental-upgrades", "kubernetes: kubeadm's, for pre-releases.")
]
RcsOpt = Annotated[
    bool, _flag("--allow-release-candidate-upgrades", "kubernetes: kubeadm's, for rcs.")
]
CaptureOpt = Annotated[
    Path | None,
    _flag(
        "--mock-clusterversion",
        "status: a captured cluster, NAME-cv.yaml, with NAME-co.yaml, "
        "-mcp.yaml, -mc.yaml and -node.yaml beside it (oc's own flag). recommend: "
        "NAME-cv.yaml, with NAME-alerts.json beside it when there is one.",
    ),
]
DryRunOpt = Annotated[
    bool,
    _flag(
        "--dry-run",
        "kubernetes, with --to: list what kubeadm would change at each step of the "
        "upgrade (as `kubeadm upgrade apply --dry-run`); nothing is changed.",
    ),
]
PreflightOpt = Annotated[
    bool,
    _flag(
        "--preflight",
        "With --to: check the cluster and rehearse the upgrade on copies of it, naming "
        "every blocker (exit 1 when one is found); the cluster is not changed.",
    ),
]
WindowOpt = Annotated[
    str | None, _flag("--window", "--preflight: the maintenance window the upgrade must fit (4h).")
]
AcceptOpt = Annotated[
    list[str] | None,
    _flag(
        "--accept",
        "--preflight: classes of blocker to report without failing (a,b): budget, downtime, "
        "operator-cap, admin-ack, removed-api, skew, paused-pool, degraded-operator, risk, "
        "window, stalled. recommend: names of issues you accept (a,b; repeatable); with "
        "--version any other issue exits 1.",
    ),
]
VersionOpt = Annotated[
    str | None, _flag("--version", "recommend: show the issues of updating to this release.")
]
OutdatedOpt = Annotated[
    bool,
    _flag(
        "--show-outdated-releases",
        "recommend: list every update, older ones too, one line each.",
    ),
]
QuietOpt = Annotated[
    bool, _flag("--quiet", "recommend, with --version: print only the unaccepted issues' names.")
]
RunsOpt = Annotated[
    int,
    typer.Option(
        "--runs",
        min=1,
        max=100,
        help="--preflight: how many rehearsals (seeds S, S+1, ...) the forecast's range spans.",
    ),
]
DetailsOpt = Annotated[
    Details,
    _flag(
        "--details",
        "status: show every node, the updating operators, the health insights' "
        "descriptions, or all of them.",
    ),
]


def _listed(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (text or "").split(",") if p.strip())


@user_errors
def upgrade_command(
    action: ActionArg = None,
    channel: ChannelArg = None,
    cluster: ClusterOpt = None,
    to: ToOpt = None,
    to_image: ToImageOpt = None,
    to_latest: LatestOpt = False,
    clear: ClearOpt = False,
    to_multi_arch: MultiArchOpt = False,
    allow_explicit_upgrade: ExplicitOpt = False,
    include_not_recommended: IncludeOpt = False,
    allow_not_recommended: AllowOpt = False,
    allow_upgrade_with_warnings: WarningsOpt = False,
    force: ForceOpt = False,
    allow_explicit_channel: ExplicitChannelOpt = False,
    bmctl: BmctlOpt = None,
    leave_pools: LeavePoolsOpt = None,
    nodepool: NodepoolOpt = None,
    use_bootstrap: BootstrapOpt = False,
    releases: ReleasesOpt = None,
    available: AvailableOpt = None,
    policy: PolicyOpt = None,
    kubeadm: KubeadmOpt = None,
    allow_experimental: ExperimentalOpt = False,
    allow_rcs: RcsOpt = False,
    details: DetailsOpt = Details.none,
    metrics: MetricsOpt = None,
    at: TimeOpt = None,
    prometheus: PrometheusOpt = None,
    token_file: TokenOpt = None,
    ca_file: CaOpt = None,
    preflight: PreflightOpt = False,
    dry_run: DryRunOpt = False,
    window: WindowOpt = None,
    accept: AcceptOpt = None,
    runs: RunsOpt = 3,
    version: VersionOpt = None,
    show_outdated_releases: OutdatedOpt = False,
    quiet: QuietOpt = False,
    mock_clusterversion: CaptureOpt = None,
    from_: FromOpt = None,
    now: NowOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Show the cluster's update status like `oc adm upgrade`, or request an update;
    `upgrade status` shows its progress like `oc adm upgrade status`.

    Each platform takes its own flags: an OpenShift cluster `oc adm upgrade`'s, a
    distributed-cloud cluster `bmctl upgrade`'s (its upgrade is checked against the skew
    rules of every simulated distributed-cloud cluster first, and refused with the rule,
    the objects and the fix before anything changes), a Kubernetes cluster kubeadm's and
    the planner's.

    **Examples**

    ```
    kupgrade upgrade --cluster demo --include-not-recommended
    kupgrade upgrade --cluster demo --to 4.14.27
    kupgrade upgrade --cluster demo --to-latest
    kupgrade upgrade --cluster prod --to 4.14.27 --preflight --window 4h --accept downtime
    kupgrade upgrade --kubeconfig ~/.kube/config --to 4.14.27 --preflight -o json
    kupgrade upgrade --cluster demo --clear
    kupgrade upgrade --cluster demo --to-multi-arch
    kupgrade upgrade --cluster demo --to-image quay.io/ocp/release@sha256:<64 hex> \\
        --allow-explicit-upgrade
    kupgrade upgrade --cluster admin --to 1.29.100-gke.251 --use-bootstrap
    kupgrade upgrade --cluster user1 --to 1.29.100-gke.251 --leave-pools worker
    kupgrade upgrade --cluster user1 --nodepool worker --to 1.28.500-gke.120 -o json
    kupgrade upgrade --kubeconfig ~/.kube/config --to 4.14.27
    kupgrade upgrade plan --cluster k8s --available v1.30.9,v1.31.2
    kupgrade upgrade plan --cluster k8s --available v1.30.9,v1.31.2 -o json
    kupgrade upgrade --cluster k8s --to v1.31.2 --available v1.30.9,v1.31.2 --dry-run
    kupgrade upgrade --cluster k8s --to v1.31.2 --available v1.30.9,v1.31.2
    kupgrade upgrade channel stable-4.14 --cluster demo
    kupgrade upgrade status --cluster demo --details nodes
    kupgrade upgrade status --context prod -o json
    kupgrade upgrade status --mock-clusterversion captured/prod-cv.yaml --details all
    kupgrade upgrade status --from must-gather.local.5049/ --details all
    kupgrade upgrade --from must-gather.tar.gz --include-not-recommended
    kupgrade upgrade recommend --cluster demo
    kupgrade upgrade recommend --cluster demo --show-outdated-releases -o json
    kupgrade upgrade recommend --mock-clusterversion captured/prod-cv.yaml
    kupgrade upgrade recommend --from must-gather.local.5049/ -o json
    kupgrade upgrade recommend --mock-clusterversion captured/monitoring-cv.yaml \\
        --version 4.16.32 --accept Failing,ClusterOperatorDown,PodDisruptionBudgetAtLimit
    ```
    """
    ask = UpgradeAsk(
        to,
        to_image,
        to_latest,
        clear,
        allow_explicit_upgrade,
        include_not_recommended,
        allow_not_recommended,
        allow_upgrade_with_warnings,
        force,
        bmctl,
        _listed(leave_pools),
        nodepool,
        use_bootstrap,
        releases,
        kubeadm,
        allow_experimental,
        allow_rcs,
        _listed(available),
        policy,
    )
    live = kubeconfig is not None or context is not None
    alerting = RiskSource(metrics, at, prometheus, token_file, ca_file)
    recommending = action is UpgradeAction.recommend
    check_flags(recommending, Asked(version, show_outdated_releases, quiet))
    if (metrics or prometheus) and action not in (UpgradeAction.status, UpgradeAction.recommend):
        raise InputError(
            "--metrics and --prometheus go with `upgrade status` and `upgrade recommend` "
            "(the cluster's alerts)",
            field="--metrics" if metrics else "--prometheus",
        )
    _check_action(action, channel, allow_explicit_channel, ask, mock_clusterversion)
    refuse_with_kubeconfig(from_, live)
    if to_multi_arch:  # oc adm upgrade --to-multi-arch (sim/openshift/multiarch.py)
        multi = multi_arch_ask(
            ask, action.value if action else None, bool(from_), preflight or dry_run
        )
        if live:
            api = backend(kubeconfig, context)
            _print(multi_arch_over_api(api, platform_serving(api), multi), output)
            return
        with opened(cluster) as (_, store, spec):
            said = multi_arch_on_sim(store, platform_of(spec), rehearsing(store), multi)
        _print(said, output)
        return
    if dry_run and action is not None:
        raise InputError(
            f"--dry-run goes with --to, not with `upgrade {action.value}`", field="--dry-run"
        )
    if action is UpgradeAction.plan or dry_run:
        kubeadm_only(action is UpgradeAction.plan, dry_run, bool(from_), preflight)
    if action is UpgradeAction.plan:
        show_plan(cluster, ask, kubeconfig, context, output)
    elif dry_run:
        show_dry_run(cluster, ask, kubeconfig, context, output)
    elif recommending:
        asked = Asked(version, show_outdated_releases, quiet, accepted_names(accept or []))
        where = Where(cluster, kubeconfig, context, mock_clusterversion, from_, now, alerting)
        show_recommend(where, asked, output)
    elif from_:
        _from_dump(action, ask, from_, now, details, output)
    elif action is UpgradeAction.channel:
        _channel(cluster, channel or "", allow_explicit_channel, kubeconfig, context, output)
    elif action is UpgradeAction.status and mock_clusterversion is not None:
        show_status(read_capture(mock_clusterversion), details, output, alerting)
    elif action is UpgradeAction.status:
        _status(cluster, details, kubeconfig, context, output, alerting)
    elif preflight:
        source = Source(kubeconfig=kubeconfig, context=context) if live else None
        asked_for = Rehearsals(window, _listed(",".join(accept or [])), runs)
        _preflight(cluster, ask, asked_for, source, output)
    elif live:
        _print(upgrade_over_api(backend(kubeconfig, context), ask), output)
    else:
        with opened(cluster) as (root, store, spec):
            said = upgrade_cluster(root, store, spec, ask)
        _print(said, output)


def _from_dump(
    action: UpgradeAction | None,
    ask: UpgradeAsk,
    paths: list[Path],
    now: str | None,
    details: Details,
    output: Format,
) -> None:
    """`upgrade status --from` and `upgrade --from`: a dump read as oc reads a cluster."""
    if action is UpgradeAction.channel or ask.target or ask.clear:
        raise InputError(
            "a dump is read, not changed",
            field="--from",
            hint="import it with `kupgrade cluster import NAME --from ...`, then rehearse the "
            "update with `upgrade --cluster NAME --to V --preflight`",
        )
    api = captured(paths, now, mock=True)
    if action is UpgradeAction.status:
        show_status(api, details, output)
        return
    cv = api.get("ClusterVersion", "version")
    if cv is None:
        raise InputError("the dump holds no ClusterVersion (it is not OpenShift's)", field="--from")
    out, err = render_upgrade(cv, ask.include_not_recommended)
    _print(Said(doc=cv, lines=out, errors=err), output)


@dataclass(frozen=True)
class Rehearsals:
    """What `--preflight` was asked: the window, the accepted classes, how many runs."""

    window: str | None
    accept: tuple[str, ...]
    runs: int


def _preflight(
    cluster: str | None, ask: UpgradeAsk, asked: Rehearsals, live: Source | None, output: Format
) -> None:
    """`upgrade --preflight`: the blockers and the forecast; exit 1 on a blocker. With
    --kubeconfig a temporary twin of the live cluster is rehearsed; it is only read."""
    if not ask.to:
        raise InputError("--preflight needs --to VERSION", field="--preflight")
    seconds = None if asked.window is None else parse_window(asked.window)
    accept, runs = frozenset(asked.accept), asked.runs
    if live is not None:
        found = preflight_live(live, ask, window=seconds, accept=accept, runs=runs)
    else:
        root, spec = spec_at(cluster)
        found = preflight(root, spec, ask, window=seconds, accept=accept, runs=runs)
    if output.data:
        print_json(found.to_json())
    else:
        sys.stdout.write("".join(line + "\n" for line in found.lines()))
    if found.blocked:
        raise typer.Exit(1)


def _check_action(
    action: UpgradeAction | None,
    channel: str | None,
    explicit: bool,
    ask: UpgradeAsk,
    capture: Path | None = None,
) -> None:
    """What goes with `upgrade channel` and `upgrade status`, and what does not."""
    if channel is not None and action is not UpgradeAction.channel:
        raise InputError(
            f"unexpected argument {channel!r}",
            field="ACTION",
            hint="`upgrade channel CHANNEL` sets the channel",
        )
    if capture and action not in (UpgradeAction.status, UpgradeAction.recommend):
        raise InputError(
            "--mock-clusterversion goes with `upgrade status` and `upgrade recommend`",
            field="--mock-clusterversion",
        )
    if explicit and action is not UpgradeAction.channel:
        raise InputError(
            "--allow-explicit-channel goes with `upgrade channel`", field="--allow-explicit-channel"
        )
    if action is not None and (ask.target or ask.clear):
        what = "sets the channel" if action is UpgradeAction.channel else "shows the update"
        raise InputError(
            f"`upgrade {action.value}` {what}: it takes no --to, --to-image, "
            "--to-latest or --clear",
            field="--to",
        )


def _channel(
    cluster: str | None,
    name: str,
    explicit: bool,
    kubeconfig: Path | None,
    context: str | None,
    output: Format,
) -> None:
    """`upgrade channel`: through a kubeconfig, or on a simulated cluster whose platform
    has channels."""
    if kubeconfig is not None or context is not None:
        _print(set_channel(backend(kubeconfig, context), name, explicit), output)
        return
    with opened(cluster) as (_, store, spec):
        if "upgrade channel" not in platform_of(spec).verbs:
            raise InputError(
                f"`upgrade channel` does not apply to {platform_of(spec).title} clusters",
                field="ACTION",
            )
        said = set_channel(SimCluster(store), name, explicit)
        store.commit()
    _print(said, output)


def _status(
    cluster: str | None,
    details: Details,
    kubeconfig: Path | None,
    context: str | None,
    output: Format,
    alerting: RiskSource | None = None,
) -> None:
    """`upgrade status`: `oc adm upgrade status` where the platform has it, otherwise the
    platform's own status (what `upgrade` without a target shows)."""
    if kubeconfig is not None or context is not None:
        show_status(backend(kubeconfig, context), details, output, alerting)
        return
    with opened(cluster) as (root, store, spec):
        if "upgrade status" in platform_of(spec).verbs:
            show_status(SimCluster(store), details, output, _sim_alerting(alerting, spec))
            return
        said = upgrade_cluster(root, store, spec, UpgradeAsk())
    _print(said, output)


def _sim_alerting(alerting: RiskSource | None, spec: Spec) -> RiskSource | None:
    """Where a simulated cluster's alerts are read: the flags, else the ALERTS series of
    the metrics snapshot its risks are evaluated on."""
    given = alerting is not None and (alerting.metrics or alerting.prometheus)
    if given or not spec.metrics:
        return alerting
    return RiskSource(metrics=Path(spec.metrics))


def _print(said: Said, output: Format) -> None:
    """A platform's answer: the document with -o json, or its lines; warnings and notes
    on standard error; exit 1 when it refused."""
    for note in said.notes:
        stderr.print(f"[yellow]note:[/] {note}", highlight=False)
    sys.stderr.write("".join(line + "\n" for line in said.errors))
    if output.data:
        print_json(said.doc)
    else:  # as the reference tools print it: never wrapped
        sys.stdout.write("".join(line + "\n" for line in said.lines))
    if said.exit:
        raise typer.Exit(said.exit)
