"""`kupgrade upgrade` on an OpenShift cluster, as `oc adm upgrade` answers it (openshift/oc
pkg/cli/admin/upgrade/upgrade.go Complete and Run, their order and words): the status, or
spec.desiredUpdate cleared or set with its guards; and `upgrade channel` (channel.go).
The same answers on a simulated cluster and, through its API, on a real one."""

from __future__ import annotations

from typing import Any

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
from kupgrade.cluster.upgrade_text import check_for_upgrade, render_upgrade
from kupgrade.errors import InputError
from kupgrade.sim.platform import Said, UpgradeAsk

# openshift/oc pkg/cli/admin/upgrade/upgrade.go, printed when --force is set.
FORCE_WARNING = (
    "--force overrides cluster verification of your supplied release image and waives any "
    "update precondition failures. Only use this if you are testing unsigned release images "
    "or you are working around a known bug in the cluster-version operator and you have "
    "verified the authenticity of the provided image yourself."
)


def check_flags(ask: UpgradeAsk) -> None:
    """oc's Complete: the flags that do not go together."""
    if ask.clear and ask.target:
        raise InputError("--clear may not be specified with any other flags", field="--clear")
    if sum(map(bool, (ask.to, ask.image, ask.latest))) > 1:
        raise InputError("give one of --to, --to-image or --to-latest", field="--to")


def answer(api: Backend, ask: UpgradeAsk, then: str) -> Said:
    """The status as `oc adm upgrade` prints it, or spec.desiredUpdate cleared or set with
    its guards (written through `api`, for the caller to commit); `then` ends the line
    that says an update was requested."""
    cv = api.get("ClusterVersion", "version")
    if cv is None:
        raise InputError(
            "the cluster has no ClusterVersion (it is not OpenShift)",
            hint="use `kupgrade skew check --kubeconfig`",
        )
    if ask.clear:
        return _info(clear_request(api), api)
    if not ask.target:
        out, err = render_upgrade(cv, ask.include_not_recommended)
        return Said(doc=cv, lines=out, errors=err)
    already = _already(cv, ask)
    if already is not None:
        return _info(already, api)
    said = Said()
    found = _target(cv, ask, said)
    if found is None:
        version = (cv["status"].get("desired") or {}).get("version", "")
        return _info(f"info: Cluster is already at the latest available version {version}", api)
    _guards(cv, ask, said)
    request_update(api, found, ask.force)
    said.doc = {"desiredUpdate": found}
    said.lines.append(f"Requested update to {found.get('version') or found['image']}{then}")
    return said


def _already(cv: dict[str, Any], ask: UpgradeAsk) -> str | None:
    at = cv["status"].get("desired") or {}
    if ask.to and ask.to == at.get("version"):
        return f"info: Cluster is already at version {ask.to}"
    if ask.image and ask.image == at.get("image"):
        return f"info: Cluster is already at {ask.image}"
    return None


def _target(cv: dict[str, Any], ask: UpgradeAsk, said: Said) -> dict[str, Any] | None:
    """The release asked for (None: --to-latest finds nothing newer), with oc's warnings
    for a risk bypassed and an image taken by --allow-explicit-upgrade alone."""
    allow = ask.include_not_recommended or ask.allow_not_recommended
    if ask.latest:
        found = latest_release(cv, allow)
        if found is None:
            error = no_target(cv["status"], [], None, allow, latest=True)
            if error is not None:
                raise error
            return None
        desired, risk = found
    else:
        desired = requested_release(cv, ask.to, ask.image, ask.explicit, allow)
        risk = bypassed_risk(cv, desired)
    if risk is not None:
        _warn(
            said,
            f"with --allow-not-recommended you have accepted the risks with "
            f"{desired['version']} and bypassed Recommended={risk.get('status', '')} "
            f"{risk.get('reason', '')}: {risk.get('message', '')}",
        )
    if ask.image and not desired["version"]:  # taken by --allow-explicit-upgrade alone
        _warn(
            said,
            "The requested upgrade image is not one of the available updates. You have "
            "used --allow-explicit-upgrade for the update to proceed anyway",
        )
    return dict(desired)


def _guards(cv: dict[str, Any], ask: UpgradeAsk, said: Said) -> None:
    """oc's checkForUpgrade: an invalid, failing or updating cluster refuses a new
    request unless the user says to go on."""
    if ask.force:
        _warn(said, FORCE_WARNING)
    problem = check_for_upgrade(cv)
    if problem is not None and not (ask.with_warnings or ask.force):
        raise InputError(
            problem, hint="If you want to upgrade anyway, use --allow-upgrade-with-warnings"
        )
    if problem is not None and ask.with_warnings:
        _warn(said, f"--allow-upgrade-with-warnings is bypassing: {problem}")


def _info(text: str, api: Backend) -> Said:
    """What oc prints when nothing (more) is requested; as data with -o json."""
    cv = api.get("ClusterVersion", "version") or {}
    desired = (cv.get("spec") or {}).get("desiredUpdate")
    return Said(doc={"desiredUpdate": desired, "message": text}, lines=[text])


def _warn(said: Said, text: str) -> None:
    said.errors.append(f"warning: {text}")


def channel(api: Backend, name: str, allow_explicit: bool) -> Said:
    """`upgrade channel [CHANNEL]`: spec.channel set or cleared (oc prints nothing when it
    set the channel)."""
    text, warnings = set_channel(api, name, allow_explicit)
    return Said(
        doc={"channel": name, "message": text},
        lines=[text] if text else [],
        errors=[f"warning: {w}" for w in warnings],
    )
