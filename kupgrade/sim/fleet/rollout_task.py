"""A rollout rehearsal as one task of an engine (sim/fleet/engines.py).

A rollout's stages, windows, soaks and gates tie every cluster of the fleet (a stage
starts when the one before it is done and its gate passed), so it is never cut into
parts: the whole rehearsal goes to one task, as bytes (sim/fleet/shipping.py), and
comes back as its report. The fleet itself is never changed, as in this process.
"""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kupgrade.plan.rollout_doc import Rollout
from kupgrade.sim.fleet.home import FLEET_DB
from kupgrade.sim.fleet.rehearsal import Rehearsal
from kupgrade.sim.fleet.rollouts import (
    RolloutRefusedError,
    begin,
    refused_report,
    rollout_report,
    settings_of,
)
from kupgrade.sim.fleet.shipping import Shipped, opened_members, pack, unpack
from kupgrade.sim.store import Store


@dataclass
class RolloutJob:
    name: str
    info: dict[str, Any]
    fleet: Shipped
    members: list[Shipped]
    rollout: Rollout
    file: str
    to: str | None


def rollout_job(
    root: Path,
    homes: dict[str, Path],
    info: dict[str, Any],
    rollout: Rollout,
    *,
    file: str,
    to: str | None,
) -> RolloutJob:
    """The fleet at `root` and its members (their homes) packed for a task."""
    return RolloutJob(
        root.name,
        info,
        pack(root.name, root, FLEET_DB),
        [pack(name, home) for name, home in sorted(homes.items())],
        rollout,
        file,
        to,
    )


def rehearse_rollout(job: RolloutJob) -> dict[str, Any]:
    """The rollout rehearsed on the shipped copy; its report (a task runs this)."""
    with tempfile.TemporaryDirectory(prefix="kupgrade-rollout-") as tmp, ExitStack() as stack:
        where = Path(tmp)
        fleet = Store(unpack(job.fleet, where / "fleet", FLEET_DB) / FLEET_DB)
        stack.callback(fleet.close)
        rehearsal = Rehearsal(fleet, opened_members(job.members, where, stack), job.info)
        try:
            begin(rehearsal, job.rollout, job.file, job.to, assume=True)
        except RolloutRefusedError as refused:
            settings = settings_of(rehearsal, job.rollout, job.to)
            return refused_report(rehearsal, job.rollout, job.name, settings.target, refused)
        rehearsal.run()
        return rollout_report(rehearsal, job.rollout, job.name)
