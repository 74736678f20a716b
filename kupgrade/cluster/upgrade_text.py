"""`oc adm upgrade`'s text for a ClusterVersion, line for line (SPEC A5).

Users compare our answer with what `oc adm upgrade` shows them, so the layout is the
same: the Failing and Progressing blocks, Upgradeable and ReleaseAccepted when they
matter, upstream and channel, the Recommended table, and the updates with known issues.
"""

from __future__ import annotations

from typing import Any

from kupgrade.cluster.conditions import indent, reason_message
from kupgrade.versions import sort_versions_desc

TABLE_MIN_WIDTH = 14  # Go text/tabwriter minwidth, padding 1


def _condition(cv: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for c in cv.get("status", {}).get("conditions") or []:
        if c.get("type") == kind:
            return dict(c)
    return None


def _split(lines: list[str]) -> list[str]:
    return "\n".join(lines).split("\n") if lines else []


def render_upgrade(
    cv: dict[str, Any], include_not_recommended: bool
) -> tuple[list[str], list[str]]:
    """(stdout lines, stderr lines) of `oc adm upgrade` without target flags."""
    out: list[str] = []
    err: list[str] = []
    _status_blocks(cv, out, err)
    _channel_block(cv, out)
    _recommended_block(cv, out, err)
    _not_recommended_block(cv, out, include_not_recommended)
    return _split(out), _split(err)


def _status_blocks(cv: dict[str, Any], out: list[str], err: list[str]) -> None:
    failing = _condition(cv, "Failing")
    if failing is None:
        err.append(
            "warning: No current Failing info, see `oc describe clusterversion` for more details."
        )
    elif failing.get("status") != "False":
        out += [f"Failing={failing.get('status')}:", "", *reason_message(failing), ""]
    progressing = _condition(cv, "Progressing")
    if progressing is not None and progressing.get("message"):
        prefix = "info: An upgrade is in progress. " if progressing.get("status") == "True" else ""
        out.append(prefix + indent(progressing["message"]))
    else:
        err.append(
            "warning: No current Progressing info, see `oc describe clusterversion` for more details."
        )
    out.append("")
    upgradeable = _condition(cv, "Upgradeable")
    if upgradeable is not None and upgradeable.get("status") == "False":
        out += ["Upgradeable=False", "", *reason_message(upgradeable), ""]
    accepted = _condition(cv, "ReleaseAccepted")
    if accepted is not None and accepted.get("status") != "True":
        out += [f"ReleaseAccepted={accepted.get('status')}", "", *reason_message(accepted), ""]


def _channel_block(cv: dict[str, Any], out: list[str]) -> None:
    spec = cv.get("spec", {})
    channel = spec.get("channel")
    if not channel:
        return
    upstream = spec.get("upstream")
    out.append(
        f"Upstream: {upstream}"
        if upstream
        else "Upstream is unset, so the cluster will use an appropriate default."
    )
    channels = (cv.get("status", {}).get("desired") or {}).get("channels") or []
    out.append(
        f"Channel: {channel} (available channels: {', '.join(channels)})"
        if channels
        else f"Channel: {channel}"
    )


def _recommended_block(cv: dict[str, Any], out: list[str], err: list[str]) -> None:
    status = cv.get("status", {})
    updates = status.get("availableUpdates") or []
    retrieved = _condition(cv, "RetrievedUpdates")
    cannot = retrieved is not None and retrieved.get("status") == "False"
    if updates:
        by_version = {u["version"]: u for u in updates}
        width = max(TABLE_MIN_WIDTH, *(len(f"  {v}") + 1 for v in by_version))
        out += ["", "Recommended updates:", "", f"{'  VERSION':<{width}}IMAGE"]
        out += [
            f"{'  ' + v:<{width}}{by_version[v].get('image', '')}"
            for v in sort_versions_desc(list(by_version))
        ]
        if cannot:
            err += [
                "warning: Cannot refresh available updates:",
                *reason_message(retrieved or {}),
                "",
            ]
    elif cannot:
        err += ["warning: Cannot display available updates:", *reason_message(retrieved or {}), ""]
    else:
        out.append(
            "No updates available. You may still upgrade to a specific release image with --to-image "
            "or wait for new updates to be available."
        )


def _recommended(update: dict[str, Any]) -> dict[str, Any]:
    for c in update.get("conditions") or []:
        if c.get("type") == "Recommended":
            return dict(c)
    return {"status": "Unknown"}


def _not_recommended_block(cv: dict[str, Any], out: list[str], include: bool) -> None:
    conditional = cv.get("status", {}).get("conditionalUpdates") or []
    flagged = {
        u["release"]["version"]: u for u in conditional if _recommended(u).get("status") != "True"
    }
    if include:
        if not flagged:
            out += [
                "",
                "No updates which are not recommended based on your cluster configuration are available.",
            ]
            return
        out += ["", "Updates with known issues:"]
        for version in sort_versions_desc(list(flagged)):
            update = flagged[version]
            c = _recommended(update)
            out += [
                "",
                f"  Version: {version}",
                f"  Image: {update['release'].get('image', '')}",
                f"  Reason: {c.get('reason', '')}",
                f"  Message: {indent(str(c.get('message', '')).strip())}",
            ]
        return
    if flagged:
        statuses = {str(_recommended(u).get("status")) for u in flagged.values()} - {
            "True",
            "False",
        }
        extra = "".join(
            f', or where the recommended status is "{s}",' for s in sorted(statuses)[:1]
        )
        out += [
            "",
            f"Additional updates which are not recommended{extra} for your cluster configuration are available, "
            "to view those re-run the command with --include-not-recommended.",
        ]


def check_for_upgrade(cv: dict[str, Any]) -> str | None:
    """Why `upgrade --to…` refuses to start (invalid, failing or already updating), or None."""
    problems: list[str] = []
    desired = (cv.get("status", {}).get("desired") or {}).get("version", "")
    invalid = _condition(cv, "Invalid")
    if invalid is not None and invalid.get("status") == "True":
        problems.append(
            "the cluster version object is invalid, you must correct the invalid state first:\n\n"
            + "\n".join(reason_message(invalid))
        )
    failing = _condition(cv, "Failing")
    if failing is not None and failing.get("status") == "True":
        problems.append(
            f'the cluster is experiencing an error reconciling "{desired}":\n\n'
            + "\n".join(reason_message(failing))
        )
    progressing = _condition(cv, "Progressing")
    if progressing is not None and progressing.get("status") == "True":
        problems.append(
            "the cluster is already upgrading:\n\n" + "\n".join(reason_message(progressing))
        )
    return "\n\n".join(problems) if problems else None
