"""ClusterVersion client verbs, once for the CLI, the demo, the benches and the tests:
request an update (`oc adm upgrade --to`, `--to-image`) and find the release a request
names in availableUpdates or conditionalUpdates, with `oc adm upgrade`'s guards."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from kupgrade.cluster.backend import Backend
from kupgrade.cluster.conditions import find, reason_message
from kupgrade.errors import InputError
from kupgrade.release.assemble import PINNED
from kupgrade.versions import SemVer, sort_versions_desc


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


def architectures(cv: dict[str, Any], runtime: str = "amd64") -> tuple[str, str]:
    """(desired, current) architecture as the cluster-version operator reads them
    (pkg/cvo/availableupdates.go getDesiredArchitecture, getCurrentArchitecture): the
    current is `Multi` when the running payload is, else the single one it runs on
    (`runtime`); the desired is spec.desiredUpdate.architecture, else the current.
    `Multi` over a single current is the migration `upgrade --to-multi-arch` asks for."""
    desired = (cv.get("status") or {}).get("desired") or {}
    current = "Multi" if desired.get("architecture") == "Multi" else runtime
    wanted = ((cv.get("spec") or {}).get("desiredUpdate") or {}).get("architecture")
    return str(wanted or current), current


def requested_release(
    cv: dict[str, Any], to: str | None, image: str | None, explicit: bool, not_recommended: bool
) -> dict[str, Any]:
    """The release `--to`/`--to-image` names, as `oc adm upgrade` finds it, with its
    refusals in its words (openshift/oc pkg/cli/admin/upgrade/upgrade.go: Complete, then
    Run's targetMatch over availableUpdates, then over the conditional updates that are
    not recommended, then --allow-explicit-upgrade, then the errors of its switch).

    An image offered by the graph (the same pull spec, or the same digest) needs no
    --allow-explicit-upgrade, and the requested pull spec is kept; a release taken with
    --allow-explicit-upgrade has no version. One rule stricter than oc's on purpose: an
    image must be pinned by digest even with --force (SPEC C3 verifies signatures over the
    digest; oc lets a tag through with --force and a warning)."""
    if to and SemVer.try_parse(to) is None:
        raise InputError(
            f"--to must be a semantic version (e.g. 4.0.1 or 4.1.0-nightly-20181104): {to!r}",
            field="--to",
        )
    if image and not PINNED.match(image):
        raise InputError(
            f"{image!r} is not pinned by digest (registry/repository@sha256:<64 hex>)",
            field="--to-image",
            rule="SPEC C3",
        )
    status = cv["status"]
    targets: list[dict[str, Any]] = []  # oc's possibleUpgradeTargets
    for available in status.get("availableUpdates") or []:
        if _matches(available, to, image):
            return {"version": available.get("version", ""), "image": image or available["image"]}
        targets.append(available)
    for release, recommended in _not_recommended(status):
        if _matches(release, to, image):
            if not not_recommended:
                raise InputError(
                    f"the update {release.get('version', '')} is not one of the recommended "
                    "updates, but is available as a conditional update. To accept the "
                    f"Recommended={recommended.get('status', '')} risk and to proceed with "
                    "update use --allow-not-recommended.\n"
                    + "\n".join(reason_message(recommended)),
                    field="--to" if to else "--to-image",
                    rule="SPEC A4",
                )
            return {"version": release.get("version", ""), "image": release["image"]}
        if not_recommended:
            targets.append(release)
    if image and explicit:
        return {"version": "", "image": image}
    error = no_target(status, targets, image, not_recommended)
    assert error is not None  # only --to-latest is ever without an answer
    raise error


def _not_recommended(status: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(release, its Recommended condition) of each conditional update that is not
    recommended: the ones oc's Run looks at after availableUpdates (one whose condition
    is missing or True is skipped)."""
    for update in status.get("conditionalUpdates") or []:
        recommended = find(update.get("conditions"), "Recommended")
        if recommended is not None and recommended.get("status") != "True":
            yield update.get("release") or {}, recommended


def _matches(release: dict[str, Any], to: str | None, image: str | None) -> bool:
    """oc's targetMatch: the version asked, or the image asked by pull spec or digest."""
    if to and release.get("version") == to:
        return True
    if not image:
        return False
    offered, digest = str(release.get("image") or ""), image.partition("@")[2]
    return offered == image or (bool(digest) and offered.partition("@")[2] == digest)


