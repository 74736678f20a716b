"""A synthetic file-based catalog of any size: one package, one channel of N bundles.

Made for the scale tests and bench/catalog_scale.py, so that a catalog ten times bigger
than any real one is measured without shipping one. The channel is a straight `replaces`
chain (bundle i replaces bundle i-1, versions ascending with i) shaped like real channels:

- every bundle i with i % 10 == 5 replaces i-2 and skips i-1 (a z-stream branch that the
  chain steps over; opm's chain walk must not go through the skipped entry),
- every bundle i with i % 10 == 0 (i >= 10) has a bounded skipRange over the three
  versions below it (so rendering draws three skipRange edges, not one per bundle).

Variants break it the ways opm must notice: one bundle replacing a name that is not in
the channel (two heads), and the tail replacing an entry above it (a cycle).

Run as `python -m tests.olm.scale VALID MISSING CYCLE` it is the worker of the scale
test: it validates and renders those three catalogs in its own process and prints what
it found as JSON, so that the test can read the worker's own peak memory.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.load import load_catalog
from kupgrade.olm.next_steps import one_step_findings
from kupgrade.olm.render import RenderOptions, render_mermaid
from kupgrade.olm.validate import validate_catalog

PACKAGE = "scale"
CHANNEL = "stable"
MISSING = f"{PACKAGE}.v0.0.0-missing"


def version(i: int) -> str:
    """Bundle i's version: ascending with i, a thousand patch releases per minor."""
    return f"1.{i // 1000}.{i % 1000}"


def bundle_name(i: int) -> str:
    return f"{PACKAGE}.v{version(i)}"


def head(n: int) -> str:
    """The channel's head when nothing is broken: the last (highest) bundle."""
    return bundle_name(n - 1)


def entries(n: int, *, missing_at: int | None = None, cycle: bool = False) -> list[dict[str, Any]]:
    """The channel's entries. `missing_at`: that bundle replaces a name not in the channel.
    `cycle`: bundle 0 (the tail) replaces bundle 2, closing 2 -> 1 -> 0 -> 2."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        entry: dict[str, Any] = {"name": bundle_name(i)}
        if i % 10 == 5:
            entry["replaces"] = bundle_name(i - 2)
            entry["skips"] = [bundle_name(i - 1)]
        elif i > 0:
            entry["replaces"] = bundle_name(i - 1)
        if i % 10 == 0 and i >= 10:
            entry["skipRange"] = f">={version(i - 3)} <{version(i)}"
        out.append(entry)
    if missing_at is not None:
        out[missing_at]["replaces"] = MISSING
    if cycle:
        out[0]["replaces"] = bundle_name(2)
    return out


def _bundle(i: int) -> dict[str, Any]:
    digest = hashlib.sha256(str(i).encode()).hexdigest()
    return {
        "schema": "olm.bundle",
        "name": bundle_name(i),
        "package": PACKAGE,
        "image": f"quay.io/scale/{PACKAGE}-bundle@sha256:{digest}",
        "properties": [
            {"type": "olm.package", "value": {"packageName": PACKAGE, "version": version(i)}},
            {
                "type": "olm.gvk",
                "value": {"group": "scale.example.com", "kind": "Scale", "version": "v1"},
            },
        ],
        "relatedImages": [
            {"name": "operator", "image": f"quay.io/scale/{PACKAGE}@sha256:{digest}"}
        ],
    }


def blobs(
    n: int, *, missing_at: int | None = None, cycle: bool = False
) -> Iterator[dict[str, Any]]:
    """olm.package, olm.channel, then the N olm.bundle blobs (one at a time)."""
    yield {"schema": "olm.package", "name": PACKAGE, "defaultChannel": CHANNEL}
    yield {
        "schema": "olm.channel",
        "package": PACKAGE,
        "name": CHANNEL,
        "entries": entries(n, missing_at=missing_at, cycle=cycle),
    }
    for i in range(n):
        yield _bundle(i)


def write_catalog(
    directory: Path, n: int, *, missing_at: int | None = None, cycle: bool = False
) -> Path:
    """The catalog as one JSON-stream file, `catalog.json`, in `directory` (returned)."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "catalog.json").open("w") as out:
        for blob in blobs(n, missing_at=missing_at, cycle=cycle):
            out.write(json.dumps(blob, separators=(",", ":")))
            out.write("\n")
    return directory


def check(valid: Path, missing: Path, cycle: Path) -> dict[str, Any]:
    """Validate the valid catalog as `kupgrade olm validate` does (opm's checks, then the
    one-step check) and render it as render-graph does; validate the two broken ones."""
    catalog = load_catalog(valid)
    result = validate_catalog(catalog)
    findings = one_step_findings(CatalogIndex.build(catalog)) if result.valid else []
    mermaid = render_mermaid(catalog, RenderOptions(draw_v0_semantics=True), lambda _: None)
    del catalog
    lines = mermaid.splitlines()
    out: dict[str, Any] = {
        "valid": result.to_json() | {"findings": [f.message for f in findings[:5]]},
        "mermaid": {
            "lines": len(lines),
            "first_node": next(
                line.strip() for line in lines if line.startswith(" " * 6) and "-->" not in line
            ),
            "replace": sum("-- replace -->" in line for line in lines),
            "skip": sum("-- skip -->" in line for line in lines),
            "skipRange": sum('-- "skipRange(' in line for line in lines),
        },
    }
    del mermaid, lines
    for name, path in (("missing", missing), ("cycle", cycle)):
        broken = validate_catalog(load_catalog(path))
        out[name] = {"valid": broken.valid, "stage": broken.stage, "leaves": broken.leaves}
    return out


if __name__ == "__main__":
    print(json.dumps(check(*(Path(arg) for arg in sys.argv[1:4]))))
