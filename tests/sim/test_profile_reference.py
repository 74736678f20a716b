"""The profile format a user can look up: the shipped example loads and runs, and the
schema `cluster profile -o json` prints is the one the loader enforces."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from tests.support.cli import kupgrade


def test_the_example_profile_creates_a_cluster_that_upgrades(tmp_path: Path) -> None:
    env = {**os.environ, "KUPGRADE_HOME": str(tmp_path / "home")}
    example = kupgrade("cluster", "profile", env=env)
    assert example.returncode == 0, example.stderr
    path = tmp_path / "profile.yaml"
    path.write_text(example.stdout)
    made = kupgrade("cluster", "create", "ex", "--profile", str(path), "-o", "json", env=env)
    assert made.returncode == 0, made.stderr
    nodes = json.loads(kupgrade("get", "nodes", "--cluster", "ex", "-o", "json", env=env).stdout)
    assert {"worker-a1", "worker-b1", "worker-c1", "master-0"} <= {
        n["metadata"]["name"] for n in nodes["items"]
    }


def _fits(value: object, schema: dict, defs: dict) -> None:
    """The example against the schema: every key is a property of its object, which
    refuses others (additionalProperties false), and required keys are there."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[1]]
    for option in schema.get("anyOf", []):
        if isinstance(value, dict) and "$ref" in option:
            _fits(value, option, defs)
            return
    if isinstance(value, dict) and "properties" in schema:
        assert schema.get("additionalProperties") is False
        assert set(schema.get("required", [])) <= set(value)
        for key, item in value.items():
            assert key in schema["properties"], f"{key} is not in the schema"
            _fits(item, schema["properties"][key], defs)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _fits(item, schema["items"], defs)


def test_the_schema_describes_the_example_and_refuses_what_the_loader_refuses(
    tmp_path: Path,
) -> None:
    schema = json.loads(kupgrade("cluster", "profile", "-o", "json").stdout)
    example = yaml.safe_load(kupgrade("cluster", "profile").stdout)
    _fits(example, schema, schema["$defs"])
    assert "maxUnavalable" not in schema["$defs"]["Pool"]["properties"]
    example["spec"]["pools"][0]["maxUnavalable"] = 1  # a typo the loader refuses
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(example))
    done = kupgrade(
        "cluster",
        "create",
        "x",
        "--profile",
        str(bad),
        env={**os.environ, "KUPGRADE_HOME": str(tmp_path / "h")},
    )
    assert done.returncode != 0 and "maxUnavalable" in done.stderr


def test_the_distributed_cloud_example_creates_a_cluster_that_upgrades(tmp_path: Path) -> None:
    env = {**os.environ, "KUPGRADE_HOME": str(tmp_path / "home")}
    example = kupgrade("cluster", "profile", "--platform", "gdc", env=env)
    assert example.returncode == 0, example.stderr
    schema = json.loads(kupgrade("cluster", "profile", "-o", "json").stdout)
    _fits(yaml.safe_load(example.stdout), schema, schema["$defs"])
    path = tmp_path / "gdc.yaml"
    path.write_text(example.stdout)
    assert kupgrade("cluster", "create", "bm", "--profile", str(path), env=env).returncode == 0
    asked = kupgrade("upgrade", "--cluster", "bm", "--to", "1.29.100-gke.251", env=env)
    assert asked.returncode == 0, asked.stderr
    ran = kupgrade("controller", "run", "--cluster", "bm", "-o", "json", env=env)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["outcome"] == "completed"
    assert report["cluster"]["ABM VERSION"] == "1.29.100-gke.251"
    assert {r["component"] for r in report["downtime"]} >= {"stackdriver", "anetd"}
    assert "metallb" not in {r["component"] for r in report["downtime"]}  # user clusters only
