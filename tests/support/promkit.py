"""Random metrics snapshots and PromQL expressions, for checking our engine against Prometheus.

Two kinds of data: snapshots shaped like the conformance cases (the 27 metric names the
graph-data rules query, with the label values those rules look for, and `_id` modes), and
a small synthetic family (`ka`, `kb`, `kc`) on which a grammar draws expressions from the
whole language the engine claims: selectors, ranges, aggregations, operators with every
matching modifier, label functions. Every sample sits 1..29 s off the 30 s grid, as in the
cases, so no sample falls exactly on a window's edge.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SCRAPE_S = 30
HISTORY_S = 2 * 3600


@dataclass
class SeriesSpec:
    name: str
    labels: dict[str, str]
    values: list[float]
    start_s: int  # seconds before the evaluation time of the first sample
    stop_s: int  # seconds before the evaluation time of the last sample
    phase: int


def _format(v: float) -> str:
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "+Inf" if v > 0 else "-Inf"
    return repr(v)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(series: list[SeriesSpec], end_s: int) -> str:
    """OpenMetrics with timestamps: families grouped, series contiguous, `# EOF`."""
    lines: list[str] = []
    by_name: dict[str, list[SeriesSpec]] = {}
    for s in series:
        by_name.setdefault(s.name, []).append(s)
    for name in sorted(by_name):
        lines.append(f"# TYPE {name} gauge")
        seen: set[str] = set()
        for s in by_name[name]:
            body = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(s.labels.items()) if v)
            key = f"{name}{{{body}}}" if body else name
            if key in seen:
                continue
            seen.add(key)
            t = end_s - s.start_s + s.phase
            i = 0
            while t <= end_s - s.stop_s:
                lines.append(f"{key} {_format(s.values[i % len(s.values)])} {t}")
                t += SCRAPE_S
                i += 1
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def _lifetime(rng: random.Random) -> tuple[int, int]:
    """Most series live throughout; some start late or stop early, some long gone."""
    roll = rng.random()
    if roll < 0.7:
        return HISTORY_S, 0
    if roll < 0.8:
        return HISTORY_S, rng.randint(30, 270)  # still inside the 5-minute lookback
    if roll < 0.9:
        return HISTORY_S, rng.randint(300, 3540)  # only max_over_time(...[1h]) sees it
    if roll < 0.95:
        return HISTORY_S, rng.randint(3660, 6000)  # gone
    return rng.randint(600, 3000), 0  # started late


def _values(rng: random.Random, palette: list[float]) -> list[float]:
    if rng.random() < 0.6:
        return [rng.choice(palette)]
    return [rng.choice(palette) for _ in range(rng.randint(2, 6))]


# -- snapshots like the graph-data rules' clusters -------------------------------------------

_ALTERNATIVES = re.compile(r"\|")


def _candidates(matchers: list[str]) -> list[str]:
    """Label values a rule's matchers look for, plus a few that no rule names."""
    out: list[str] = []
    for m in matchers:
        text = m.split('"', 1)[1].rsplit('"', 1)[0] if '"' in m else ""
        if m.startswith(("=~", "!~")):
            for part in _ALTERNATIVES.split(text):
                plain = (
                    part.replace("[.]", ".")
                    .replace("\\\\.", ".")
                    .replace("\\.", ".")
                    .replace(".*", "x")
                )
                if re.fullmatch(r"[\w.\-/ ]+", plain):
                    out.append(plain)
        elif text:
            out.append(text)
    return [*out, "other", "unrelated-value"]


def rule_metrics(shared: Path) -> list[dict[str, Any]]:
    doc = yaml.safe_load((shared / "conformance" / "promql" / "metrics.yaml").read_text())
    return list(doc["metrics"])


