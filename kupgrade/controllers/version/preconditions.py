"""The checks before a new release is accepted (SPEC C6), in the controller's order:
Rollback, GiantHop, Upgradeable, RecommendedUpdate.

Each check returns None or a PreconditionError; a warning never blocks, a blocking error
is only overridden by `--force`, and whatever was overridden or warned about is recorded
in the new history entry as accepted risks, so an audit later shows what was waved
through.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kupgrade.cluster.conditions import find
from kupgrade.versions import SemVer, blang_error

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
        return (
            f'Precondition "{self.precondition}" failed because of "{self.reason}": {self.message}'
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
    return str((_status(cv).get("desired") or {}).get("version", ""))


def _parse(text: str) -> SemVer | None:
    return None if blang_error(text) else SemVer.try_parse(text)


def _previous_version(cv: Mapping[str, Any], current: str) -> str:
    """The release the cluster completed before the current target, if any."""
    for entry in _status(cv).get("history") or []:
        if (
            entry.get("state") == "Completed"
            and entry.get("version")
            and entry["version"] != current
        ):
            return str(entry["version"])
    return ""


def rollback(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """Only a rollback to the previous release of the same minor is allowed."""
    name = "ClusterVersionRollback"
    current_text = _current(cv)
    current, wanted = _parse(current_text), _parse(target)
    if current is None or wanted is None or not wanted < current:
        return None
    previous_text = _previous_version(cv, current_text)
    previous = _parse(previous_text)
    if previous is None:
        return PreconditionError(
            f"{target} is less than the current target {current_text}, and the cluster has no previous Semantic Version",
            name,
            "LowDesiredVersion",
        )
    if previous != wanted:
        return PreconditionError(
            f"{target} is less than the current target {current_text}, but the cluster's previous "
            f"version was {previous_text}, and only rollbacks to the previous version are supported",
            name,
            "LowDesiredVersion",
        )
    if (previous.major, previous.minor) != (current.major, current.minor):
        return PreconditionError(
            f"{target} is less than the current target {current_text} and matches the cluster's "
            "previous version, but rollbacks that change major or minor versions are not recommended",
            name,
            "LowDesiredVersion",
        )
    return None


def giant_hop(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """Updates stay within a major version and go at most one minor at a time."""
    name = "ClusterVersionGiantHop"
    current_text = _current(cv)
    if error := blang_error(current_text):
        return PreconditionError(error, name, "InvalidCurrentVersion", warning=True)
    if error := blang_error(target):
        return PreconditionError(error, name, "InvalidTargetVersion", warning=True)
    current, wanted = SemVer.parse(current_text), SemVer.parse(target)
    if wanted.major > current.major:
        # The 4 -> 5.0 hop is the one major update the platform plans for.
        if (current.major, wanted.major, wanted.minor) == (4, 5, 0):
            return None
        return PreconditionError(
            f"{target} has a larger major version than the current target {current_text} "
            f"({wanted.major} > {current.major}), and only updates within the current major version are supported.",
            name,
            "MajorVersionUpdate",
        )
    if wanted.major == current.major and wanted.minor > current.minor + 1:
        return PreconditionError(
            f"{target} is more than one minor version beyond the current target {current_text} "
            f"({wanted.major}.{wanted.minor} > {current.major}.({current.minor}+1)), and only updates "
            "within the current minor version or to the next minor version are supported.",
            name,
            "MultipleMinorVersionsUpdate",
        )
    return None


def _minor_or_major_update(current: str, target: str) -> bool | None:
    a, b = _parse(current), _parse(target)
    if a is None or b is None:
        return None
    return (b.major, b.minor) > (a.major, a.minor)


def upgradeable(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """Upgradeable=False blocks minor and major updates only (SPEC C6)."""
    name = "ClusterVersionUpgradeable"
    condition = find(_status(cv).get("conditions"), "Upgradeable")
    if condition is None or condition.get("status") != "False":
        return None
    current = _current(cv)
    if not current or not target:
        return None
    is_minor = _minor_or_major_update(current, target)
    if is_minor is not False:
        return PreconditionError(
            str(condition.get("message", "")), name, str(condition.get("reason", ""))
        )
    completed = next(
        (
            str(e.get("version", ""))
            for e in _status(cv).get("history") or []
            if e.get("state") == "Completed"
        ),
        "",
    )
    progressing = find(_status(cv).get("conditions"), "Progressing")
    if (
        progressing is not None
        and progressing.get("status") == "True"
        and _minor_or_major_update(completed, current)
    ):
        return PreconditionError(
            f"Retarget to {target} while a minor version update from {completed} to {current} is in progress",
            name,
            "MinorVersionClusterUpdateInProgress",
            warning=True,
        )
    if _has_overrides(cv):
        return PreconditionError(
            f"Retarget from {current} to {target} is not blocked by ClusterVersionOverridesSet. "
            "But the cluster-version operator is not managing these resources; they are currently "
            f"the responsibility of the agent that set the overrides: {OVERRIDES_MESSAGE}",
            name,
            "ClusterVersionOverridesSet",
            warning=True,
        )
    return None


def _has_overrides(cv: Mapping[str, Any]) -> bool:
    return any(o.get("unmanaged") for o in (cv.get("spec") or {}).get("overrides") or [])


def recommended_update(cv: Mapping[str, Any], target: str) -> PreconditionError | None:
    """A target the update service does not recommend only warns."""
    name = "ClusterVersionRecommendedUpdate"
    status = _status(cv)
    current = _current(cv)
    if any(u.get("version") == target for u in status.get("availableUpdates") or []):
        return None
    for update in status.get("conditionalUpdates") or []:
        if (update.get("release") or {}).get("version") != target:
            continue
        recommended = find(update.get("conditions"), "Recommended")
        if recommended is None:
            break
        if recommended.get("status") == "True":
            return None
        verdict = (
            "not recommended"
            if recommended.get("status") == "False"
            else "of unknown recommendation"
        )
        return PreconditionError(
            f"Update from {current} to {target} is {verdict}:\n\n{recommended.get('message', '')}",
            name,
            str(recommended.get("reason", "")),
            warning=True,
        )
    if not (cv.get("spec") or {}).get("channel"):
        return PreconditionError(
            f"Configured channel is unset, so the recommended status of updating from {current} to {target} is unknown.",
            name,
            "NoChannel",
            warning=True,
        )
    retrieved = find(status.get("conditions"), "RetrievedUpdates")
    if retrieved is None:
        text = f"No RetrievedUpdates, so the recommended status of updating from {current} to {target} is unknown."
    elif retrieved.get("status") == "True":
        text = (
            f"RetrievedUpdates=True ({retrieved.get('reason', '')}), so the update from {current} "
            f"to {target} is probably neither recommended nor supported."
        )
    else:
        text = (
            f"RetrievedUpdates={retrieved.get('status')} ({retrieved.get('reason', '')}), so the "
            f"recommended status of updating from {current} to {target} is unknown."
        )
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
