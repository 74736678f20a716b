"""The checks before a new release is accepted (SPEC C6), in the controller's order:
Rollback, GiantHop, Upgradeable, RecommendedUpdate.

Each check returns None or a PreconditionError; a warning never blocks, a blocking error
is only overridden by `--force`, and whatever was overridden or warned about is recorded
in the new history entry as accepted risks, so an audit later shows what was waved
through.

Every branch and text follows cluster-version-operator
pkg/payload/precondition/clusterversion/{rollback,gianthop,upgradeable,recommendedupdate}.go
and pkg/payload/precondition/precondition.go (commit 6e719331f): a current version that
does not parse only warns (fixing it takes an update), a target that does not parse
blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kupgrade.cluster.conditions import find
from kupgrade.errors import VersionError
from kupgrade.versions import SemVer, go_quote, parse_blang

OVERRIDES_MESSAGE = (
    "Disabling ownership via cluster version overrides prevents upgrades between minor or "
    "major versions. Please remove overrides before requesting a minor or major version update."
)


@dataclass(frozen=True)
class PreconditionError:
    message: str
    precondition: str = ""  # empty for an error that is not a typed precondition failure
    reason: str = ""
    warning: bool = False

    def __str__(self) -> str:
        if not self.precondition:
            return self.message
        # precondition.go Summarize: "Precondition %q failed because of %q: %v"
        return (
            f"Precondition {go_quote(self.precondition)} failed because of "
            f"{go_quote(self.reason)}: {self.message}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "precondition": self.precondition,
            "reason": self.reason,
            "message": self.message,
            "non_blocking_warning": self.warning,
        }


@dataclass(frozen=True)
class Summary:
    blocking: bool
    error: str | None  # the text for ReleaseAccepted / history acceptedRisks


Check = Callable[[Mapping[str, Any], str], PreconditionError | None]


def _status(cv: Mapping[str, Any]) -> Mapping[str, Any]:
    return cv.get("status") or {}


def _current(cv: Mapping[str, Any]) -> str:
    return str((_status(cv).get("desired") or {}).get("version") or "")


def _current_image(cv: Mapping[str, Any]) -> str:
    return str((_status(cv).get("desired") or {}).get("image") or "")


def _history(cv: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(_status(cv).get("history") or [])


def _blang(text: str) -> SemVer | str:
    """The version as blang/semver parses it, or its parse error."""
    try:
        return parse_blang(text)
    except VersionError as exc:
        return exc.message


def _versions(
    name: str, cv: Mapping[str, Any], target: str
) -> tuple[SemVer, SemVer] | PreconditionError:
    """Both versions parsed as blang/semver does, or the check's parse error.

    The current one only warns: "do not block on issues that require an update to fix".
    """
    current = _blang(_current(cv))
    if isinstance(current, str):
        return PreconditionError(current, name, "InvalidCurrentVersion", warning=True)
    wanted = _blang(target)
    if isinstance(wanted, str):
        return PreconditionError(wanted, name, "InvalidDesiredVersion")
    return current, wanted


def _previous(cv: Mapping[str, Any], current: SemVer) -> tuple[SemVer, str] | None:
    """rollback.go: the newest history entry that is not the current release.

    An entry counts as the current release only when both its version and its image
    match; the first other entry is the previous one, and if its version does not
    parse there is no previous version at all (the CVO does not look further).
    """
    image = _current_image(cv)
    for entry in _history(cv):
        version = str(entry.get("version") or "")
        if version != str(current) or str(entry.get("image") or "") != image:
            parsed = _blang(version)
            return None if isinstance(parsed, str) else (parsed, str(entry.get("image") or ""))
    return None


def rollback(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """Only a rollback to the previous release of the same minor is allowed."""
    name = "ClusterVersionRollback"
    parsed = _versions(name, cv, target)
    if isinstance(parsed, PreconditionError):
        return parsed
    current, wanted = parsed
    if not wanted < current:
        return None
    previous = _previous(cv, current)
    if previous is None:
        return PreconditionError(
            f"{wanted} is less than the current target {current}, and the cluster has no "
            "previous Semantic Version",
            name,
            "LowDesiredVersion",
        )
    version, image = previous
    if wanted.precedence != version.precedence:
        return PreconditionError(
            f"{wanted} is less than the current target {current}, and the only supported "
            f"rollback is to the cluster's previous version {version} ({image})",
            name,
            "LowDesiredVersion",
        )
    if (version.major, version.minor) == (current.major, current.minor):
        return None
    return PreconditionError(
        f"{wanted} is less than the current target {current} and matches the cluster's "
        "previous version, but rollbacks that change major or minor versions are not recommended",
        name,
        "LowDesiredVersion",
    )


def giant_hop(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """Updates stay within a major version and go at most one minor at a time.

    As in gianthop.go the minor check compares minors whatever the majors: 5.0 -> 4.20 is
    a "giant hop" too, and 4.x -> 5.0 is the one major update allowed.
    """
    name = "ClusterVersionGiantHop"
    parsed = _versions(name, cv, target)
    if isinstance(parsed, PreconditionError):
        return parsed
    current, wanted = parsed
    if wanted.major > current.major:
        supported = "within the current major version"
        if (current.major, wanted.major) == (4, 5):
            if wanted.minor == 0:
                return None
            supported += " or to 5.0"
        return PreconditionError(
            f"{wanted} has a larger major version than the current target {current} "
            f"({wanted.major} > {current.major}), and only updates {supported} are supported.",
            name,
            "MajorVersionUpdate",
        )
    if wanted.minor > current.minor + 1:
        return PreconditionError(
            f"{wanted} is more than one minor version beyond the current target {current} "
            f"({wanted.major}.{wanted.minor} > {current.major}.({current.minor}+1)), and only "
            "updates within the current minor version or to the next minor version are supported.",
            name,
            "MultipleMinorVersionsUpdate",
        )
    return None


def update_type(source: SemVer, target: SemVer) -> str:
    """pkg/internal/constants.go UpdateType: Major, Minor, Patch or Unknown."""
    if source.major < target.major:
        return "Major"
    if source.major == target.major and source.minor < target.minor:
        return "Minor"
    if source < target:
        return "Patch"
    return "Unknown"


def current_version(history: Sequence[Mapping[str, Any]] | None) -> str:
    """upgradeable.go GetCurrentVersion: the newest Completed entry's version, else the
    oldest entry's (the install), else ""."""
    history = list(history or [])
    for entry in history:
        if entry.get("state") == "Completed":
            return str(entry.get("version") or "")
    return str(history[-1].get("version") or "") if history else ""


