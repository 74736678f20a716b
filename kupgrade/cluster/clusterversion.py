"""ClusterVersion client verbs, once for the CLI, the demo, the benches and the tests:
request an update (`oc adm upgrade --to`, `--to-image`) and find the release a request
names in availableUpdates or conditionalUpdates, with `oc adm upgrade`'s guards."""

from __future__ import annotations

import copy
from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import find
from kupgrade.cluster.upgrade_text import sort_versions_desc
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
            hint="pass --allow-not-recommended to accept the risks",
        )
    offered = ", ".join(u["version"] for u in status.get("availableUpdates") or []) or "none"
    raise InputError(
        f"the update {to} is not one of the available updates: {offered}",
        field="--to",
        hint="see `kupgrade upgrade`, or use --to-image with --allow-explicit-upgrade",
    )


def latest_release(
    cv: dict[str, Any], allow_not_recommended: bool
) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """`oc adm upgrade --to-latest`: the available update with the highest version (with
    `--allow-not-recommended`, conditional updates that are not recommended count too),
    and the Recommended condition that choosing it bypasses; None when there is none.

    openshift/oc pkg/cli/admin/upgrade/upgrade.go Run: possibleUpgradeTargets are the
    availableUpdates, then the conditional updates whose Recommended is not True when
    --allow-not-recommended is given, sorted by sortReleasesBySemanticVersions."""
    status = cv.get("status") or {}
    targets: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
        (dict(u), None) for u in status.get("availableUpdates") or []
    ]
    if allow_not_recommended:
        for update in status.get("conditionalUpdates") or []:
            recommended = find(update.get("conditions"), "Recommended")
            if recommended is not None and recommended.get("status") != "True":
                targets.append((dict(update.get("release") or {}), dict(recommended)))
    if not targets:
        return None
    rank = {
        v: i
        for i, v in enumerate(sort_versions_desc([str(t.get("version", "")) for t, _ in targets]))
    }
    release, bypassed = min(targets, key=lambda pair: rank[str(pair[0].get("version", ""))])
    return {"version": release.get("version", ""), "image": release["image"]}, bypassed


def bypassed_risk(cv: dict[str, Any], version: str) -> dict[str, Any] | None:
    """The Recommended condition a request for `version` accepts: set when the version is
    offered only as a conditional update that is not recommended."""
    status = cv.get("status") or {}
    if any(u.get("version") == version for u in status.get("availableUpdates") or []):
        return None
    for update in status.get("conditionalUpdates") or []:
        if (update.get("release") or {}).get("version") == version:
            recommended = find(update.get("conditions"), "Recommended")
            if recommended is not None and recommended.get("status") != "True":
                return dict(recommended)
    return None


def clear_request(api: Backend) -> str:
    """`oc adm upgrade --clear`: drop spec.desiredUpdate and say what that did. The caller
    commits (a store).

    openshift/oc pkg/cli/admin/upgrade/upgrade.go Run, case o.Clear: with no request
    "info: No update in progress"; a request the cluster already runs (status.desired,
    compared by image, else by version: updateIsEquivalent) is "Cleared the update field,
    still at ..."; any other is "Cancelled requested upgrade to ...". Once an update has
    started status.desired is its target, so clearing changes nothing, as oc warns."""
    found = api.get("ClusterVersion", "version")
    if found is None:
        raise InputError("the cluster has no ClusterVersion", field="clusterversion/version")
    original = (found.get("spec") or {}).get("desiredUpdate")
    if not original:
        return "info: No update in progress"
    cv = copy.deepcopy(found)
    # Null, as oc sends it: a merge patch (a real API server, KubeBackend) removes the
    # field, and a store keeps a null every reader takes as no request. oc keeps
    # desiredUpdate.acceptRisks (a feature-gated field) when it clears; the version
    # controller here does not read it, and a desiredUpdate left with neither a version
    # nor an image is one it would report Invalid, so the whole field goes.
    cv["spec"]["desiredUpdate"] = None
    api.write(cv)
    desired = (cv.get("status") or {}).get("desired") or {}
    if _equivalent(original, desired):
        text = f"Cleared the update field, still at {_named(desired)}"
    else:
        text = f"Cancelled requested upgrade to {_named(original)}"
    api.record("clusterversion/version", "DesiredUpdate", text)
    return text


def _equivalent(update: dict[str, Any], release: dict[str, Any]) -> bool:
    """oc's updateIsEquivalent: the same image when both name one, else the same version."""
    if update.get("image") and release.get("image"):
        return bool(update["image"] == release["image"])
    if update.get("version") and release.get("version"):
        return bool(update["version"] == release["version"])
    return False


def _named(release: dict[str, Any]) -> str:
    """oc's updateVersionString / releaseVersionString: the version, else the image."""
    return str(release.get("version") or release.get("image") or "<unknown>")