def rule_snapshot(
    metrics: list[dict[str, Any]], rng: random.Random, end_s: int, id_mode: str, fanout: int = 1
) -> str:
    """A cluster (or fleet) shaped like the rules expect; `fanout` multiplies the series."""
    ids = {
        "none": [""],
        "single": ["3eb13b90-4668-4257-bdd6-40fb06671ad1"],
        "fleet": ["3eb13b90-4668-4257-bdd6-40fb06671ad1", "4d17951e-85f5-44d1-a731-bb3679428f98"],
    }[id_mode]
    series: list[SeriesSpec] = []
    for metric in metrics:
        if rng.random() < 0.15:
            continue  # absent altogether
        names = [n for n in metric.get("labels", []) if n != "_id"]
        values = {n: _candidates(metric.get("matchers", {}).get(n, [])) for n in names}
        for cluster in ids:
            for _ in range(rng.choice([1, 1, 1, 2, 3, 5]) * fanout):
                labels = {n: rng.choice(values[n]) for n in names if rng.random() < 0.9}
                labels["_id"] = cluster
                labels["instance"] = f"10.0.{rng.randint(0, 3)}.{rng.randint(1, 250)}:9100"
                start, stop = _lifetime(rng)
                palette = [0.0, 1.0, 1.0, 2.0, 0.0, 3.0, -1.0, 0.5]
                series.append(
                    SeriesSpec(
                        metric["name"],
                        labels,
                        _values(rng, palette),
                        start,
                        stop,
                        rng.randint(1, 29),
                    )
                )
    return render(series, end_s)


# -- a synthetic family and a grammar over it ------------------------------------------------

SYNTHETIC = {"ka": ("a", "b", "c"), "kb": ("a", "b"), "kc": ("a",)}
LABEL_VALUES = ("x", "y", "x.y", "")


def synthetic_snapshot(rng: random.Random, end_s: int) -> str:
    series: list[SeriesSpec] = []
    palette = [0.0, 1.0, 2.0, -1.0, 0.5, 3.25, 10.0, 1e21, 1e-7, float("nan")]
    for name, names in SYNTHETIC.items():
        for _ in range(rng.randint(1, 8)):
            labels = {n: rng.choice(LABEL_VALUES) for n in names}
            start, stop = _lifetime(rng)
            values = _values(rng, palette if rng.random() < 0.1 else palette[:-1])
            if rng.random() < 0.3:  # a counter, with a reset now and then
                base = rng.randint(0, 50)
                values = [float(base + 3 * i) if i % 17 else 1.0 for i in range(1, 300)]
            series.append(SeriesSpec(name, labels, values, start, stop, rng.randint(1, 29)))
    return render(series, end_s)


