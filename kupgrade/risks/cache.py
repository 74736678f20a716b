"""The version controller's throttled cache in front of a condition backend (SPEC A4).

Monitoring stacks must not be hammered by every cluster re-evaluating dozens of risks:
at most one evaluation per second across all rules, the same rule at most once an hour,
results forgotten after a day, and when a call is allowed it is spent on the stalest
rule that somebody asked for. A rule that has never been evaluated answers with the
"client-side throttling" failure the seed shows until its turn comes.

Time comes from an injected clock (seconds), so tests and the simulator run it without
waiting.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from kupgrade.graph.model import MatchingRule
from kupgrade.risks.rules import Condition, EvaluationError
from kupgrade.versions import go_duration

MIN_BETWEEN_MATCHES = 1.0
MIN_FOR_CONDITION = 3600.0
EXPIRATION = 24 * 3600.0


@dataclass
class _Result:
    access: float
    when: float | None = None
    match: bool = False
    error: str | None = None


def _throttled(elapsed: float) -> EvaluationError:
    return EvaluationError(
        f"client-side throttling: only {go_duration(elapsed)} has elapsed since the last match call "
        "completed for this cluster condition backend; this cached cluster condition request has been "
        "queued for later execution"
    )


class Cache:
    """A Condition wrapping another with the version controller's caching and throttling."""

    def __init__(
        self,
        condition: Condition,
        clock: Callable[[], float],
        *,
        min_between: float = MIN_BETWEEN_MATCHES,
        min_for_condition: float = MIN_FOR_CONDITION,
        expiration: float = EXPIRATION,
    ) -> None:
        self.condition = condition
        self.clock = clock
        self.min_between = min_between
        self.min_for_condition = min_for_condition
        self.expiration = expiration
        self.last_match: float | None = None
        self.results: dict[str, _Result] = {}
        self.evaluations = 0

    def valid(self, rule: MatchingRule) -> str | None:
        return self.condition.valid(rule)

    def match(self, rule: MatchingRule) -> bool:
        key = json.dumps(rule.to_json(), sort_keys=True)
        now = self.clock()
        try:
            return self._match(key, rule, now)
        finally:
            entry = self.results.get(key)
            if entry is None:
                self.results[key] = _Result(access=now)
            else:
                entry.access = now

    def _cached(self, key: str) -> bool | None:
        entry = self.results.get(key)
        if entry is None or entry.when is None:
            return None
        if entry.error is not None:
            raise EvaluationError(entry.error)
        return entry.match

    def _match(self, key: str, rule: MatchingRule, now: float) -> bool:
        self._expire(now)
        if self.last_match is not None and now - self.last_match <= self.min_between:
            cached = self._cached(key)
            if cached is not None:
                return cached
            raise _throttled(now - self.last_match)
        thief, target = self._most_stale(now)
        if thief is None:
            thief, target = key, rule
        if target is None:  # the stalest is still fresh: answer from the cache if we can
            cached = self._cached(key)
            if cached is not None:
                return cached
            thief, target = key, rule
        self._evaluate(thief, target)
        cached = self._cached(key)
        if cached is not None:
            return cached
        raise _throttled(self.clock() - (self.last_match or now))

    def _evaluate(self, key: str, rule: MatchingRule) -> None:
        try:
            matched, error = self.condition.match(rule), None
        except EvaluationError as exc:
            matched, error = False, str(exc)
        self.evaluations += 1
        done = self.clock()
        self.last_match = done
        entry = self.results.setdefault(key, _Result(access=done))
        entry.when, entry.match, entry.error = done, matched, error

    def _expire(self, now: float) -> None:
        for key, entry in list(self.results.items()):
            age = now - (entry.when if entry.when is not None else entry.access)
            if age > self.expiration:
                del self.results[key]

    def _most_stale(self, now: float) -> tuple[str | None, MatchingRule | None]:
        """The stalest entry asked for since its last evaluation; no rule if still fresh."""
        thief: str | None = None
        best: _Result | None = None
        for key, entry in self.results.items():
            when = entry.when if entry.when is not None else float("-inf")
            if entry.when is not None and not entry.access > entry.when:
                continue  # nobody asked since its last evaluation
            best_when = float("-inf") if best is None or best.when is None else best.when
            if (
                best is None
                or when < best_when
                or (when == best_when and entry.access < best.access)
            ):
                thief, best = key, entry
        if thief is None or best is None:
            return None, None
        if best.when is not None and now - best.when < self.min_for_condition:
            return thief, None
        doc = json.loads(thief)
        return thief, MatchingRule(doc["type"], doc.get("promql", {}).get("promql", ""))
