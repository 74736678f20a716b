"""ClusterVersion status as the version controller writes it (SPEC A1, C7, C10, D4).

What a user sees of an update is these texts: "Working towards V: N of M done (P%
complete)", which operators it waits on and for how long, "Unable to apply V: …" when
it is failing, "Cluster version is V" once done, and the history of every release the
cluster has tried. They follow the version controller line by line, because people
search for them, alert on them, and compare clusters by them.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kupgrade.controllers.version.errors import (
    FAIL_AFTER_INTERVAL,
    NONE,
    REPORT,
    SyncError,
    UpdateError,
    summary_for_reason,
    without_effect,
)
from kupgrade.release.taskgraph import progress_text
from kupgrade.versions import go_quote

MAX_HISTORY = 100
SLOW_MINUTES = 30
SLOW_MACHINE_CONFIG_MINUTES = 90
DEGRADED_GRACE_MINUTES = 40
MACHINE_CONFIG = "machine-config"

INITIALIZING = "Initializing"
UPDATING = "Updating"
RECONCILING = "Reconciling"

History = list[dict[str, Any]]


@dataclass
class SyncState:
    """What the last sync attempt reports (the controller's SyncWorkerStatus)."""

    version: str  # the release's version, or its pull spec when it has none
    done: int = 0
    total: int = 0
    reconciling: bool = False
    failure: SyncError | None = None
    validation_errors: Sequence[str] = ()
    # minutes since the controller started waiting on each ClusterOperator (absent: never)
    waiting_minutes: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Progress:
    progressing: dict[str, str]
    failing: dict[str, str]


def _slow_wait(error: UpdateError, waited: Mapping[str, float]) -> tuple[str, str, bool, bool]:
    """(reason, message, skip failure, slow) for an error that only means "still waiting"."""
    names = list(error.names) or [error.name]
    exceeded: list[str] = []
    machine_config = False
    for name in names:
        limit = SLOW_MACHINE_CONFIG_MINUTES if name == MACHINE_CONFIG else SLOW_MINUTES
        if name in waited and waited[name] > limit:
            if name == MACHINE_CONFIG:
                machine_config = True
            else:
                exceeded.append(name)
    if exceeded and machine_config:
        text = (
            f"waiting on {', '.join(exceeded)} over {SLOW_MINUTES} minutes and machine-config "
            f"over {SLOW_MACHINE_CONFIG_MINUTES} minutes which is longer than expected"
        )
    elif exceeded:
        text = f"waiting on {', '.join(exceeded)} over {SLOW_MINUTES} minutes which is longer than expected"
    elif machine_config:
        text = f"waiting on machine-config over {SLOW_MACHINE_CONFIG_MINUTES} minutes which is longer than expected"
    else:
        return error.reason, f"waiting on {', '.join(names)}", True, False
    return error.reason, text, True, True


def _degraded_wait(error: UpdateError, waited: Mapping[str, float]) -> tuple[str, str, bool, bool]:
    """Degraded operators are tolerated for 40 minutes before the update counts as failing."""
    names = list(error.names) or [error.name]
    # An operator the controller never started waiting on counts as waiting forever.
    exceeded = [n for n in names if waited.get(n, math.inf) > DEGRADED_GRACE_MINUTES]
    if exceeded:
        text = f"wait has exceeded {DEGRADED_GRACE_MINUTES} minutes for these operators: {', '.join(exceeded)}"
        return error.reason, text, False, False
    return (
        error.reason,
        f"waiting up to {DEGRADED_GRACE_MINUTES} minutes on {error.name}",
        True,
        False,
    )


def error_to_progressing(
    failure: SyncError | None, waited: Mapping[str, float]
) -> tuple[str, str, bool, bool]:
    """(reason, message, skip failure, slow): whether an error still counts as progress."""
    if not isinstance(failure, UpdateError):
        return "", "", False, False
    if failure.effect == REPORT:
        return failure.reason, failure.message, False, False
    if failure.effect == NONE:
        return _slow_wait(failure, waited)
    if failure.effect == FAIL_AFTER_INTERVAL:
        return _degraded_wait(failure, waited)
    return "", "", False, False


def progress(state: SyncState, history_empty: bool) -> Progress:
    """The Progressing and Failing conditions for one sync state (status, reason, message)."""
    failure = state.failure
    version = state.version
    reason = "InvalidClusterVersion" if state.validation_errors else ""
    p_reason, p_message, skip, slow = "", "", False, False
    shown_failure = failure
    if not state.reconciling and not history_empty:
        p_reason, p_message, skip, slow = error_to_progressing(failure, state.waiting_minutes)
        shown_failure = without_effect(failure, NONE)
    failing = {"status": "False", "reason": "", "message": ""}
    if shown_failure is not None and not skip:
        failing = {
            "status": "True",
            "reason": shown_failure.reason if isinstance(shown_failure, UpdateError) else "",
            "message": str(shown_failure),
        }
    if failure is not None and slow:
        failing = {"status": "Unknown", "reason": "SlowClusterOperator", "message": p_message}
    if failure is not None and not skip:
        return Progress(_failed_progressing(state, failure, p_message), failing)
    if state.reconciling:
        message = (
            f"Stopped at {version}: the cluster version is invalid"
            if state.validation_errors
            else f"Cluster version is {version}"
        )
        return Progress({"status": "False", "reason": reason, "message": message}, failing)
    counted = state.total > 0 and state.done > 0
    counts = progress_text(state.done, state.total)
    if state.validation_errors:
        message = f"Reconciling {version}: the cluster version is invalid"
    elif counted and skip:
        reason, message = p_reason, f"Working towards {version}: {counts}, {p_message}"
    elif counted:
        message = f"Working towards {version}: {counts}"
    elif skip:
        reason, message = p_reason, f"Working towards {version}: {p_message}"
    else:
        message = f"Working towards {version}"
    return Progress({"status": "True", "reason": reason, "message": message}, failing)


def _failed_progressing(state: SyncState, failure: SyncError, summary: str) -> dict[str, str]:
    reason = ""
    if isinstance(failure, UpdateError):
        reason = failure.reason
        summary = summary or summary_for_reason(failure.reason, failure.name)
    summary = summary or "an error occurred"
    if state.reconciling:
        return {
            "status": "False",
            "reason": reason,
            "message": f"Error while reconciling {state.version}: {summary}",
        }
    return {
        "status": "True",
        "reason": reason,
        "message": f"Unable to apply {state.version}: {summary}",
    }


def invalid_message(errors: Sequence[str]) -> str:
    if len(errors) == 1:
        return f"The cluster version is invalid: {errors[0]}"
    return "The cluster version is invalid:\n" + "".join(f"* {e}\n" for e in errors)


# --- history (SPEC C7) -------------------------------------------------------------


def same_entry(entry: dict[str, Any], desired: Mapping[str, Any]) -> bool:
    """Whether `desired` continues history entry `entry` (fills in its missing version/image)."""
    image, version = desired.get("image", ""), desired.get("version", "")
    if image and image == entry.get("image"):
        if not version:
            return True
        if not entry.get("version") or version == entry.get("version"):
            entry["version"] = version
            return True
    if (
        version
        and version == entry.get("version")
        and (not entry.get("image") or image == entry.get("image"))
    ):
        entry["image"] = image
        return True
    return False


def _entry(desired: Mapping[str, Any], state: str, now: str, risks: str) -> dict[str, Any]:
    return {
        "state": state,
        "version": desired.get("version", ""),
        "image": desired.get("image", ""),
        "startedTime": now,
        "completionTime": now if state == "Completed" else None,
        "verified": False,
        "acceptedRisks": risks,
    }


def merge_history(
    history: History | None,
    desired: Mapping[str, Any],
    *,
    now: str,
    completed: bool,
    verified: bool = False,
    accepted_risks: str = "",
    local_payload: bool = False,
    max_history: int = MAX_HISTORY,
) -> History:
    """The history after a sync towards `desired`: continue its entry or open a new one.

    A release without an image cannot be reproduced, so it is never recorded. An entry
    left unfinished for another release is closed (completionTime) but stays Partial.
    """
    merged: History = copy.deepcopy(history) if history else []
    if not desired.get("image"):
        return merged
    if not merged:
        merged.append(_entry(desired, "Partial", now, accepted_risks))
    last = merged[0]
    if not last.get("state"):  # status.go mergeOperatorHistory: an empty state is Partial
        last["state"] = "Partial"
    if same_entry(last, desired):
        if completed:
            last["state"] = "Completed"
            if not last.get("completionTime"):
                last["completionTime"] = now
        if not local_payload:
            last["acceptedRisks"] = accepted_risks
    else:
        if not last.get("completionTime"):
            last["completionTime"] = now
        state = "Completed" if completed else "Partial"
        merged.insert(0, _entry(desired, state, now, accepted_risks))
    if verified:
        merged[0]["verified"] = True
    return prune_history(merged, max_history)[0]


def _minor(version: str) -> str:
    parts = version.split(".")
    return parts[1] if len(parts) >= 2 else ""


def _micro(version: str) -> str:
    parts = version.split(".")
    return parts[2] if len(parts) >= 3 else ""


def _completed(entry: Mapping[str, Any]) -> bool:
    return entry.get("state") == "Completed"


def _older_completed(i: int, history: History) -> int:
    return next((j for j in range(i + 1, len(history)) if _completed(history[j])), i)


def _newer_completed(i: int, history: History) -> int:
    return next((j for j in range(i - 1, -1, -1) if _completed(history[j])), i)


def _prune_weight(i: int, history: History, limit: int, recent_completed: int) -> float:
    """How much an entry is worth keeping (the controller's weights)."""
    if i <= 4 or i in (limit, recent_completed):
        return 1000.0
    entry = history[i]
    older, newer = _older_completed(i, history), _newer_completed(i, history)
    if _completed(entry):
        if i in (0, older, newer):
            return 30.0
        same_older = _minor(entry["version"]) == _minor(history[older]["version"])
        same_newer = _minor(entry["version"]) == _minor(history[newer]["version"])
        return 30.0 if not (same_older and same_newer) else 0.0
    if i in (older, newer):
        return 0.0
    a, b = history[older]["version"], history[newer]["version"]
    if _minor(a) != _minor(b):
        return 20.0
    if _micro(a) != _micro(b):
        return -20.0
    return 0.0


def prune_history(history: History, limit: int = MAX_HISTORY) -> tuple[History, int | None]:
    """Drop the least informative entry once the history is longer than `limit`.

    Kept at all cost: the newest five, the initial install and the last completed
    update; then the first or last completed release of each minor; partial attempts
    across a minor transition outrank those within a z-stream.
    """
    if len(history) <= limit:
        return history, None
    recent = next((i for i, e in enumerate(history) if _completed(e)), -1)
    ranks = [_prune_weight(i, history, limit, recent) - 1.01 * i for i in range(len(history))]
    lowest = min(range(len(ranks)), key=lambda i: (ranks[i], i))
    return history[:lowest] + history[lowest + 1 :], lowest


def mode(history: Sequence[Mapping[str, Any]] | None, desired_image: str) -> str:
    """Initializing until a release was ever completed; Reconciling once the desired one is."""
    history = history or []
    if not any(_completed(e) for e in history):
        return INITIALIZING
    if _completed(history[0]) and history[0].get("image") == desired_image:
        return RECONCILING
    return UPDATING


# --- ReleaseAccepted (SPEC C3-C6) ----------------------------------------------------


def release_accepted(
    step: str,
    version: str,
    image: str,
    *,
    architecture: str = "",
    failure: str = "",
) -> dict[str, str]:
    """The ReleaseAccepted condition for one step of loading the desired release."""
    # sync_worker.go syncPayload words each step, quoting with Go's %q.
    ident = f"version={go_quote(version)} image={go_quote(image)}"
    if step == "PayloadLoaded":
        return {
            "type": "ReleaseAccepted",
            "status": "True",
            "reason": step,
            "message": f"Payload loaded {ident} architecture={go_quote(architecture)}",
        }
    if step == "PreconditionChecks":
        message = f"Preconditions failed for payload loaded {ident}: {failure}"
    elif step == "LoadPayload":
        message = f"Loading payload failed {ident} failure={failure}"
    elif step == "VerifyPayloadVersion":
        message = f"Verifying payload failed {ident} failure={failure}"
    elif failure:
        message = f"Retrieving payload failed {ident} failure={failure}"
    else:
        message = f"Retrieving and verifying payload {ident}"
    return {
        "type": "ReleaseAccepted",
        "status": "False" if failure else "Unknown",
        "reason": step,
        "message": message,
    }


# --- `oc get clusterversion` ---------------------------------------------------------


def clusterversion_columns(status: Mapping[str, Any]) -> dict[str, str]:
    """VERSION, AVAILABLE, PROGRESSING, SINCE, STATUS as the printer columns define them."""
    history = status.get("history") or []
    version = next((e.get("version", "") for e in history if _completed(e)), "")
    conditions = {c.get("type"): c for c in status.get("conditions") or []}
    available = conditions.get("Available") or {}
    progressing = conditions.get("Progressing") or {}
    return {
        "VERSION": version,
        "AVAILABLE": available.get("status", ""),
        "PROGRESSING": progressing.get("status", ""),
        "SINCE": progressing.get("lastTransitionTime", ""),
        "STATUS": progressing.get("message", ""),
    }