class ExprGen:
    """Random, well-typed PromQL over the synthetic family."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, *options: str) -> str:
        return self.rng.choice(options)

    def labels(self) -> str:
        chosen = self.rng.sample(["a", "b", "c"], self.rng.randint(0, 2))
        return ", ".join(chosen)

    def selector(self) -> str:
        name = self.pick(*SYNTHETIC)
        matchers = []
        for label in SYNTHETIC[name]:
            if self.rng.random() < 0.3:
                op = self.pick("=", "!=", "=~", "!~")
                value = self.pick("x", "y", "", "x|y", "x.*", ".+", "x[.]y")
                matchers.append(f'{label}{op}"{value}"')
        if self.rng.random() < 0.1:
            return "{" + ", ".join([f'__name__="{name}"', *matchers]) + "}"
        return name + ("{" + ", ".join(matchers) + "}" if matchers else "")

    def range_fn(self) -> str:
        fn = self.pick(
            "max_over_time",
            "min_over_time",
            "sum_over_time",
            "count_over_time",
            "avg_over_time",
            "last_over_time",
            "present_over_time",
            "changes",
            "resets",
            "rate",
            "increase",
            "delta",
            "irate",
            "idelta",
            "stddev_over_time",
            "deriv",
        )
        window = self.pick("1m", "5m", "10m", "1h")
        offset = self.pick("", "", "", " offset 5m")
        return f"{fn}({self.selector()}[{window}]{offset})"

    def scalar(self, depth: int) -> str:
        roll = self.rng.random()
        if depth <= 0 or roll < 0.6:
            return self.pick("0", "1", "2", "0.5", "-1", "10")
        if roll < 0.8:
            return f"scalar({self.vector(depth - 1)})"
        return f"({self.scalar(depth - 1)} {self.pick('+', '*', '-')} {self.scalar(depth - 1)})"

    def matching(self, set_op: bool) -> str:
        roll = self.rng.random()
        if roll < 0.4:
            return ""
        kind = self.pick("on", "ignoring")
        text = f" {kind}({self.labels()})"
        if not set_op and self.rng.random() < 0.4:
            text += f" {self.pick('group_left', 'group_right')}({self.labels()})"
        return text

    def vector(self, depth: int) -> str:
        if depth <= 0:
            return self.selector() if self.rng.random() < 0.7 else self.range_fn()
        roll = self.rng.randrange(15)
        sub = depth - 1
        if roll == 0:
            return self.selector()
        if roll == 1:
            return self.range_fn()
        if roll in (2, 3):
            op = self.pick(
                "sum", "max", "min", "count", "group", "avg", "topk", "bottomk", "stddev"
            )
            param = f"{self.pick('1', '2')}, " if op in ("topk", "bottomk") else ""
            grouping = self.pick("", f" by ({self.labels()})", f" without ({self.labels()})")
            if self.rng.random() < 0.5:
                return f"{op}{grouping} ({param}{self.vector(sub)})"
            return f"{op}({param}{self.vector(sub)}){grouping}"
        if roll in (4, 5):
            op = self.pick("+", "-", "*", "/", "%", "^", "==", "!=", ">", "<", ">=", "<=")
            if op == "^":
                # Integer exponents only: for fractional ones Go's Pow goes through its
                # assembly Exp, whose last digit depends on the CPU having FMA.
                return f"({self.vector(sub)} ^ {self.pick('0', '1', '2', '3', '-1', '10')})"
            bool_ = (
                " bool"
                if op in ("==", "!=", ">", "<", ">=", "<=") and self.rng.random() < 0.4
                else ""
            )
            if self.rng.random() < 0.5:
                return f"({self.vector(sub)} {op}{bool_} {self.scalar(sub)})"
            return f"({self.scalar(sub)} {op}{bool_} {self.vector(sub)})"
        if roll in (6, 7):
            op = self.pick("+", "*", "-", "/", "==", ">", "<=")
            bool_ = " bool" if op in ("==", ">", "<=") and self.rng.random() < 0.3 else ""
            return f"({self.vector(sub)} {op}{bool_}{self.matching(False)} {self.vector(sub)})"
        if roll in (8, 9):
            op = self.pick("and", "or", "unless")
            return f"({self.vector(sub)} {op}{self.matching(True)} {self.vector(sub)})"
        if roll == 10:
            dst = self.pick("a", "d", "b")
            repl = self.pick("$1", "v-$1", "${1}z", "", "$2")
            src = self.pick("a", "b", "missing")
            regex = self.pick("(.*)", "x(.*)", "(x|y)", "(.)(.)", ".*")
            return f'label_replace({self.vector(sub)}, "{dst}", "{repl}", "{src}", "{regex}")'
        if roll == 11:
            return f'label_join({self.vector(sub)}, "{self.pick("a", "j")}", "{self.pick("-", "")}", "a", "b")'
        if roll == 12:
            return self.pick(
                f"{self.pick('max_over_time', 'count_over_time', 'sum_over_time')}(({self.vector(sub)})[10m:{self.pick('1m', '2m', '')}])",
                f'count_values("v", {self.vector(sub)})',
                f"quantile({self.pick('0.5', '0.9', '0', '1')}, {self.vector(sub)})",
                f"sort_desc({self.vector(sub)})",
                f"{self.pick('ceil', 'floor', 'round', 'sgn', 'ln', 'sqrt')}({self.vector(sub)})",
            )
        if roll == 13:
            return self.pick(
                f"absent({self.selector()})",
                f"absent_over_time({self.selector()}[5m])",
                f"vector({self.scalar(sub)})",
                f"-{self.vector(sub)}",
                f"abs({self.vector(sub)})",
                f"clamp_max({self.vector(sub)}, 1)",
                f"timestamp({self.selector()})",
            )
        return f"({self.vector(sub)})"


def expressions(rng: random.Random, count: int) -> Iterator[str]:
    gen = ExprGen(rng)
    for _ in range(count):
        yield gen.vector(rng.randint(1, 4))