def no_target(
    status: dict[str, Any],
    targets: list[dict[str, Any]],
    image: str | None,
    not_recommended: bool,
    *,
    latest: bool = False,
) -> InputError | None:
    """oc's answer when nothing matched, in the order of its switch; None for --to-latest
    with nothing to go to and nothing wrong (oc then says the cluster is at the latest)."""
    article = "an" if latest else "the"  # --to-latest has no target in mind
    then = (
        f"{'--allow-explicit-upgrade' if image else '--to-image'} to continue with {article} update"
    )
    field = "--to-latest" if latest else "--to-image" if image else "--to"
    retrieved = find(status.get("conditions"), "RetrievedUpdates")
    if retrieved is not None and retrieved.get("status") != "True":
        lines = "\n".join(reason_message(retrieved))
        return InputError(
            f"cannot refresh available updates:\n{lines}\n\nspecify {then}.", field=field
        )
    if not targets and not_recommended:
        return InputError(
            f"no recommended or conditional updates, specify {then} or wait for new updates "
            "to be available.",
            field=field,
        )
    if not targets and latest:
        return None
    if not targets:
        return InputError(
            f"no recommended updates, specify {then} or wait for new updates to be available.",
            field=field,
        )
    versions = sort_versions_desc([str(t.get("version", "")) for t in targets])
    return InputError(
        f"the update is not one of the possible targets: {', '.join(versions)}. specify {then}.",
        field=field,
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
        targets += [(dict(r), dict(c)) for r, c in _not_recommended(status)]
    if not targets:
        return None
    rank = {
        v: i
        for i, v in enumerate(sort_versions_desc([str(t.get("version", "")) for t, _ in targets]))
    }
    release, bypassed = min(targets, key=lambda pair: rank[str(pair[0].get("version", ""))])
    return {"version": release.get("version", ""), "image": release["image"]}, bypassed


def bypassed_risk(cv: dict[str, Any], desired: dict[str, Any]) -> dict[str, Any] | None:
    """The Recommended condition a request for `desired` accepts: set when the release is
    offered only as a conditional update that is not recommended (what oc warns about)."""
    status = cv.get("status") or {}
    version, image = desired.get("version") or None, desired.get("image") or None
    if any(_matches(u, version, image) for u in status.get("availableUpdates") or []):
        return None
    for release, recommended in _not_recommended(status):
        if _matches(release, version, image):
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


def set_channel(api: Backend, channel: str, allow_explicit: bool) -> tuple[str, list[str]]:
    """`oc adm upgrade channel [CHANNEL]`: set spec.channel (clear it when empty), checked
    against the channels the current release names (status.desired.channels). Returns
    what oc prints on stdout ("" when it prints nothing) and its warnings; refuses in its
    words. The caller commits (a store).

    openshift/oc pkg/cli/admin/upgrade/channel/channel.go Run, branch by branch."""
    found = api.get("ClusterVersion", "version")
    if found is None:
        raise InputError("the cluster has no ClusterVersion", field="clusterversion/version")
    current = str((found.get("spec") or {}).get("channel") or "")
    if channel == current:
        if not current:
            return "info: Cluster channel is already clear (no change)", []
        return f"info: Cluster is already in {current} (no change)", []
    desired = (found.get("status") or {}).get("desired") or {}
    known = [str(c) for c in desired.get("channels") or []]
    warnings: list[str] = []
    if known:
        if not channel and current in known and not allow_explicit:
            raise InputError(
                f'You are requesting to clear the update channel. The current channel "{current}" '
                "is one of the available channels, you must pass --allow-explicit-channel to "
                "continue",
                field="CHANNEL",
            )
        if channel and channel not in known:
            listed = ", ".join(known)
            if not allow_explicit:
                raise InputError(
                    f'the requested channel "{channel}" is not one of the available channels '
                    f"({listed}), you must pass --allow-explicit-channel to continue",
                    field="CHANNEL",
                )
            warnings.append(
                f'The requested channel "{channel}" is not one of the available channels '
                f"({listed}). You have used --allow-explicit-channel to proceed anyway. Setting "
                f'the update channel to "{channel}".'
            )
    elif channel:
        warnings.append(
            "No channels known to be compatible with the current version "
            f'"{desired.get("version", "")}"; unable to validate "{channel}". Setting the update '
            f'channel to "{channel}" anyway.'
        )
    if not channel:
        warnings.append(
            f'Clearing channel "{current}"; cluster will no longer request available update '
            "recommendations."
        )
    cv = copy.deepcopy(found)
    cv["spec"]["channel"] = channel
    api.write(cv)
    api.record("clusterversion/version", "Channel", f'update channel set to "{channel}"')
    return "", warnings
