"""The errors one sync attempt ends with, and how the controller condenses them (SPEC C10, D4).

Users read these texts in `oc adm upgrade` and in alerts, so they are the version
controller's own: an UpdateError carries a reason, an effect on the update (None: only
waiting; FailAfterInterval: failing after 40 minutes; Fail: failing now; Report: shown
but not failing, during install) and the operator names it is about. Errors of the same
reason about several ClusterOperators are merged into one plural error; anything else
that is left becomes "Multiple errors are preventing progress".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

NONE = "None"
FAIL = "Fail"
FAIL_AFTER_INTERVAL = "FailAfterInterval"
REPORT = "Report"
MULTIPLE_ERRORS = "MultipleErrors"

# The effect two merged errors get: the stronger wins (Fail > FailAfterInterval > None > Report).
_STRENGTH = {REPORT: 0, NONE: 1, FAIL_AFTER_INTERVAL: 2, FAIL: 3}


@dataclass(frozen=True)
class PlainError:
    """An error without a reason (the controller shows its text and "an error occurred")."""

    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class UpdateError:
    reason: str
    message: str
    effect: str = ""
    name: str = ""
    names: tuple[str, ...] = ()
    plural_reason: str = ""
    plural_message_format: str = ""
    nested: tuple[SyncError, ...] = ()
    detail: str = ""  # the nested cause's text (operator health), for logs and `describe`
    clusteroperator: bool = False  # raised while waiting on a ClusterOperator manifest
    undone: tuple[str, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return self.message


SyncError = UpdateError | PlainError


def summary_for_reason(reason: str, name: str) -> str:
    """The short clause after "Unable to apply V: " (the controller's SummaryForReason)."""
    fixed = {
        "UpdatePayloadResourceNotFound": "some resources could not be updated",
        "UpdatePayloadResourceConflict": "some resources could not be updated",
        "UpdatePayloadClusterDown": "the control plane is down or not responding",
        "UpdatePayloadClusterError": "the control plane is reporting an internal error",
        "UpdatePayloadClusterOverloaded": "the control plane is overloaded and is not accepting updates",
        "UpdatePayloadClusterUnauthorized": "could not authenticate to the server",
        "UpdatePayloadRetrievalFailed": "could not download the update",
        "UpdatePayloadResourceForbidden": "the server is rejecting updates",
        "UpdatePayloadResourceTypeMissing": "a required extension is not available to update",
        "UpdatePayloadResourceInvalid": "some cluster configuration is invalid",
        "UpdatePayloadIntegrity": "the contents of the update are invalid",
        "ImageVerificationFailed": "the image may not be safe to use",
        "UpgradePreconditionCheckFailed": "it may not be safe to apply this update",
        "ClusterOperatorsNotAvailable": "some cluster operators are not available",
    }
    if reason in fixed:
        return fixed[reason]
    named = {
        "ClusterOperatorDegraded": (
            "the cluster operator {} is degraded",
            "a cluster operator is degraded",
        ),
        "ClusterOperatorNotAvailable": (
            "the cluster operator {} is not available",
            "a cluster operator is not available",
        ),
        "ClusterOperatorNoVersions": (
            "the cluster operator {} does not declare expected versions",
            "a cluster operator does not declare expected versions",
        ),
        "WorkloadNotAvailable": (
            "the workload {} has not yet successfully rolled out",
            "a workload has not yet rolled out",
        ),
        "WorkloadNotProgressing": ("the workload {} cannot roll out", "a workload cannot roll out"),
    }
    if reason in named:
        with_name, without = named[reason]
        return with_name.format(name) if name else without
    if reason.startswith("UpdatePayload"):
        return "the update could not be applied"
    if name:
        return f"{name} has an unknown error: {reason}"
    return f"an unknown error has occurred: {reason}"


def new_multiple_error(errors: Sequence[SyncError]) -> SyncError | None:
    """One error for many: messages sorted and de-duplicated; none has an effect of its own."""
    if not errors:
        return None
    if len(errors) == 1:
        return errors[0]
    messages = sorted({str(e) for e in errors})
    return UpdateError(
        reason=MULTIPLE_ERRORS,
        message="Multiple errors are preventing progress:\n* " + "\n* ".join(messages),
        nested=tuple(errors),
    )


def stronger_effect(a: str, b: str) -> str:
    return a if _STRENGTH.get(a, -1) >= _STRENGTH.get(b, -1) else b


def condense_cluster_operators(errors: Iterable[SyncError]) -> list[SyncError]:
    """Merge ClusterOperator errors that share a reason into one plural error per reason."""
    out: list[SyncError] = []
    by_reason: dict[str, list[UpdateError]] = {}
    for error in errors:
        if isinstance(error, UpdateError) and error.clusteroperator:
            by_reason.setdefault(error.reason, []).append(error)
        else:
            out.append(error)
    for reason in sorted(by_reason):
        group = by_reason[reason]
        if len(group) == 1:
            out.append(group[0])
            continue
        names = sorted(n for e in group for n in (e.names or ((e.name,) if e.name else ())))
        effect = REPORT
        for e in group:
            effect = stronger_effect(effect, e.effect)
        joined = ", ".join(names)
        first = group[0]
        out.append(
            UpdateError(
                reason=first.plural_reason or reason,
                message=(first.plural_message_format or "%s").replace("%s", joined, 1),
                effect=effect,
                name=joined,
                names=tuple(names),
                plural_reason=first.plural_reason,
                plural_message_format=first.plural_message_format,
                nested=tuple(group),
                clusteroperator=True,
            )
        )
    return out


def summarize_task_graph_errors(errors: Sequence[SyncError]) -> SyncError | None:
    """Reduce the errors of one pass over the task graph to the one the status shows."""
    if not errors:
        return None
    if len(errors) == 1:
        return errors[0]
    return new_multiple_error(condense_cluster_operators(errors))


def without_effect(error: SyncError | None, effect: str) -> SyncError | None:
    """The failure the Failing condition shows: nested errors of `effect` dropped."""
    if isinstance(error, UpdateError) and error.reason == MULTIPLE_ERRORS and error.nested:
        kept = [e for e in error.nested if not (isinstance(e, UpdateError) and e.effect == effect)]
        return new_multiple_error(kept)
    return error
