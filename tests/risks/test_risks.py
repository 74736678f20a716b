"""matchingRules, the Recommended condition and the throttled cache (SPEC A3, A4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kupgrade.graph.model import MatchingRule, Risk
from kupgrade.risks.cache import Cache
from kupgrade.risks.recommend import CVO_HEAD, combine_reasons, recommend
from kupgrade.risks.rules import EvaluationError, Exposure, PromQLCondition, Registry, interpret
from kupgrade.versions import go_duration
from tests.support.caseuse import unused
from tests.support.cli import kupgrade as kupgrade_cli
from tests.support.conformance import conformance_cases, need_case


def vector(*values: str) -> dict[str, Any]:
    return {"resultType": "vector", "result": [{"metric": {}, "value": [1, v]} for v in values]}


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (vector(), "length must be one, but is 0"),
        (vector("1", "0"), "length must be one, but is 2"),
        (vector("2"), "must be 0 or 1): 2"),
        ({"resultType": "scalar", "result": [1, "1"]}, "result type is scalar, not vector"),
        (
            {"errorType": "bad_data", "error": "parse error"},
            "executing PromQL query: bad_data: parse error",
        ),
    ],
)
def test_promql_failures_say_which(result: dict[str, Any], message: str) -> None:
    with pytest.raises(EvaluationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        interpret(result)


def test_promql_one_sample_decides() -> None:
    assert interpret(vector("1")) is True
    assert interpret(vector("0")) is False


def test_rules_walk_in_order() -> None:
    answers = {
        "bad": {"errorType": "execution", "error": "boom"},
        "yes": vector("1"),
        "no": vector("0"),
    }
    registry = Registry.standard(PromQLCondition(answers.__getitem__))
    rule = lambda q: MatchingRule("PromQL", q)  # noqa: E731
    # an unknown type is skipped, an error remembered, the first evaluable rule decides
    exposure = registry.match(
        [MatchingRule("Telemetry"), rule("bad"), rule("no"), MatchingRule("Always")]
    )
    assert exposure.applies == "False" and exposure.error is None
    assert "unknown type, skipped" in exposure.trail[0] and "evaluation failed" in exposure.trail[1]
    assert registry.match([rule("bad"), MatchingRule("Always")]).applies == "True"
    failed = registry.match([rule("bad"), rule("bad")])
    assert failed.applies == "Unknown" and failed.error == "executing PromQL query: execution: boom"
    assert registry.match([MatchingRule("Telemetry")]).applies == "Unknown"
    assert registry.prune_invalid([MatchingRule("PromQL", ""), MatchingRule("Nope"), rule("yes")])[
        0
    ] == [rule("yes")]


def _risk(doc: dict[str, Any]) -> tuple[Risk, Exposure]:
    risk = Risk(doc.get("url", ""), doc["name"], doc.get("message", ""), ())
    return risk, Exposure(str(doc["applies"]), doc.get("error"))


@pytest.mark.parametrize("case", conformance_cases("recommended_aggregation", "cvo", "status.yaml"))
def test_recommended_aggregation_cases(case: Any) -> None:
    case = need_case(case, "cvo", "status.yaml")
    pairs = [_risk(r) for r in case["input"]["risks"]]
    exposures = {id(risk): exposure for risk, exposure in pairs}
    got = recommend(
        [r for r, _ in pairs],
        lambda r: exposures[id(r)],
        case["input"]["accept_risks"],
        case["input"]["accept_risks_enabled"],
    )
    expect = case["expect"]
    assert (got.status, got.reason, got.message) == (
        expect["status"],
        expect["reason"],
        expect["message"],
    ), case["id"]
    if "message_cvo_head" in expect:  # today's CVO words evaluation failures otherwise
        head = recommend(
            [r for r, _ in pairs],
            lambda r: exposures[id(r)],
            case["input"]["accept_risks"],
            case["input"]["accept_risks_enabled"],
            wording=CVO_HEAD,
        )
        assert head.message == expect["message_cvo_head"], case["id"]


@pytest.mark.parametrize(
    "table", conformance_cases("recommended_reason_table", "cvo", "status.yaml")
)
def test_recommended_reason_table(table: Any) -> None:
    table = need_case(table, "cvo", "status.yaml")
    # `derived` rows stand for any valid risk name, not only the one written: provenance.
    unused(table, "rows[].derived")
    for row in table["rows"]:
        assert combine_reasons(row["now"], row["add"]) == row["result"], row


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Counting:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def valid(self, rule: MatchingRule) -> str | None:
        return None

    def match(self, rule: MatchingRule) -> bool:
        self.calls.append(rule.promql)
        return rule.promql == "yes"


def test_cache_throttles_and_steals_for_the_stalest() -> None:
    clock, backend = Clock(), Counting()
    cache = Cache(backend, clock)
    a, b = MatchingRule("PromQL", "yes"), MatchingRule("PromQL", "no")
    assert cache.match(a) is True  # first call evaluates at once
    clock.now += 0.000018061
    with pytest.raises(
        EvaluationError, match=r"client-side throttling: only 18\.061µs has elapsed"
    ):
        cache.match(b)  # never evaluated, within a second of the last call
    assert cache.match(a) is True  # cached answers are served while throttled
    clock.now += 2
    assert cache.match(b) is False  # b was queued and is the stalest: it gets the call
    clock.now += 2
    assert cache.match(a) is True and backend.calls == ["yes", "no"]  # fresh for an hour
    clock.now += 3601
    cache.match(b)  # after an hour, a call is spent on the stalest requested rule
    assert len(backend.calls) == 3
    clock.now += 25 * 3600
    cache.match(a)
    assert len(cache.results) <= 2  # entries older than a day were expired and re-asked


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.000018061, "18.061µs"), (1.5, "1.5s"), (0.25, "250ms"), (3723, "1h2m3s"), (0, "0s")],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def test_a_hosted_cluster_queries_with_its_id() -> None:
    """availableupdates.go injectIdIntoString: every _id="" names the hosted cluster."""
    asked: list[str] = []

    def query(expr: str) -> dict[str, Any]:
        asked.append(expr)
        return {"resultType": "vector", "result": [{"metric": {}, "value": [0, "1"]}]}

    rule = MatchingRule("PromQL", 'a{_id=""} or on (_id) b{_id="",x="y"}')
    assert PromQLCondition(query, hosted_id="c1").match(rule)
    assert PromQLCondition(query).match(rule)
    assert asked == ['a{_id="c1"} or on (_id) b{_id="c1",x="y"}', rule.promql]


def test_hosted_needs_an_id(tmp_path: Path) -> None:
    snapshot = tmp_path / "x.om"
    snapshot.write_text("up 1 1\n# EOF\n")
    done = kupgrade_cli(
        "updates",
        "--upstream",
        "http://127.0.0.1:9/graph",
        "--channel",
        "c",
        "--version",
        "4.14.1",
        "--metrics",
        str(snapshot),
        "--hosted",
    )
    assert done.returncode == 1
    assert "--hosted: needs the cluster's --id" in done.stderr
