"""The embedded engine's semantics, each checked on a hand-made snapshot.

These are the behaviours risk rules lean on (SPEC A4): lookback, anchored regexes and
absent labels, name dropping, tie order, matching errors. The differential test against
a real Prometheus covers the rest of the language.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.errors import InputError
from kupgrade.risks.promql import PromQLError, Vector, evaluate, parse_snapshot
from kupgrade.risks.promql.engine import evaluate_text, parse_time
from kupgrade.risks.promql.values import format_value

T = 10_000  # evaluation time, seconds

SNAPSHOT = parse_snapshot(
    f"""# TYPE up gauge
up{{job="a",instance="1"}} 1 {T - 30}
up{{job="a",instance="2"}} 0 {T - 299}
up{{job="b",instance="3"}} 1 {T - 301}
# TYPE info gauge
info{{type="AWS"}} 1 {T - 10}
info{{type="GCP",region="x"}} 1 {T - 10}
# TYPE ver gauge
ver{{version="4.13.1"}} 3 {T - 3600}
ver{{version="4.13.1"}} 5 {T - 1800}
ver{{version="4.13.1"}} 4 {T - 900}
# EOF
"""
)


def run(expr: str) -> list[tuple[dict[str, str], float]]:
    value = evaluate(expr, SNAPSHOT, T * 1000)
    assert isinstance(value, Vector)
    return [(dict(labels), v) for labels, v in value]


def test_lookback_is_five_minutes_inclusive() -> None:
    assert [m["instance"] for m, _ in run("up")] == ["1", "2"]


def test_regex_matchers_are_anchored_and_absent_labels_equal_empty() -> None:
    assert run('info{type=~"AW"}') == []
    # series come sorted by label set: region="x" sorts before type="AWS"
    assert [m["type"] for m, _ in run('info{type=~"AWS|GCP"}')] == ["GCP", "AWS"]
    assert [m["type"] for m, _ in run('info{region=""}')] == ["AWS"]
    assert [m["type"] for m, _ in run('info{region!~".+"}')] == ["AWS"]


def test_range_functions_drop_the_name_except_last_over_time() -> None:
    assert run("max_over_time(ver[1h])") == [({"version": "4.13.1"}, 5.0)]
    assert run("last_over_time(ver[1h])") == [({"__name__": "ver", "version": "4.13.1"}, 4.0)]
    assert run("ver") == []  # the last sample is 15 minutes old


def test_comparison_filters_keep_the_name_arithmetic_drops_it() -> None:
    assert run("up == 1") == [({"__name__": "up", "instance": "1", "job": "a"}, 1.0)]
    assert run("up == bool 1") == [
        ({"instance": "1", "job": "a"}, 1.0),
        ({"instance": "2", "job": "a"}, 0.0),
    ]
    assert run("0 * up")[0][0] == {"instance": "1", "job": "a"}
    assert run("1 < up") == []  # a swapped comparison still filters on the vector's value


def test_group_left_copies_labels_from_the_one_side() -> None:
    result = run('up * on () group_left (type) info{type="AWS"}')
    assert result == [
        ({"instance": "1", "job": "a", "type": "AWS"}, 1.0),
        ({"instance": "2", "job": "a", "type": "AWS"}, 0.0),
    ]


def test_matching_errors_are_prometheus_messages() -> None:
    with pytest.raises(
        PromQLError, match=r"found duplicate series for the match group \{\} on the right hand-side"
    ):
        evaluate("up * on () group_left info", SNAPSHOT, T * 1000)
    with pytest.raises(PromQLError, match="many-to-one matching must be explicit"):
        evaluate('up * on () info{type="AWS"}', SNAPSHOT, T * 1000)
    with pytest.raises(PromQLError, match="vector cannot contain metrics with the same labelset"):
        evaluate('label_replace(up, "instance", "", "", "")', SNAPSHOT, T * 1000)


def test_empty_side_gives_empty_result_not_an_error() -> None:
    assert run("up * on () group_left nothing") == []


def test_set_operators_and_tie_order() -> None:
    assert run("group by (job) (up) or on () vector(0)") == [({"job": "a"}, 1.0)]
    assert run("vector(0) or on () group by (job) (up)") == [({}, 0.0)]
    # topk keeps the first of equal values in input order
    assert run("topk(1, info)")[0][0]["type"] == "GCP"
    assert run('topk(1, info{type="AWS"} or info)')[0][0]["type"] == "AWS"


def test_absent_and_scalar() -> None:
    assert run('absent(nothing{job="x", a=~"y"})') == [({"job": "x"}, 1.0)]
    assert run("absent(up)") == []
    assert math.isnan(run("vector(scalar(up))")[0][1])  # two samples: NaN
    assert run('vector(scalar(up{instance="1"}))') == [({}, 1.0)]


def test_errors_are_shaped_like_the_api() -> None:
    assert evaluate_text("sum(", SNAPSHOT, T * 1000)["errorType"] == "bad_data"
    assert (
        evaluate_text("up * on () group_left info", SNAPSHOT, T * 1000)["errorType"] == "execution"
    )
    assert evaluate_text("nosuchfn(up)", SNAPSHOT, T * 1000)["errorType"] == "bad_data"


def test_go_arithmetic() -> None:
    assert run("vector(1) / vector(0)") == [({}, math.inf)]
    assert math.isnan(run("vector(0) % vector(0)")[0][1])
    assert run("vector(2) ^ vector(10)") == [({}, 1024.0)]


def test_query_time_forms() -> None:
    assert parse_time("1767724497") == 1767724497000
    assert parse_time("1767724497.5") == 1767724497500
    assert parse_time("2026-01-06T18:34:57Z") == 1767724497000
    with pytest.raises(PromQLError):
        parse_time("yesterday")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("up 1 100\n", "missing '# EOF'"),
        ("up 1\n# EOF\n", "no timestamp"),
        ('up{a="1} 1 100\n# EOF\n', "malformed label|unterminated"),
        ("up 1 100\nup 2 90\n# EOF\n", "out of order"),
        ("up x 100\n# EOF\n", "not a number"),
        ("# random comment\n# EOF\n", "comment line"),
    ],
)
def test_malformed_snapshots_name_the_line(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as caught:
        parse_snapshot(text, "snap.om")
    assert caught.value.file == "snap.om"
    assert (caught.value.field or "").startswith("line ")


label_values = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\r\x85\u2028\u2029"),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(
    series=st.dictionaries(
        st.tuples(st.sampled_from(["m", "n_total", "x:y"]), label_values),
        st.lists(st.floats(allow_nan=False, width=64), min_size=1, max_size=5),
        min_size=1,
        max_size=6,
    )
)
def test_snapshot_round_trip(series: dict[tuple[str, str], list[float]]) -> None:
    """Any well-formed snapshot reads back to the same series, values and times."""
    lines = []
    for (name, value), points in series.items():
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        lines += [
            f'{name}{{v="{escaped}"}} {format_value(p)} {100 + 15 * i}'
            for i, p in enumerate(points)
        ]
    snapshot = parse_snapshot("\n".join([*lines, "# EOF"]))
    got = {(s.lab["__name__"], s.lab["v"]): list(s.vals) for s in snapshot.series}
    assert got == {k: [float(format_value(p)) for p in v] for k, v in series.items()}
    assert snapshot.latest_ms == max(100 + 15 * (len(v) - 1) for v in series.values()) * 1000
