"""A real catalog is read, validated and indexed with the cycle collector paused (a
million small objects, none of them garbage), and the collector is given back on."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kupgrade.olm import load, properties
from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.load import load_catalog
from kupgrade.olm.validate import validate_catalog
from tests.support.conformance import conformance_path


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


@pytest.mark.usefixtures("collector_on")
def test_a_catalog_is_loaded_validated_and_indexed_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    catalogs = conformance_path("olm", "catalogs", "community-operators-prod")
    path = min(catalogs.glob("*.json"), key=lambda p: p.stat().st_size)
    seen: dict[str, list[bool]] = {"load": [], "validate": [], "index": []}
    step = "load"
    read, parse = load.read_blobs, properties.parse

    def reading(file: Path) -> Iterator[Any]:
        for blob in read(file):
            seen[step].append(gc.isenabled())
            yield blob

    def parsing(props: list[Any]) -> list[properties.Parsed]:
        seen[step].append(gc.isenabled())
        return parse(props)

    monkeypatch.setattr(load, "read_blobs", reading)
    monkeypatch.setattr(properties, "parse", parsing)
    catalog = load_catalog(path)
    assert gc.isenabled()
    step = "validate"
    assert validate_catalog(catalog).valid
    assert gc.isenabled()
    step = "index"
    index = CatalogIndex.build(catalog)
    assert gc.isenabled() and index.packages
    assert all(seen.values()), {k: len(v) for k, v in seen.items()}
    assert not any(flag for flags in seen.values() for flag in flags)
