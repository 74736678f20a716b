"""Matching rules of a conditional-update risk, walked as the version controller walks them.

SPEC A4: a risk applies to clusters its `matchingRules` select. Rules are tried in order;
a type we do not know is skipped, an evaluation error is remembered and the walk goes
on, and the first rule that evaluates decides. `Always` matches. A `PromQL` rule matches
when its query returns exactly one sample valued 1, does not when that sample is 0, and
anything else is an evaluation failure whose message says which.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kupgrade.graph.model import MatchingRule, Risk
from kupgrade.risks.promql.values import format_value

QueryResult = dict[str, Any]  # the `data` of /api/v1/query, or {"errorType", "error"}
Query = Callable[[str], QueryResult]


class EvaluationError(Exception):
    """A rule that could not be evaluated; the message goes into the Recommended condition."""


class Condition(Protocol):
    def valid(self, rule: MatchingRule) -> str | None:
        """Why the rule is malformed for this type, or None."""

    def match(self, rule: MatchingRule) -> bool:
        """Whether the cluster matches; raises EvaluationError when it cannot tell."""


NO_METRICS = (
    "executing PromQL query: no metrics to evaluate it against: give --metrics or "
    "--prometheus (a simulated cluster: spec.metrics in its profile)"
)


class NoMetricsCondition:
    """`type: PromQL` when no metrics source was given: every rule fails to evaluate, so
    its risk reads Recommended=Unknown (EvaluationFailed) with the reason, as the version
    controller reports a Prometheus it cannot reach, rather than the target being dropped."""

    def valid(self, rule: MatchingRule) -> str | None:
        return PromQLCondition.valid_query(rule)

    def match(self, rule: MatchingRule) -> bool:
        raise EvaluationError(NO_METRICS)


class AlwaysCondition:
    def valid(self, rule: MatchingRule) -> str | None:
        return None

    def match(self, rule: MatchingRule) -> bool:
        return True


def interpret(result: QueryResult) -> bool:
    """The version controller's reading of a query result (messages as it writes them)."""
    if "error" in result:
        raise EvaluationError(
            f"executing PromQL query: {result.get('errorType')}: {result['error']}"
        )
    kind = result.get("resultType")
    if kind != "vector":
        raise EvaluationError(f"invalid PromQL result type is {kind}, not vector")
    samples = result.get("result") or []
    if len(samples) != 1:
        raise EvaluationError(f"invalid PromQL result length must be one, but is {len(samples)}")
    value = float(samples[0]["value"][1])
    if value == 0:
        return False
    if value == 1:
        return True
    raise EvaluationError(f"invalid PromQL result (must be 0 or 1): {format_value(value)}")


def inject_cluster_id(cluster_id: str, promql: str) -> str:
    """What the version controller queries for a HyperShift hosted cluster: every `_id=""`
    becomes `_id="<cluster id>"`, a plain string replacement
    (cluster-version-operator pkg/cvo/availableupdates.go injectIdIntoString)."""
    return promql.replace('_id=""', f'_id="{cluster_id}"')


class PromQLCondition:
    """`type: PromQL`, answered by any backend that speaks the query API's shape; for a
    hosted cluster (`hosted_id`) each query carries the cluster's id first."""

    def __init__(self, query: Query, hosted_id: str | None = None) -> None:
        self.query = query
        self.hosted_id = hosted_id

    @staticmethod
    def valid_query(rule: MatchingRule) -> str | None:
        if not rule.promql:
            return (
                "the 'promql.promql' query string must be non-empty for 'type: PromQL' conditions"
            )
        return None

    def valid(self, rule: MatchingRule) -> str | None:
        return self.valid_query(rule)

    def match(self, rule: MatchingRule) -> bool:
        promql = rule.promql
        if self.hosted_id is not None:
            promql = inject_cluster_id(self.hosted_id, promql)
        return interpret(self.query(promql))


def _aggregate(errors: list[str]) -> str:
    """Kubernetes' `errors.NewAggregate` text: one message, or `[a, b]` without repeats."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


@dataclass(frozen=True)
class Exposure:
    """Whether a risk applies: "True", "False" or "Unknown" (with the error), and why."""

    applies: str
    error: str | None = None
    trail: tuple[str, ...] = field(default=())


class Registry:
    """Condition types by name; `Always` and `PromQL` as the version controller registers them."""

    def __init__(self, conditions: dict[str, Condition]) -> None:
        self.conditions = conditions

    @classmethod
    def standard(cls, promql: Condition | None) -> Registry:
        """`Always` and `PromQL`; without a backend PromQL rules fail to evaluate."""
        conditions: dict[str, Condition] = {
            "Always": AlwaysCondition(),
            "PromQL": promql if promql is not None else NoMetricsCondition(),
        }
        return cls(conditions)

    def prune_invalid(self, rules: Sequence[MatchingRule]) -> tuple[list[MatchingRule], list[str]]:
        """The rules of known types that are well formed, and a complaint for each other one."""
        valid: list[MatchingRule] = []
        problems: list[str] = []
        for rule in rules:
            condition = self.conditions.get(rule.type)
            if condition is None:
                problems.append(f"skipping unrecognized cluster condition type {rule.type!r}")
                continue
            problem = condition.valid(rule)
            if problem:
                problems.append(problem)
                continue
            valid.append(rule)
        return valid, problems

    def match(self, rules: Sequence[MatchingRule]) -> Exposure:
        errors: list[str] = []
        trail: list[str] = []
        for index, rule in enumerate(rules):
            condition = self.conditions.get(rule.type)
            if condition is None:
                trail.append(f"rule {index} ({rule.type}): unknown type, skipped")
                continue
            try:
                matched = condition.match(rule)
            except EvaluationError as exc:
                errors.append(str(exc))
                trail.append(f"rule {index} ({rule.type}): evaluation failed: {exc}")
                continue
            trail.append(
                f"rule {index} ({rule.type}): {'matches' if matched else 'does not match'}, decides"
            )
            return Exposure("True" if matched else "False", None, tuple(trail))
        if errors:
            return Exposure("Unknown", _aggregate(errors), tuple(trail))
        trail.append("no rule could be evaluated")
        return Exposure(
            "Unknown", "no matching rule of a known type could be evaluated", tuple(trail)
        )

    def per_risk_name(self) -> Callable[[Risk], Exposure]:
        """Exposure by risk name, each evaluated once per pass (as the controller does)."""
        seen: dict[str, Exposure] = {}

        def exposure_of(risk: Risk) -> Exposure:
            if risk.name not in seen:
                seen[risk.name] = self.match(risk.matching_rules)
            return seen[risk.name]

        return exposure_of
