"""ClusterVersion client verbs, once for the CLI, the demo, the benches and the tests:
request an update (`oc adm upgrade --to`, `--to-image`) and find the release a request
names in availableUpdates or conditionalUpdates, with `oc adm upgrade`'s guards."""

from __future__ import annotations

import copy
from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import find
from kupgrade.errors import InputError
from kupgrade.release.assemble import PINNED


def request_update(api: Backend, desired: dict[str, Any], force: bool) -> None:
    """Set spec.desiredUpdate as `oc adm upgrade --to` does; the controller does the rest.
    The caller commits (a store) or has already written (an API server)."""
    found = api.get("ClusterVersion", "version")
    if found is None:
        raise InputError("the cluster has no ClusterVersion", field="clusterversion/version")
    cv = copy.deepcopy(found)
    cv["spec"]["desiredUpdate"] = {**desired, "force": force}
    api.write(cv)
    api.record(
        "clusterversion/version",
        "DesiredUpdate",
        f"update to {desired.get('version') or desired['image']} requested",
    )


def requested_release(
    cv: dict[str, Any], to: str | None, image: str | None, explicit: bool, not_recommended: bool
) -> dict[str, Any]:
    """The release `--to`/`--to-image` names, with the guards of `oc adm upgrade`."""
    status = cv["status"]
    if image:
        if not PINNED.match(image):
            raise InputError(
                f"{image!r} is not pinned by digest (registry/repository@sha256:<64 hex>)",
                field="--to-image",
                rule="SPEC C3",
            )
        if not explicit:
            raise InputError(
                "--to-image names a release the update graph may not offer",
                field="--to-image",
                hint="pass --allow-explicit-upgrade to request it anyway",
            )
        return {"version": "", "image": image}
    for update in status.get("availableUpdates") or []:
        if update.get("version") == to:
            return {"version": to, "image": update["image"]}
    for update in status.get("conditionalUpdates") or []:
        release = update.get("release") or {}
        if release.get("version") != to:
            continue
        recommended = find(update.get("conditions"), "Recommended") or {}
        if recommended.get("status") == "True" or not_recommended:
            return {"version": to, "image": release["image"]}
        raise InputError(
            f"the update {to} is not one of the recommended updates, but is available as a conditional update. "
            f"Reason: {recommended.get('reason', '')}. Message: {recommended.get('message', '')}",
            field="--to",
            hint="pass --include-not-recommended to accept the risks",
        )
    offered = ", ".join(u["version"] for u in status.get("availableUpdates") or []) or "none"
    raise InputError(
        f"the update {to} is not one of the available updates: {offered}",
        field="--to",
        hint="see `kupgrade upgrade`, or use --to-image with --allow-explicit-upgrade",
    )
