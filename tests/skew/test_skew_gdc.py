"""Distributed-cloud version rules (SPEC G2-G4): every case of conformance/skew/gdc.yaml,
through the library and through `kupgrade skew check|check-step --policy gdc`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.errors import InputError
from kupgrade.skew.fleet import PREVIEW_TWO_MINOR_POOLS, History, parse_fleet, parse_history
from kupgrade.skew.gdc import WARNINGS, Request, check_fleet, judge_request
from kupgrade.versions import GdcVersion
from tests.support.cli import kupgrade
from tests.support.conformance import conformance_cases, conformance_doc, need_case

GDC = ("skew", "gdc.yaml")


def _history() -> History:
    return parse_history(conformance_doc(*GDC), "gdc.yaml")


def _pairs(items: list[dict[str, str]]) -> set[tuple[str, str]]:
    return {(v["id"], v["object"]) for v in items}


def _request(data: dict[str, Any]) -> Request:
    if "nodepool_of" in data:
        return Request(data["nodepool_of"], GdcVersion.parse(data["to"]), pool=data["pool"])
    return Request(
        data["cluster"],
        GdcVersion.parse(data["to"]),
        bmctl=GdcVersion.parse(data["bmctl"]),
        leave_pools=tuple(data.get("leave_pools", [])),
    )


@pytest.mark.parametrize(
    "case", conformance_cases("cases", *GDC, where=lambda c: c["kind"] == "inventory")
)
def test_gdc_inventory(case: Any) -> None:
    case = need_case(case, *GDC)
    found = check_fleet(parse_fleet(case["fleet"], case["id"], _history()))
    assert {(v.id, v.object) for v in found if v.id not in WARNINGS} == _pairs(
        case["expect"]["violations"]
    )
    assert {(v.id, v.object) for v in found if v.id in WARNINGS} == _pairs(
        case["expect"]["warnings"]
    )


@pytest.mark.parametrize(
    "case", conformance_cases("cases", *GDC, where=lambda c: c["kind"] == "request")
)
def test_gdc_request(case: Any) -> None:
    case = need_case(case, *GDC)
    verdict = judge_request(
        parse_fleet(case["fleet"], case["id"], _history()), _request(case["request"])
    )
    expect = case["expect"]
    assert (verdict.verdict, verdict.rules, verdict.warnings) == (
        expect["verdict"],
        sorted(expect["rules"]),
        sorted(expect["warnings"]),
    )
    for finding in verdict.findings:
        assert finding.message and finding.fix  # SPEC X4: every refusal says what to do


def _write_case(tmp_path: Path, case: dict[str, Any]) -> Path:
    """The case's fleet plus the conformance release order, as a user's inventory file."""
    path = tmp_path / "fleet.yaml"
    doc = conformance_doc(*GDC)
    path.write_text(
        yaml.safe_dump({**case["fleet"], "release_order": doc["release_order_synthetic"]})
    )
    return path


def test_cli_check_and_check_step(tmp_path: Path) -> None:
    cases = {c["id"]: c for c in conformance_doc(*GDC)["cases"]}
    path = _write_case(tmp_path, cases["gdc/GD12b-pool-released-after"])
    done = kupgrade("skew", "check", str(path), "--policy", "gdc", "-o", "json")
    assert done.returncode == 1, done.stderr
    out = json.loads(done.stdout)
    assert [(v["id"], v["objects"]) for v in out["violations"]] == [
        ("G4.pool-released-after", ["nodepool/c/p1", "cluster/c"])
    ]
    # the same fleet without a release history: the chronology rule has nothing to go on
    bare = tmp_path / "bare.yaml"
    bare.write_text(yaml.safe_dump(cases["gdc/GD12b-pool-released-after"]["fleet"]))
    assert kupgrade("skew", "check", str(bare)).returncode == 0
    # ... and a separate history file (here the conformance file itself) supplies it
    history = tmp_path / "history.yaml"
    history.write_text(
        yaml.safe_dump({"release_order": conformance_doc(*GDC)["release_order_synthetic"]})
    )
    assert kupgrade("skew", "check", str(bare), "--releases", str(history)).returncode == 1

    mixed = _write_case(tmp_path, cases["gdc/1.28-admin-mixed-minors"])
    done = kupgrade("skew", "check", str(mixed), "--policy", "gdc", "-o", "json")
    assert done.returncode == 0  # a warning is not a violation
    assert [w["id"] for w in json.loads(done.stdout)["warnings"]] == ["G2.user-mixed-minors"]

    path = _write_case(tmp_path, cases["gdc/GD07-admin-minor-with-old-user"])
    done = kupgrade(
        "skew", "check-step", str(path), "--step", "cluster/admin -> 1.28.100-gke.146", "-o", "json"
    )
    assert done.returncode == 1
    out = json.loads(done.stdout)
    assert (out["verdict"], out["rules"]) == ("refused", ["G2.user-too-old", "G3.users-first"])
    assert "cluster/u2" in out["message"] and "1.16" in out["fix"]

    path = _write_case(tmp_path, cases["gdc/GD17-leave-pool-ok"])
    step = "cluster/c -> 1.28.100-gke.146"
    done = kupgrade(
        "skew", "check-step", str(path), "--step", step, "--leave-pools", "p1", "-o", "json"
    )
    assert (done.returncode, json.loads(done.stdout)["verdict"]) == (0, "allowed")
    done = kupgrade("skew", "check-step", str(path), "--step", step, "--bmctl", "1.28.300-gke.131")
    assert done.returncode == 1 and "G3.tool-version" in done.stdout
    pool_step = ("--step", "nodepool/c/p1 -> 1.16.6", "-o", "json")
    done = kupgrade("skew", "check-step", str(path), *pool_step)
    assert json.loads(done.stdout)["rules"] == ["G4.pool-newer"]  # the cluster is at 1.16.5
    path = _write_case(tmp_path, cases["gdc/GD16-pool-to-later-patch"])
    done = kupgrade("skew", "check-step", str(path), *pool_step)
    assert json.loads(done.stdout)["rules"] == ["G4.pool-released-after"]


@pytest.mark.parametrize(
    ("fleet", "needle"),
    [
        (
            {"clusters": {"u": {"version": "1.28.0", "role": "user", "managed_by": "nope"}}},
            "names management cluster 'nope', which the fleet does not list",
        ),
        ({"clusters": {"u": {"version": "1.28.0", "role": "user"}}}, "names no management cluster"),
        (
            {
                "clusters": {
                    "a": {"version": "1.28.0", "role": "standalone"},
                    "u": {"version": "1.28.0", "role": "user", "managed_by": "a"},
                }
            },
            "only admin and hybrid clusters manage others",
        ),
        (
            {
                "clusters": {
                    "a": {"version": "1.28.0", "role": "admin", "managed_by": "b"},
                    "b": {"version": "1.28.0", "role": "admin", "managed_by": "a"},
                }
            },
            "management links form a cycle: a -> b -> a",
        ),
        (
            {"clusters": {"c": {"version": "1.27.3", "role": "standalone"}}},
            "clusters.c.version: minor 1.27 is not on the release line",
        ),
        (
            {"clusters": {"c": {"version": "one", "role": "standalone"}}},
            "clusters.c.version: 'one' is not a distributed-cloud version",
        ),
        ({"clusters": {"c": {"version": "1.28.0", "role": "boss"}}}, "clusters.c.role"),
        ({"clusters": {"c": {"version": "1.28.0", "pools": {"p": 1.16}}}}, "quote versions"),
        ({"clusters": {}, "release_order": ["1.16.5", "1.16.5"]}, "1.16.5 is listed twice"),
    ],
)
def test_bad_fleets(tmp_path: Path, fleet: dict[str, Any], needle: str) -> None:
    with pytest.raises(InputError) as err:
        parse_fleet(fleet, "fleet.yaml")
    assert needle in str(err.value)
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet))
    done = kupgrade("skew", "check", str(path), "--policy", "gdc")
    assert done.returncode == 1 and needle in done.stderr and "Traceback" not in done.stderr


def test_policy_and_step_mismatch(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        yaml.safe_dump({"clusters": {"c": {"version": "1.28.0", "pools": {"p": "1.28.0"}}}})
    )
    done = kupgrade("skew", "check", str(fleet), "--policy", "k8s-n3")
    assert done.returncode == 1 and "use --policy gdc" in done.stderr
    for step, needle in [
        ("cluster/x -> 1.29.0", "the fleet has no cluster 'x'"),
        ("nodepool/c/q -> 1.28.0", "cluster c has no node pool 'q'"),
        ("kube-apiserver -> 1.29.0", "is not a distributed-cloud step"),
    ]:
        done = kupgrade("skew", "check-step", str(fleet), "--step", step)
        assert done.returncode == 1 and needle in done.stderr, done.stderr


_versions = st.sampled_from(
    [
        "1.15.12",
        "1.16.5",
        "1.16.9",
        "1.28.100-gke.146",
        "1.28.500-gke.120",
        "1.29.0-gke.1449",
        "1.29.100-gke.251",
        "1.30.0-gke.1930",
    ]
)


@given(_versions, st.lists(_versions, min_size=1, max_size=3), st.booleans())
def test_preview_only_relaxes(cluster: str, pools: list[str], preview: bool) -> None:
    """SPEC G4: the two-minor preview annotation never adds a violation."""
    data = {"version": cluster, "pools": {f"p{i}": v for i, v in enumerate(pools)}}
    plain = parse_fleet({"clusters": {"c": data}}, "generated")
    annotated = parse_fleet(
        {"clusters": {"c": {**data, "annotations": {PREVIEW_TWO_MINOR_POOLS: "enable"}}}},
        "generated",
    )
    found = {(v.id, v.object) for v in check_fleet(annotated)}
    assert found <= {(v.id, v.object) for v in check_fleet(plain)}


@given(_versions, _versions, _versions)
def test_pool_to_its_cluster_version_is_never_refused(cluster: str, pool: str, other: str) -> None:
    """Moving a pool up to its cluster's version clears every G4 rule for it."""
    fleet = parse_fleet(
        {"clusters": {"c": {"version": cluster, "pools": {"p": pool, "q": other}}}},
        "generated",
        _history(),
    )
    to = fleet.clusters["c"].version
    verdict = judge_request(fleet, Request("c", to, pool="p"))
    if fleet.clusters["c"].pools["p"] <= to:
        assert verdict.verdict == "allowed"
    else:
        assert verdict.rules == ["G3.downgrade"]
