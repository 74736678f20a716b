"""OLM's own resolver tests (operator-lifecycle-manager pkg/controller/registry/resolver:
TestResolver, TestSolveOperators*, TestSortChannel; transcribed in
../shared/peer/operator-lifecycle-manager/cases.yaml) through `kupgrade olm resolve`,
naming the subscription as OLM does (SPEC F6, F9)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kupgrade.cli.main import app
from kupgrade.olm.catalog import Catalog, Origin
from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.resolver import resolve_and_walk
from kupgrade.olm.resolver.model import Installed, Source, Subscription
from kupgrade.versions import parse_blang
from tests.support.conformance import conformance_cases, need_case
from tests.support.olmkit import compact_blobs, write_blobs

# ../shared/peer, reached from the conformance root so a missing checkout skips alike
CASES = ("..", "peer", "operator-lifecycle-manager", "cases.yaml")


def catalogs(case: dict[str, Any]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The header's rule: each source holds one package as FBC (olm.package with the
    given or first channel as default, an olm.channel per channel, an olm.bundle per entry
    name); several sources of one (name, namespace) are one catalog."""
    merged: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for source in case["sources"]:
        compact = {"package": source["package"], "channels": source["channels"]}
        if "defaultChannel" in source:
            compact["defaultChannel"] = source["defaultChannel"]
        key = (source["name"], source["namespace"])
        merged.setdefault(key, []).extend(compact_blobs(compact))
    return merged


def cli_args(case: dict[str, Any], tmp_path: Path) -> list[str]:
    args: list[str] = []
    for i, ((name, namespace), blobs) in enumerate(catalogs(case).items()):
        path = write_blobs(tmp_path / f"source{i}", blobs)
        args += ["--source", f"{name}={path},namespace={namespace}"]
    sub = case["subscription"]
    args += [
        "--package",
        sub["package"],
        "--channel",
        sub["channel"],
        "--from-source",
        f"{sub['sourceNamespace']}/{sub['source']}",
        "--namespace",
        sub["namespace"],
        "--name",
        sub["name"],
        "--policy",
        case["policy"],
    ]
    if sub.get("startingCSV"):
        args += ["--starting-csv", sub["startingCSV"]]
    installed = case["installed"]
    if installed:
        args += ["--installed", installed["name"], "--installed-version", installed["version"]]
    return args


def check(doc: dict[str, Any], expect: dict[str, Any]) -> None:
    assert doc["next"] == expect["next"], doc.get("error") or doc.get("reason")
    if "error_contains" in expect:
        assert expect["error_contains"] in doc["error"]
    else:
        assert doc.get("error") is None, doc["error"]
    if "state" in expect:
        assert doc["state"] == expect["state"]
    if "source" in expect:
        assert doc["source"] == expect["source"]


@pytest.mark.parametrize("case", conformance_cases("cases", *CASES))
def test_olm_resolver_case(case: Any, tmp_path: Path) -> None:
    case = need_case(case, *CASES)
    result = CliRunner().invoke(app, ["olm", "resolve", *cli_args(case, tmp_path), "-o", "json"])
    doc = json.loads(result.stdout)
    check(doc, case["expect"])
    assert result.exit_code == (1 if "error_contains" in case["expect"] else 0)


@pytest.mark.parametrize("case", conformance_cases("cases", *CASES))
def test_olm_resolver_case_in_the_library(case: Any) -> None:
    """The same through kupgrade.olm.resolver, the sources built in memory."""
    case = need_case(case, *CASES)
    sources = []
    for (name, namespace), blobs in catalogs(case).items():
        catalog = Catalog(f"{namespace}/{name}")
        for i, blob in enumerate(blobs, start=1):
            catalog.add(blob, Origin(catalog.source, i))
        sources.append(Source(name, namespace, 0, CatalogIndex.build(catalog)))
    sub = case["subscription"]
    subscription = Subscription(
        sub["package"],
        sub["channel"],
        sub["source"],
        sub["sourceNamespace"],
        sub["namespace"],
        starting_csv=sub.get("startingCSV", ""),
        name=sub["name"],
    )
    installed = case["installed"]
    current = Installed(installed["name"], parse_blang(installed["version"])) if installed else None
    outcome = resolve_and_walk(sources, subscription, current, case["policy"])
    doc = outcome.to_json(subscription.approval)
    check({"error": None, **doc} if outcome.error is None else doc, case["expect"])


def test_the_subscription_name_defaults_to_the_package(tmp_path: Path) -> None:
    """Without --name the messages name the package, as before."""
    blobs = compact_blobs({"package": "a", "channels": {"alpha": [{"name": "a.v1"}]}})
    path = write_blobs(tmp_path / "c", blobs)
    args = ["--source", f"catsrc={path}", "--package", "a", "--channel", "beta"]
    args += ["--from-source", "catsrc", "--policy", "olm-v0", "-o", "json"]
    result = CliRunner().invoke(app, ["olm", "resolve", *args])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"] == (
        "no operators found in channel beta of package a in the catalog referenced by subscription a"
    )


# --- resolver.go's counts where no OLM test pins them ---------------------------------------


def _resolve(tmp_path: Path, blobs: list[dict[str, Any]], *extra: str) -> tuple[int, Any]:
    path = write_blobs(tmp_path / "c", blobs)
    args = ["--source", f"catsrc={path},namespace=ns", "--from-source", "ns/catsrc"]
    args += ["--package", "a", "--name", "sub-a", *extra, "-o", "json"]
    result = CliRunner().invoke(app, ["olm", "resolve", *args])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("policy", ["olm-v0", "seed"])
def test_a_catalog_without_entries_is_no_catalog(tmp_path: Path, policy: str) -> None:
    """`nall == 0`: a catalog with no channel entry is as good as none."""
    blobs = [{"schema": "olm.package", "name": "a", "defaultChannel": "alpha"}]
    code, doc = _resolve(tmp_path, blobs, "--channel", "alpha", "--policy", policy)
    assert code == 1
    assert doc["error"] == (
        "no operators found from catalog catsrc in namespace ns referenced by subscription sub-a"
    )


def test_an_empty_channel_is_no_channel(tmp_path: Path) -> None:
    """`nch == 0` counts entries: a channel blob without entries has none."""
    blobs = compact_blobs({"package": "a", "channels": {"alpha": [{"name": "a.v1"}]}})
    blobs.append({"schema": "olm.channel", "package": "a", "name": "beta", "entries": []})
    code, doc = _resolve(tmp_path, blobs, "--channel", "beta", "--policy", "olm-v0")
    assert code == 1
    assert doc["error"] == (
        "no operators found in channel beta of package a in the catalog referenced by "
        "subscription sub-a"
    )


def test_a_missing_starting_csv_is_counted_before_the_channel_is_sorted(tmp_path: Path) -> None:
    cycle = [{"name": "a.v1", "replaces": "a.v2"}, {"name": "a.v2", "replaces": "a.v1"}]
    blobs = compact_blobs({"package": "a", "channels": {"alpha": cycle}})
    code, doc = _resolve(tmp_path, blobs, "--policy", "olm-v0", "--starting-csv", "a.v9")
    assert code == 1
    assert doc["error"] == (
        "no operators found with name a.v9 in channel  of package a in the catalog "
        "referenced by subscription sub-a"
    )
