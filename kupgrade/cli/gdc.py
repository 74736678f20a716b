"""`kupgrade upgrade` on a simulated distributed-cloud cluster: what `bmctl upgrade
cluster` does before anything changes (the skew rules of the whole fleet), then the
request the upgrade controller carries out."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec
import typer

from kupgrade.cli.output import Format, print_json, stderr, stdout
from kupgrade.cluster.gdc import cluster_columns
from kupgrade.controllers.gdc.controller import GdcController
from kupgrade.controllers.gdc.request import STATE, request_upgrade, the_cluster
from kupgrade.errors import InputError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.gdc.fleet import gdc_fleet
from kupgrade.sim.homes import cluster_names, opened
from kupgrade.sim.profile import Gdc, Spec
from kupgrade.sim.store import Store
from kupgrade.skew.fleet import load_history
from kupgrade.skew.gdc import Request, judge_request
from kupgrade.skew.verdict import Verdict


def gdc_status(store: Store, output: Format) -> None:
    """The cluster's versions and the stages of its upgrade, as far as they got."""
    api = SimCluster(store)
    cluster = the_cluster(api)
    state = api.state(STATE) or {}
    doc = {
        "cluster": cluster["metadata"]["name"],
        **cluster_columns(cluster),
        "upgrade": {k: state[k] for k in ("target", "completed", "failed") if k in state},
        "stages": [
            {"stage": label.removeprefix("stage "), "done": done, "of": total}
            for label, done, total in GdcController(api).progress()
        ],
    }
    if output.data:
        print_json(doc)
        return
    for key in ("ABM VERSION", "DESIRED ABM VERSION", "CLUSTER STATE"):
        stdout.print(f"{key}: {doc[key]}", highlight=False)
    if state.get("failed"):
        stdout.print(f"upgrade to {state['target']} stopped: {state['failed']}", highlight=False)
    for row in doc["stages"]:
        stdout.print(f"  {row['stage']}: {row['done']}/{row['of']}", highlight=False)


def gdc_upgrade(
    store: Store,
    to: str,
    *,
    bmctl: str | None,
    nodepool: str | None,
    leave_pools: list[str],
    use_bootstrap: bool,
    releases: Path | None,
    output: Format,
) -> None:
    """Refuse with the rule, objects and fix when the fleet's skew rules would break
    (SPEC G2-G4, X4); otherwise record the upgrade for `controller run`."""
    api = SimCluster(store)
    cluster = the_cluster(api)
    name = cluster["metadata"]["name"]
    if use_bootstrap and cluster["spec"]["type"] == "user":
        raise InputError(
            "--use-bootstrap applies to admin, hybrid and standalone clusters",
            field="--use-bootstrap",
            hint="a user cluster is upgraded by its management cluster",
        )
    if nodepool and (leave_pools or bmctl or use_bootstrap):
        raise InputError(
            "--bmctl, --leave-pools and --use-bootstrap apply to cluster upgrades",
            field="--nodepool",
        )
    fleet = gdc_fleet(load_history(releases) if releases else None)
    target = fleet.history.field(to, "--to")
    tool = fleet.history.field(bmctl, "--bmctl") if bmctl else None
    request = Request(name, target, pool=nodepool, bmctl=tool, leave_pools=tuple(leave_pools))
    verdict = judge_request(fleet, request)
    if verdict.rules:
        refuse(verdict, request.object, str(target), output)
    for finding in verdict.findings:
        stderr.print(
            f"warning: {finding.id} {finding.message}; {finding.fix}", highlight=False, markup=False
        )
    recorded = request_upgrade(
        api, str(target), bmctl=str(tool or target), pool=nodepool, leave_pools=leave_pools,
        method="bootstrap" if use_bootstrap else "in-place",
    )  # fmt: skip
    store.commit()
    if output.data:
        print_json({"verdict": verdict.to_json(), "request": recorded})
    else:
        stdout.print(
            f"Requested upgrade of {request.object} to {target}; run `kupgrade controller run` "
            "to carry it out.",
            highlight=False,
        )


def refuse(verdict: Verdict, obj: str, target: str, output: Format) -> None:
    """Print the refusal as `skew check-step` does and exit 1; nothing was changed."""
    if output.data:
        print_json({"verdict": verdict.to_json(), "changed": False})
    else:
        sys.stderr.write(f"refused: {obj} -> {target}; nothing was changed\n")
        for f in verdict.findings:
            sys.stderr.write(
                f"  {f.id}  {', '.join([f.object, *f.related])}: {f.message}\n      fix: {f.fix}\n"
            )
        sys.stderr.write(f"(`kupgrade explain {verdict.findings[0].id}` says what a rule means)\n")
    raise typer.Exit(1)


def gdc_spec(spec: Spec, role: str | None, managed_by: str | None, *, version_given: bool) -> Spec:
    """`cluster create`'s --platform gdc, --role and --managed-by applied to the profile."""
    if spec.platform != "gdc":
        if role or managed_by:
            raise InputError("--role and --managed-by apply to --platform gdc", field="--role")
        return spec
    if not version_given:
        raise InputError(
            "a distributed-cloud cluster needs its version",
            field="--version",
            hint="pass --version, e.g. --version 1.28.500-gke.120",
        )
    gdc = spec.gdc or Gdc()
    if role is not None:
        gdc = msgspec.structs.replace(gdc, role=role)
    if managed_by is not None:
        gdc = msgspec.structs.replace(gdc, managed_by=managed_by)
    if gdc.managed_by is not None:
        _check_manager(gdc.managed_by)
    return msgspec.structs.replace(spec, gdc=gdc)


def _check_manager(name: str) -> None:
    if name not in cluster_names():
        raise InputError(
            f"no cluster named {name!r} to manage this one",
            field="--managed-by",
            hint=f"create it first: `kupgrade cluster create {name} --platform gdc --role admin`",
        )
    with opened(name) as (_, _store, spec):
        role = spec.gdc.role if spec.platform == "gdc" and spec.gdc else None
    if role not in ("admin", "hybrid"):
        raise InputError(
            f"cluster {name} is not a distributed-cloud admin or hybrid cluster",
            field="--managed-by",
            hint="a user cluster is managed by an admin or hybrid cluster",
        )
