"""The skew file formats a user can look up: each shipped example is read by the real
reader and checked clean, and the schema printed describes it and refuses a typo."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from kupgrade.cli.main import app
from kupgrade.skew.fleet import parse_fleet
from kupgrade.skew.gdc import check_fleet
from kupgrade.skew.inventory import parse_inventory
from kupgrade.skew.k8s import check
from tests.sim.test_profile_reference import _fits


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_inventory_example_reads_and_fits_its_schema() -> None:
    text = _cli("skew", "reference", "inventory")
    data = yaml.safe_load(text)
    inventory = parse_inventory(data, "example")
    assert [a.name for a in inventory.apiservers] == ["a1", "a2"]
    assert not check(inventory, "auto")
    schema = json.loads(_cli("skew", "reference", "inventory", "-o", "json"))
    _fits(data, schema, schema.get("$defs", {}))
    assert "kube-controller-manager" in schema["$defs"]["Inventory"]["properties"]


def test_the_fleet_example_reads_and_fits_its_schema() -> None:
    data = yaml.safe_load(_cli("skew", "reference", "fleet"))
    fleet = parse_fleet(data, "example")
    assert fleet.clusters["c"].managed_by == "admin"
    assert fleet.clusters["c"].preview_pools
    assert fleet.history.rank  # the dated releases give an order
    assert not check_fleet(fleet)
    schema = json.loads(_cli("skew", "reference", "fleet", "-o", "json"))
    _fits(data, schema, schema["$defs"])
    cluster = schema["$defs"]["ClusterDoc"]
    assert cluster["additionalProperties"] is False
    assert set(cluster["properties"]) == {
        "version",
        "role",
        "managed_by",
        "pools",
        "annotations",
        "labels",
    }
    assert cluster["properties"]["labels"]["additionalProperties"] == {"type": "string"}
    assert yaml.safe_load(_cli("skew", "reference", "fleet", "-o", "yaml")) == schema


def test_an_unknown_reference_is_refused() -> None:
    result = CliRunner().invoke(app, ["skew", "reference", "inventroy"])
    assert result.exit_code == 1 and "inventory or fleet" in result.stderr
