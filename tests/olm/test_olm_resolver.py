"""The subscription resolver (SPEC F1, F6-F9): every resolver.yaml case under its policy,
the CLI contract, and properties of the walk."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kupgrade.olm.catalog import Catalog, Origin
from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.load import load_catalog
from kupgrade.olm.resolver import resolve_and_walk
from kupgrade.olm.resolver.model import Installed, Source, Subscription
from kupgrade.versions import SemVer, parse_blang
from tests.support.cli import kupgrade
from tests.support.conformance import conformance_cases, conformance_path, need_case
from tests.support.olmkit import compact_blobs, write_blobs

RESOLVER = ("olm", "resolver.yaml")


@functools.cache
def _real_index(path: str) -> CatalogIndex:
    return CatalogIndex.build(load_catalog(conformance_path("olm", path)))


def _index(source: dict[str, Any]) -> CatalogIndex:
    if "path" in source:
        return _real_index(source["path"])
    catalog = Catalog("case")
    for blob in compact_blobs(source):
        catalog.add(blob, Origin("case", 1))
    return CatalogIndex.build(catalog)


def _subscription(case: dict[str, Any]) -> Subscription:
    sub = case["subscription"]
    return Subscription(
        sub["package"],
        sub.get("channel", ""),
        sub["source"],
        sub["sourceNamespace"],
        sub["namespace"],
        sub.get("installPlanApproval", "Automatic"),
        sub.get("startingCSV", ""),
        sub.get("name", ""),
    )


def _check(doc: dict[str, Any], expect: dict[str, Any]) -> None:
    expect.get("why")  # README: informative only, not compared
    if "error" in expect or "error_class" in expect:  # either or both (README)
        for key in ("error", "error_class"):
            if key in expect:
                assert doc[key] == expect[key]
        assert doc["next"] is None
        return
    assert (doc["next"], doc["state"], doc["walk"]) == (
        expect["next"],
        expect["state"],
        expect["walk"],
    )
    for key in ("source", "install_plan"):
        if key in expect:
            assert doc[key] == expect[key]
    assert doc.get("walk_error") == expect.get("walk_error")  # only when the walk cannot end


@pytest.mark.parametrize("case", conformance_cases("cases", *RESOLVER))
def test_resolver_case(case: Any) -> None:
    case = need_case(case, *RESOLVER)
    sources = [
        Source(s["name"], s["namespace"], s.get("priority", 0), _index(s)) for s in case["sources"]
    ]
    installed = case.get("installed")
    current = Installed(installed["name"], parse_blang(installed["version"])) if installed else None
    sub = _subscription(case)
    outcome = resolve_and_walk(
        sources, sub, current, case["policy"], case.get("globalNamespace", "olm")
    )
    doc = outcome.to_json(sub.approval)
    _check(doc, case["expect"])
    if doc.get("next"):
        assert any(c["taken"] and c["candidate"] == doc["next"] for c in doc["considered"])  # X4


def _cli_args(case: dict[str, Any], tmp_path: Path) -> list[str]:
    args = []
    for i, source in enumerate(case["sources"]):
        path = (
            conformance_path("olm", source["path"])
            if "path" in source
            else write_blobs(tmp_path / f"source{i}", compact_blobs(source))
        )
        args += [
            "--source",
            f"{source['name']}={path},namespace={source['namespace']},priority={source.get('priority', 0)}",
        ]
    sub = case["subscription"]
    args += [
        "--package",
        sub["package"],
        "--channel",
        sub.get("channel", ""),
        "--from-source",
        f"{sub['sourceNamespace']}/{sub['source']}",
    ]
    args += [
        "--namespace",
        sub["namespace"],
        "--policy",
        case["policy"],
        "--approval",
        sub.get("installPlanApproval", "Automatic"),
    ]
    args += ["--global-namespace", case.get("globalNamespace", "olm")]
    if case.get("installed"):
        args += [
            "--installed",
            case["installed"]["name"],
            "--installed-version",
            case["installed"]["version"],
        ]
    if sub.get("startingCSV"):
        args += ["--starting-csv", sub["startingCSV"]]
    if sub.get("name"):  # README: the Subscription's own name, which OLM's messages name
        args += ["--name", sub["name"]]
    return args


CLI_CASES = {
    "seed-f8/elasticsearch-skiprange/seed",
    "f9/step3-priority-order",
    "olm-v0/R12-disjoint-chains",
    "seed-f6/manual-approval/seed",
    "real/aws-neuron-version-goes-down/olm-v0",
}


@pytest.mark.parametrize(
    "case", conformance_cases("cases", *RESOLVER, where=lambda c: c["id"] in CLI_CASES)
)
def test_resolve_cli_case(case: Any, tmp_path: Path) -> None:
    case = need_case(case, *RESOLVER)
    result = kupgrade("olm", "resolve", *_cli_args(case, tmp_path), "-o", "json")
    doc = json.loads(result.stdout)
    assert set(doc) >= {"next", "walk", "reason", "state"}
    _check(doc, case["expect"])
    failing = "error" in case["expect"] or "error_class" in case["expect"]
    assert result.returncode == (1 if failing else 0)


def test_resolve_cli_text_explains_the_choice(tmp_path: Path) -> None:
    source = {
        "package": "etcd",
        "channel": "alpha",
        "entries": [
            {"name": "etcdoperator.v0.9.0", "version": "0.9.0"},
            {"name": "etcdoperator.v0.9.1", "version": "0.9.1", "replaces": "etcdoperator.v0.9.0"},
            {
                "name": "etcdoperator.v0.9.2",
                "version": "0.9.2",
                "replaces": "etcdoperator.v0.9.0",
                "skips": ["etcdoperator.v0.9.1"],
            },
        ],
    }
    path = write_blobs(tmp_path / "cat", compact_blobs(source))
    result = kupgrade(
        "olm",
        "resolve",
        "--source",
        f"community={path}",
        "--package",
        "etcd",
        "--channel",
        "alpha",
        "--from-source",
        "community",
        "--installed",
        "etcdoperator.v0.9.0",
        "--installed-version",
        "0.9.0",
    )
    assert result.returncode == 0
    assert "next: etcdoperator.v0.9.2 from olm/community" in result.stdout
    assert (
        "passed: etcdoperator.v0.9.1 in olm/community (step2): skipped by another entry"
        in result.stdout
    )
    bad = kupgrade(
        "olm", "resolve", "--source", "community", "--package", "etcd", "--from-source", "community"
    )
    assert bad.returncode == 1 and "NAME=CATALOG" in bad.stderr


@pytest.mark.parametrize(
    ("package", "channel", "expected"),
    [
        (
            "etcdd",
            "alpha",
            "no operators found in package etcdd in the catalog referenced by subscription etcdd",
        ),
        (
            "etcd",
            "alhpa",
            "no operators found in channel alhpa of package etcd in the catalog referenced by subscription etcd",
        ),
    ],
)
def test_seed_names_a_mistyped_package_or_channel(
    tmp_path: Path, package: str, channel: str, expected: str
) -> None:
    """With a CSV installed, a subscription to what no source has is an error, not a
    subscription at its latest (issue 17): OLM's not-found texts."""
    source = {
        "package": "etcd",
        "channel": "alpha",
        "entries": [
            {"name": "etcdoperator.v0.9.0", "version": "0.9.0"},
        ],
    }
    path = write_blobs(tmp_path / "cat", compact_blobs(source))
    result = kupgrade(
        "olm",
        "resolve",
        "--source",
        f"community={path}",
        "--package",
        package,
        "--channel",
        channel,
        "--from-source",
        "community",
        "--installed",
        "etcdoperator.v0.9.0",
        "--installed-version",
        "0.9.0",
    )
    assert result.returncode == 1
    assert expected in result.stderr
    same = kupgrade(
        "olm",
        "resolve",
        "--source",
        f"community={path}",
        "--package",
        "etcd",
        "--channel",
        "alpha",
        "--from-source",
        "community",
        "--installed",
        "etcdoperator.v0.9.0",
        "--installed-version",
        "0.9.0",
    )
    assert same.returncode == 0 and "AtLatestKnown" in same.stdout


