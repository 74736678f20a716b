"""`kupgrade rehearse sweep`: every combination of settings and seeds rehearsed on its own
copy; the spread per combination; the same rows on Ray as in this process; bad input in
one line (SPEC E2, E3, X8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.errors import InputError
from kupgrade.twin.sweep import combos, knob, nearest_rank, parse_seeds, parse_set, strip
from tests.support.cli import run_cli


def _cluster(tmp_path: Path, upstream: str, workers: int = 3) -> None:
    doc = {
        "spec": {
            "version": "4.13.40",
            "channel": "stable-4.14",
            "platformPods": False,
            "pools": [
                {"name": "master", "nodes": 1, "maxUnavailable": 1},
                {"name": "worker", "nodes": workers, "maxUnavailable": 1},
            ],
            "workloads": [
                {
                    "name": "web",
                    "namespace": "apps",
                    "replicas": 2,
                    "pdb": {"maxUnavailable": 1},
                }
            ],
        }
    }
    profile = tmp_path / "profile.yaml"
    profile.write_text(yaml.safe_dump(doc))
    made = run_cli(
        ["cluster", "create", "c", "--profile", str(profile), "--upstream", upstream], tmp_path
    )
    assert made.exit_code == 0, made.stderr


def _sweep(tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    found = run_cli(
        ["rehearse", "sweep", "--cluster", "c", "--to", "4.14.27", "-o", "json", *extra], tmp_path
    )
    return found.exit_code, json.loads(found.stdout) if found.stdout.strip() else {}


def test_every_combination_runs_and_the_spread_is_per_setting(
    tmp_path: Path, upstream: str
) -> None:
    _cluster(tmp_path, upstream)
    code, report = _sweep(tmp_path, "--set", "pools.worker.maxUnavailable=1,3", "--seeds", "1-2")
    assert code == 0, report
    assert [(r["settings"], r["seed"]) for r in report["runs"]] == [
        ({"pools.worker.maxUnavailable": 1}, 1),
        ({"pools.worker.maxUnavailable": 1}, 2),
        ({"pools.worker.maxUnavailable": 3}, 1),
        ({"pools.worker.maxUnavailable": 3}, 2),
    ]
    assert all(r["outcome"] == "completed" for r in report["runs"])
    one, three = report["settings"]
    assert one["runs"] == three["runs"] == 2 and one["completed"] == 2
    # three workers at once finish sooner than one at a time (SPEC E2)
    assert three["duration"]["max"] < one["duration"]["min"]
    for group in (one, three):
        d = group["duration"]
        assert d["min"] <= d["p50"] <= d["p90"] <= d["max"]


def test_the_cluster_is_not_changed_and_text_shows_the_plot(tmp_path: Path, upstream: str) -> None:
    _cluster(tmp_path, upstream, workers=2)
    db = tmp_path / "clusters" / "c" / "cluster.db"
    before = db.read_bytes()
    found = run_cli(
        [
            "rehearse",
            "sweep",
            "--cluster",
            "c",
            "--to",
            "4.14.27",
            "--set",
            "budgets.apps/web.maxUnavailable=0,1",
            "--seeds",
            "3",
        ],
        tmp_path,
    )
    assert db.read_bytes() == before
    text = found.stdout
    assert "budgets.apps/web.maxUnavailable=0" in text and "SPREAD" in text
    # a budget that allows no eviction holds the drain: the run stalls, exit 1 (SPEC E3)
    assert found.exit_code == 1
    assert "run 2 of 2 done" in found.stderr


def test_the_same_rows_on_ray(tmp_path: Path, upstream: str) -> None:
    pytest.importorskip("ray")
    _cluster(tmp_path, upstream, workers=2)
    args = ("--set", "pools.worker.maxUnavailable=1,2", "--seeds", "1-2")
    code, local = _sweep(tmp_path, *args)
    code_ray, on_ray = _sweep(tmp_path, *args, "--engine", "ray")
    assert code == code_ray == 0
    assert on_ray == local


BAD = [
    (["--set", "pools.worker.maxSurge=1"], "names no setting"),
    (["--set", "pools.worker.maxUnavailable=-1"], "not a count or a percentage"),
    (["--set", "pools.worker.maxUnavailable=150%"], "not a count or a percentage"),
    (["--set", "pools.worker.maxUnavailable"], "not KEY=VALUE"),
    (["--set", "pools.nosuch.maxUnavailable=1"], "no MachineConfigPool nosuch"),
    (["--set", "pools.worker.concurrentNodes=2"], "no NodePool worker"),
    (["--set", "budgets.apps/none.minAvailable=1"], "no PodDisruptionBudget apps/none"),
    (["--seeds", "5-1"], "not a range"),
    (["--seeds", "a"], "not a list of seeds"),
    (["--seeds", "1-20000"], "not a range"),
    (["--engine", "spark"], "unknown engine"),
    (["--address", "127.0.0.1:1"], "goes with --engine ray"),
    (["--engine", "ray", "--address", "127.0.0.1:1"], "cannot reach a Ray head"),
    (["--engine", "ray", "--address", "nonsense"], "is not HOST:PORT"),
]


def test_bad_input_is_one_line(tmp_path: Path, upstream: str) -> None:
    _cluster(tmp_path, upstream, workers=1)
    for args, says in BAD:
        found = run_cli(["rehearse", "sweep", "--cluster", "c", "--to", "4.14.27", *args], tmp_path)
        assert found.exit_code != 0, args
        assert says in found.stderr and len(found.stderr.strip().splitlines()) == 1, found.stderr
        assert "Traceback" not in found.stderr


def test_keys_land_on_their_objects() -> None:
    assert knob("pools.worker.maxUnavailable").kind == "MachineConfigPool"
    assert knob("pools.np1.concurrentNodes").path[-1] == "concurrentNodes"
    budget = knob("budgets.ns/db.minAvailable")
    assert (budget.kind, budget.namespace, budget.name, budget.drops) == (
        "PodDisruptionBudget",
        "ns",
        "db",
        ("maxUnavailable",),
    )
    assert parse_set("pools.w.maxUnavailable=1, 10%,1") == ("pools.w.maxUnavailable", [1, "10%"])
    assert parse_seeds("1-3,2,7") == [1, 2, 3, 7]
    with pytest.raises(InputError, match="twice"):
        combos([("a", [1]), ("a", [2])], [1])


@given(st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=50))
def test_nearest_rank_is_a_value_of_the_runs_and_ordered(values: list[float]) -> None:
    p50, p90 = nearest_rank(values, 0.5), nearest_rank(values, 0.9)
    assert p50 in values and p90 in values
    assert min(values) <= p50 <= p90 <= max(values)
    # at least half of the runs are at or under p50
    assert sum(1 for v in values if v <= p50) * 2 >= len(values)


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=30), st.integers(0, 10_000))
def test_a_seed_list_reads_back(seeds: list[int], extra: int) -> None:
    text = ",".join(str(s) for s in seeds)
    assert parse_seeds(text) == list(dict.fromkeys(seeds))
    assert parse_seeds(f"{extra}-{extra + 2}") == [extra, extra + 1, extra + 2]


def test_the_plot_marks_its_spread() -> None:
    group = {"duration": {"min": 0.0, "p50": 50.0, "p90": 75.0, "max": 100.0}}
    line = strip(group, 0.0, 100.0, width=11)
    assert line == "-----|===--"  # 75 of 100 on 11 columns rounds to the ninth
    assert strip({"duration": None}, 0, 1) == ""
