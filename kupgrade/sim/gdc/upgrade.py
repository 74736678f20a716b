"""`kupgrade upgrade` on a simulated distributed-cloud cluster: its versions and the stages
of its upgrade, or what `bmctl upgrade cluster` checks before anything changes (the skew
rules of the whole fleet of simulated clusters, SPEC G2-G4, X4) and then the request the
upgrade controller carries out."""

from __future__ import annotations

from typing import Any

import msgspec

from kupgrade.cluster.gdc import cluster_columns
from kupgrade.controllers.gdc.controller import GdcController
from kupgrade.controllers.gdc.request import (
    GdcUpgrade,
    request_upgrade,
    the_cluster,
    upgrade_record,
)
from kupgrade.errors import InputError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.gdc.fleet import gdc_fleet
from kupgrade.sim.platform import Said, UpgradeAsk
from kupgrade.sim.store import Store
from kupgrade.skew.fleet import load_history
from kupgrade.skew.gdc import Request, judge_request
from kupgrade.skew.verdict import Verdict


def status(store: Store) -> Said:
    """The cluster's versions and the stages of its upgrade, as far as they got."""
    api = SimCluster(store)
    cluster = the_cluster(api)
    record = upgrade_record(api)
    doc: dict[str, Any] = {
        "cluster": cluster["metadata"]["name"],
        **cluster_columns(cluster),
        "upgrade": _upgrade(record),
        "stages": [
            {"stage": row.label.removeprefix("stage "), "done": row.done, "of": row.total}
            for row in GdcController(api).progress()
        ],
    }
    lines = [
        f"{key}: {doc[key]}" for key in ("ABM VERSION", "DESIRED ABM VERSION", "CLUSTER STATE")
    ]
    if record is not None and record.failed:
        lines.append(f"upgrade to {record.target} stopped: {record.failed}")
    lines += [f"  {row['stage']}: {row['done']}/{row['of']}" for row in doc["stages"]]
    return Said(doc=doc, lines=lines)


def _upgrade(record: GdcUpgrade | None) -> dict[str, Any]:
    """The upgrade's target, and whether it completed or why it stopped, once it has."""
    if record is None:
        return {}
    said: dict[str, Any] = {"target": record.target}
    if record.completed:
        said["completed"] = True
    if record.failed:
        said["failed"] = record.failed
    return said


def request(store: Store, ask: UpgradeAsk) -> Said:
    """Refuse with the rule, objects and fix when the fleet's skew rules would break
    (SPEC G2-G4, X4); otherwise record the upgrade for `controller run`."""
    api = SimCluster(store)
    cluster = the_cluster(api)
    _check(cluster, ask)
    fleet = gdc_fleet(load_history(ask.releases) if ask.releases else None)
    target = fleet.history.field(str(ask.to), "--to")
    tool = fleet.history.field(ask.bmctl, "--bmctl") if ask.bmctl else None
    wanted = Request(
        cluster["metadata"]["name"],
        target,
        pool=ask.nodepool,
        bmctl=tool,
        leave_pools=ask.leave_pools,
    )
    verdict = judge_request(fleet, wanted)
    if verdict.rules:
        return refusal(verdict, wanted.object, str(target))
    warnings = [f"warning: {f.id} {f.message}; {f.fix}" for f in verdict.findings]
    recorded = request_upgrade(
        api,
        str(target),
        bmctl=str(tool or target),
        pool=ask.nodepool,
        leave_pools=list(ask.leave_pools),
        method="bootstrap" if ask.use_bootstrap else "in-place",
    )
    store.commit()
    return Said(
        doc={"verdict": verdict.to_json(), "request": msgspec.to_builtins(recorded)},
        lines=[
            f"Requested upgrade of {wanted.object} to {target}; run `kupgrade controller "
            "run` to carry it out."
        ],
        errors=warnings,
    )


def _check(cluster: dict[str, Any], ask: UpgradeAsk) -> None:
    if ask.use_bootstrap and cluster["spec"]["type"] == "user":
        raise InputError(
            "--use-bootstrap applies to admin, hybrid and standalone clusters",
            field="--use-bootstrap",
            hint="a user cluster is upgraded by its management cluster",
        )
    if ask.nodepool and (ask.leave_pools or ask.bmctl or ask.use_bootstrap):
        raise InputError(
            "--bmctl, --leave-pools and --use-bootstrap apply to cluster upgrades",
            field="--nodepool",
        )


def refusal(verdict: Verdict, obj: str, target: str) -> Said:
    """The refusal as `skew check-step` words it; nothing was changed (exit 1)."""
    errors = [f"refused: {obj} -> {target}; nothing was changed"]
    for f in verdict.findings:
        errors += [
            f"  {f.id}  {', '.join([f.object, *f.related])}: {f.message}",
            f"      fix: {f.fix}",
        ]
    errors.append(f"(`kupgrade explain {verdict.findings[0].id}` says what a rule means)")
    return Said(doc={"verdict": verdict.to_json(), "changed": False}, errors=errors, exit=1)
