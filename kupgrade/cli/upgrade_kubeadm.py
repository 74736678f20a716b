"""`kupgrade upgrade plan` (kubeadm's `upgrade plan`) and `kupgrade upgrade --to V
--dry-run` (kubeadm's `upgrade apply --dry-run`) on a plain Kubernetes cluster, simulated
or live; both only read the cluster. Any other platform is refused in one line that
names the command it has instead."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from kupgrade.cli.live import backend
from kupgrade.cli.output import Format, print_json, stderr
from kupgrade.cluster.backend import Backend
from kupgrade.errors import InputError, VersionError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.homes import opened
from kupgrade.sim.platform import UPGRADE_FLAGS, UpgradeAsk
from kupgrade.sim.platforms import platform_of, platform_serving
from kupgrade.versions import parse_kube
from kupgrade.views.kubeadm_compute import (
    Releases,
    available_upgrades,
    config_versions,
    default_kubeadm,
)
from kupgrade.views.kubeadm_dryrun import DryRunAsk, dry_run
from kupgrade.views.kubeadm_plan import render_plan, upgrade_plan

PLAN_FLAGS = frozenset({"available", "kubeadm", "allow_experimental", "allow_rcs"})
DRY_RUN_FLAGS = PLAN_FLAGS | {"to", "policy", "force"}
UP_TO_DATE = "Awesome, you're up-to-date! Enjoy!"
# What each other platform offers instead of kubeadm's plan, and of its dry run.
INSTEAD = {
    "openshift": "see its updates with `kupgrade upgrade --cluster {name}` (as `oc adm upgrade`)",
    "gdc": "upgrade it with `kupgrade upgrade --cluster {name} --to VERSION` (as `bmctl "
    "upgrade cluster`)",
}
REHEARSE = "rehearse the upgrade with `kupgrade upgrade --cluster {name} --to VERSION --preflight`"


def kubeadm_only(plan: bool, dry_run: bool, dump: bool, preflight: bool) -> None:
    """`upgrade plan` and --dry-run read a cluster, on their own."""
    what = "`upgrade plan`" if plan else "--dry-run"
    if dump:
        raise InputError(
            f"{what} reads a cluster, not a dump",
            field="--from",
            hint="import it with `kupgrade cluster import NAME --from ...`, then use --cluster NAME",
        )
    if preflight:
        raise InputError(
            f"{what} and --preflight are two ways to check an upgrade: choose one",
            field="--preflight",
        )


@contextmanager
def kubeadm_cluster(
    what: str, cluster: str | None, kubeconfig: Path | None, context: str | None
) -> Iterator[Backend]:
    """The cluster to read, refused unless it is a plain Kubernetes (kubeadm) one; a
    simulated cluster's store is opened and never committed."""
    if kubeconfig is not None or context is not None:
        api = backend(kubeconfig, context)
        _refuse(what, platform_serving(api).name, platform_serving(api).title, "CLUSTER")
        yield api
        return
    with opened(cluster) as (root, store, spec):
        platform = platform_of(spec)
        _refuse(what, platform.name, platform.title, root.name)
        yield SimCluster(store)


def _refuse(what: str, name: str, title: str, cluster: str) -> None:
    if name == "kubernetes":
        return
    hint = INSTEAD.get(name, REHEARSE) if what == "`upgrade plan`" else REHEARSE
    article = "an" if title[:1].upper() in "AEIOU" else "a"
    raise InputError(
        f"{what} is kubeadm's, for Kubernetes clusters; {cluster} is {article} {title} cluster",
        field="--cluster",
        hint=hint.format(name=cluster),
    )


def show_plan(
    cluster: str | None,
    ask: UpgradeAsk,
    kubeconfig: Path | None,
    context: str | None,
    output: Format,
) -> None:
    """`upgrade plan`: the upgrades kubeadm offers over the available releases, as
    `kubeadm upgrade plan` prints them (-o json: its UpgradePlan document)."""
    _only(ask, PLAN_FLAGS, "`upgrade plan`")
    releases = Releases.of(ask.available)
    with kubeadm_cluster("`upgrade plan`", cluster, kubeconfig, context) as api:
        kubeadm = ask.kubeadm or default_kubeadm(api, releases)
        _version(kubeadm, "--kubeadm")
        computed = available_upgrades(api, releases, kubeadm, ask.allow_experimental, ask.allow_rcs)
        configs = config_versions(api)
    for warning in computed.warnings:
        stderr.print(f"[yellow]warning:[/] {warning}", highlight=False, markup=True)
    plan = upgrade_plan(computed.upgrades, configs)
    if output.data:
        print_json(plan)
        return
    sys.stdout.write("".join(line + "\n" for line in computed.said) + "\n")
    sys.stdout.write(render_plan(plan) if computed.upgrades else UP_TO_DATE + "\n")


def _version(text: str, flag: str) -> None:
    try:
        parse_kube(text)
    except VersionError as exc:
        raise InputError(exc.message, field=flag) from None


def _only(ask: UpgradeAsk, allowed: frozenset[str], what: str) -> None:
    """Flags of the other platforms (or of the request alone) are refused by name."""
    extra = [UPGRADE_FLAGS[f] for f in ask.given() if f not in allowed]
    if extra:
        takes = ", ".join(UPGRADE_FLAGS[f] for f in UPGRADE_FLAGS if f in allowed)
        raise InputError(
            f"{what} takes no {', '.join(extra)}", field=extra[0], hint=f"it takes {takes}"
        )


def show_dry_run(
    cluster: str | None,
    ask: UpgradeAsk,
    kubeconfig: Path | None,
    context: str | None,
    output: Format,
) -> None:
    """`upgrade --to V --dry-run`: the plan and what kubeadm would change at each step;
    exit 1 when kubeadm's version policies would stop a step."""
    if not ask.to:
        raise InputError("--dry-run needs --to VERSION", field="--dry-run")
    _only(ask, DRY_RUN_FLAGS, "--dry-run")
    if ask.kubeadm:
        _version(ask.kubeadm, "--kubeadm")
    asked = DryRunAsk(
        to=ask.to,
        available=tuple(ask.available),
        policy=ask.policy or "auto",
        kubeadm=ask.kubeadm,
        force=ask.force,
        allow_experimental=ask.allow_experimental,
        allow_rcs=ask.allow_rcs,
    )
    with kubeadm_cluster("--dry-run", cluster, kubeconfig, context) as api:
        found = dry_run(api, asked)
    if output.data:
        print_json(found.to_json())
    else:
        sys.stdout.write("".join(line + "\n" for line in found.lines()))
    if found.blocked:
        raise typer.Exit(1)