@st.composite
def chains(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int]:
    """A linear channel v0 <- v1 <- ... with random skips and a random head skipRange."""
    size = draw(st.integers(2, 8))
    entries: list[dict[str, Any]] = [{"name": "p.v0", "version": "0.0.0"}]
    for i in range(1, size):
        entry: dict[str, Any] = {
            "name": f"p.v{i}",
            "version": f"{i}.0.0",
            "replaces": f"p.v{i - 1}",
        }
        entries.append(entry)
    if draw(st.booleans()):
        entries[-1]["skipRange"] = f">=0.0.0 <{draw(st.integers(0, size - 1))}.0.0"
    return entries, draw(st.integers(0, size - 1))


@settings(max_examples=60, deadline=None)
@given(chains(), st.sampled_from(["seed", "olm-v0", "semver"]))
def test_every_walk_ends_at_the_head_one_step_at_a_time(
    chain: tuple[list[dict[str, Any]], int], policy: str
) -> None:
    """SPEC F6: from any installed entry of a linear channel, every policy walks to the head
    with each step an edge of the graph, and never revisits a CSV."""
    entries, start = chain
    catalog = Catalog("prop")
    for blob in compact_blobs({"package": "p", "channel": "stable", "entries": entries}):
        catalog.add(blob, Origin("prop", 1))
    source = Source("s", "olm", 0, CatalogIndex.build(catalog))
    sub = Subscription("p", "stable", "s", "olm", "olm")
    installed = Installed(f"p.v{start}", SemVer(start, 0, 0) if start else SemVer(0, 0, 0))
    outcome = resolve_and_walk([source], sub, installed, policy)
    assert outcome.error is None and outcome.walk_error is None
    head = entries[-1]["name"]
    assert (outcome.walk[-1] if outcome.walk else installed.name) == head
    previous = installed.name
    by_name = {e["name"]: e for e in entries}
    for name in outcome.walk:
        entry = by_name[name]
        assert entry.get("replaces") == previous or "skipRange" in entry
        previous = name
