"""The `Recommended` condition of a conditional update (SPEC A3, A4).

Risks are walked in order; each that applies makes the update not recommended (status
False) with the risk's name as the reason when it is a valid condition reason; each that
cannot be evaluated makes it Unknown unless already False. Reasons combine by the table
in `combine_reasons`, messages are joined by a blank line. Failure messages use the
seed's wording ("Exposure to X is unknown due to an evaluation failure: ...").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kupgrade.graph.model import Risk
from kupgrade.risks.rules import Exposure

NOT_EXPOSED = "NotExposedToRisks"
ACCEPTED = "AllExposedRisksAccepted"
EVALUATION_FAILED = "EvaluationFailed"
EXPOSED = "ExposedToRisks"
MULTIPLE = "MultipleReasons"
RECOMMENDED_MESSAGE = (
    "The update is recommended, because none of the conditional update risks apply to this cluster."
)
ACCEPTED_MESSAGE = "The update is recommended, because either risk does not apply to this cluster or it is accepted by cluster admins."
# metav1.Condition's reason format.
REASON_RE = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")


def combine_reasons(now: str, want: str) -> str:
    """The reason after adding `want` to `now` (the version controller's table)."""
    if now in (want, NOT_EXPOSED) or (now == ACCEPTED and want != NOT_EXPOSED):
        return want
    if want == NOT_EXPOSED:
        return now
    if now == EVALUATION_FAILED and want == ACCEPTED:
        return now
    if now == EXPOSED and want in (ACCEPTED, EVALUATION_FAILED):
        return now
    if now == EVALUATION_FAILED and want == EXPOSED:
        return want
    return MULTIPLE


SEED = "seed"  # SPEC A4's wording, the default
CVO_HEAD = "cvo-head"  # today's cluster-version operator
WORDINGS = (SEED, CVO_HEAD)


def unknown_exposure_message(risk: Risk, error: str, wording: str = SEED) -> str:
    """Why a risk's exposure is unknown, in the seed's words or, with CVO_HEAD, as
    cluster-version-operator pkg/cvo/availableupdates.go unknownExposureMessage words it."""
    if wording == CVO_HEAD:
        return (
            f"Could not evaluate exposure to update risk {risk.name} ({error})\n"
            f"  {risk.name} description: {risk.message}\n"
            f"  {risk.name} URL: {risk.url}"
        )
    return f"Exposure to {risk.name} is unknown due to an evaluation failure: {error}\n{risk.message} {risk.url}"


@dataclass(frozen=True)
class Recommendation:
    status: str
    reason: str
    message: str
    exposures: tuple[tuple[str, Exposure], ...] = ()

    def condition(self, transition: str) -> dict[str, str]:
        return {
            "type": "Recommended",
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "lastTransitionTime": transition,
        }


def recommend(
    risks: Sequence[Risk],
    exposure_of: Callable[[Risk], Exposure],
    accepted: Iterable[str] = (),
    accept_enabled: bool = False,
    wording: str = SEED,
) -> Recommendation:
    status, reason, message = "True", NOT_EXPOSED, RECOMMENDED_MESSAGE
    accepted_names = set(accepted) if accept_enabled else set()
    messages: list[str] = []
    seen: list[tuple[str, Exposure]] = []
    for risk in risks:
        exposure = exposure_of(risk)
        seen.append((risk.name, exposure))
        if exposure.applies == "Unknown":
            if status != "False":
                status = "Unknown"
            reason = combine_reasons(reason, EVALUATION_FAILED)
            messages.append(
                unknown_exposure_message(risk, exposure.error or "unknown error", wording)
            )
        elif exposure.applies == "True":
            if risk.name in accepted_names:
                reason = combine_reasons(reason, ACCEPTED)
                message = ACCEPTED_MESSAGE
                continue
            status = "False"
            reason = combine_reasons(reason, risk.name if REASON_RE.match(risk.name) else EXPOSED)
            messages.append(f"{risk.message} {risk.url}")
    if messages:
        message = "\n\n".join(messages)
    return Recommendation(status, reason, message, tuple(seen))