def _update_in_progress(cv: Mapping[str, Any], current: SemVer) -> tuple[str, str]:
    """upgradeable.go majorOrMinorUpdateFrom: (completed version, "Major"|"Minor") when a
    major or minor update is still Progressing, else ("", "")."""
    completed = current_version(_history(cv))
    parsed = _blang(completed) if completed else ""
    if isinstance(parsed, str):
        return "", ""
    progressing = find(_status(cv).get("conditions"), "Progressing")
    if progressing is None or progressing.get("status") != "True":
        return "", ""
    kind = update_type(parsed, current)
    return (completed, kind) if kind in ("Major", "Minor") else ("", "")


def upgradeable(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """Upgradeable=False blocks minor and major updates only (SPEC C6)."""
    name = "ClusterVersionUpgradeable"
    condition = find(_status(cv).get("conditions"), "Upgradeable")
    if condition is None or condition.get("status") != "False":
        return None
    parsed = _versions(name, cv, target)
    if isinstance(parsed, PreconditionError):
        return parsed
    current, wanted = parsed
    patch_only = (wanted.major, wanted.minor) == (current.major, current.minor)
    if not (wanted <= current or patch_only):
        return PreconditionError(
            str(condition.get("message") or ""), name, str(condition.get("reason") or "")
        )
    if _has_overrides(cv):
        return PreconditionError(
            f"Retarget from {current} to {wanted} is not blocked by ClusterVersionOverridesSet. "
            "But the cluster-version operator is not managing these resources; they are currently "
            f"the responsibility of the agent that set the overrides: {OVERRIDES_MESSAGE}",
            name,
            "ClusterVersionOverridesSet",
            warning=True,
        )
    completed, kind = _update_in_progress(cv, current)
    if completed and patch_only:
        # The accepted risk of 4.y.z -> 4.y+1.z' -> 4.y+1.z'' (a z retarget mid-minor).
        return PreconditionError(
            f"Retarget to {wanted} while a {kind.lower()} version update from {completed} "
            f"to {current} is in progress",
            name,
            f"{kind}VersionClusterUpdateInProgress",
            warning=True,
        )
    return None


def _has_overrides(cv: Mapping[str, Any]) -> bool:
    return any(o.get("unmanaged") for o in (cv.get("spec") or {}).get("overrides") or [])


def _recommended(current: str, target: str, update: Mapping[str, Any]) -> PreconditionError | None:
    """recommendedupdate.go: the first Recommended condition of the target's entry."""
    name = "ClusterVersionRecommendedUpdate"
    for condition in update.get("conditions") or []:
        if condition.get("type") != "Recommended":
            continue
        status, reason = condition.get("status"), str(condition.get("reason") or "")
        message = str(condition.get("message") or "")
        if status == "True":
            return None
        if status == "False":
            text = f"Update from {current} to {target} is not recommended:\n\n{message}"
        else:
            text = f"Update from {current} to {target} is Recommended={status or ''}: {reason}: {message}"
        return PreconditionError(text, name, reason, warning=True)
    return PreconditionError(
        f"Update from {current} to {target} has a status.conditionalUpdates entry, but no "
        "Recommended condition.",
        name,
        "UnknownConditionType",
        warning=True,
    )


def recommended_update(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """A target the update service does not recommend only warns."""
    name = "ClusterVersionRecommendedUpdate"
    status = _status(cv)
    current = _current(cv)
    if any(u.get("version") == target for u in status.get("availableUpdates") or []):
        return None
    for update in status.get("conditionalUpdates") or []:
        if (update.get("release") or {}).get("version") == target:
            return _recommended(current, target, update)
    if not (cv.get("spec") or {}).get("channel"):
        return PreconditionError(
            f"Configured channel is unset, so the recommended status of updating from {current} "
            f"to {target} is unknown.",
            name,
            "NoChannel",
            warning=True,
        )
    retrieved = find(status.get("conditions"), "RetrievedUpdates")
    if retrieved is None:
        text = (
            f"No RetrievedUpdates, so the recommended status of updating from {current} to "
            f"{target} is unknown."
        )
    else:
        said = f"RetrievedUpdates={retrieved.get('status') or ''} ({retrieved.get('reason') or ''})"
        if retrieved.get("status") == "True":
            text = (
                f"{said}, so the update from {current} to {target} is probably neither "
                "recommended nor supported."
            )
        else:
            text = f"{said}, so the recommended status of updating from {current} to {target} is unknown."
    return PreconditionError(text, name, "UnknownUpdate", warning=True)


CHECKS: tuple[Check, ...] = (rollback, giant_hop, upgradeable, recommended_update)


def run_checks(cv: Mapping[str, Any], target: str) -> list[PreconditionError]:
    return [error for check in CHECKS if (error := check(cv, target)) is not None]


def summarize(errors: Sequence[PreconditionError] | None, force: bool) -> Summary:
    """Blocking unless every failure is a warning or the update is forced."""
    if not errors:
        return Summary(False, None)
    blocking = any(not e.warning for e in errors)
    text = (
        str(errors[0])
        if len(errors) == 1
        else "Multiple precondition checks failed:\n* " + "\n* ".join(str(e) for e in errors)
    )
    if blocking and force:
        return Summary(False, f"Forced through blocking failures: {text}")
    return Summary(blocking, text)
