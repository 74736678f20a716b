"""Catalogs at scale: a channel of 50,000 bundles validated and rendered within 1 GB, with
the right head and the right errors when it is broken; the skipRange edges render-graph
draws, found by bisection, against opm's scan of the whole channel on random channels;
and a bundle listed in several channels completed in each (the convert index)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kupgrade.errors import VersionError
from kupgrade.olm.catalog import BundleBlob, Catalog, ChannelBlob, Entry, Property
from kupgrade.olm.load import load_catalog
from kupgrade.olm.render import RenderOptions, draw
from kupgrade.olm.validate import convert
from kupgrade.versions import SemVer, parse_blang, parse_range
from tests.olm import scale
from tests.support.olmkit import write_blobs

REPO = Path(__file__).resolve().parents[2]
BUNDLES = 50_000
MISSING_AT = 25_002  # its replaces names no bundle: the bundle below it is a second head

# The worker runs in a grandchild: Linux carries a parent's high-water mark into a child
# across fork and exec (see kupgrade/resident.py), so the pytest process's own size would be
# read as the worker's. This small driver's RUSAGE_CHILDREN is the worker's alone.
_DRIVER = """
import json, resource, subprocess, sys
done = subprocess.run(
    [sys.executable, "-m", "tests.olm.scale", *sys.argv[1:]], capture_output=True, text=True
)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": done.returncode, "out": done.stdout, "err": done.stderr[-3000:],
                  "maxrss_kib": usage.ru_maxrss}))
"""


def _in_channel(*messages: str) -> list[list[str]]:
    package, channel = f'invalid package "{scale.PACKAGE}"', f'invalid channel "{scale.CHANNEL}"'
    return [["invalid index", package, channel, message] for message in messages]


def test_50000_bundles_validate_and_render_within_a_gigabyte(tmp_path: Path) -> None:
    """opm's chain walk (every path grown at every step) took 8 GB here, and the skipRange
    scan (every entry against every range) minutes; both are linear now."""
    paths = [
        scale.write_catalog(tmp_path / "valid", BUNDLES),
        scale.write_catalog(tmp_path / "missing", BUNDLES, missing_at=MISSING_AT),
        scale.write_catalog(tmp_path / "cycle", BUNDLES, cycle=True),
    ]
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, *map(str, paths)],
        cwd=REPO,  # the repository: `tests.olm.scale` importable
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    report = json.loads(done.stdout)
    assert report["code"] == 0, report["err"]
    assert report["maxrss_kib"] < 1024 * 1024, f"{report['maxrss_kib'] // 1024} MiB peak"
    got = json.loads(report["out"])
    head = scale.head(BUNDLES)
    assert got["valid"] == {
        "valid": True,
        "heads": {scale.PACKAGE: {scale.CHANNEL: head}},
        "warnings": [],
        "findings": [],
    }
    ranges = len(range(10, BUNDLES, 10))
    assert got["mermaid"] == {
        "lines": 12 + BUNDLES + (BUNDLES - 1) + BUNDLES // 10 + 3 * ranges,
        "first_node": f'{scale.PACKAGE}-{scale.CHANNEL}-{head}["{head}"]',
        "replace": BUNDLES - 1,
        "skip": BUNDLES // 10,
        "skipRange": 3 * ranges,  # each range holds the three versions below its bundle
    }
    second = scale.bundle_name(MISSING_AT - 1)
    assert got["missing"] == {
        "valid": False,
        "stage": "model",
        "leaves": _in_channel(f"multiple channel heads found in graph: {second}, {head}"),
    }
    cycle = " -> ".join(scale.bundle_name(i) for i in (2, 1, 0, 2))
    assert got["cycle"] == {
        "valid": False,
        "stage": "model",
        "leaves": _in_channel(f"detected cycle in replaces chain of upgrade graph: {cycle}"),
    }


# --- skipRange edges: bisection against opm's scan -------------------------------------------

VERSIONS = st.builds(
    lambda major, minor, pre: f"{major}.{minor}.0{pre}",
    st.integers(0, 2),
    st.integers(0, 2),
    st.sampled_from(["", "-0", "-alpha", "-rc.1"]),
)
COMPARATOR = st.builds(
    lambda op, version: op + version,
    st.sampled_from(["", "=", "==", "!=", "!", ">", ">=", "<", "<="]),
    VERSIONS | st.sampled_from(["1.x", "0.1.x", "2.x.x"]),
)
RANGES = st.lists(
    st.lists(COMPARATOR, min_size=1, max_size=3).map(" ".join), min_size=1, max_size=2
).map(" || ".join)


@st.composite
def channels(draw_from: st.DrawFn) -> tuple[list[Entry], dict[str, str]]:
    """Entries with random versions (ties, pre-releases, some without a bundle blob at all)
    and random skipRanges."""
    size = draw_from(st.integers(1, 12))
    entries, versions = [], {}
    for i in range(size):
        name = f"op.e{i}"
        if draw_from(st.booleans()) or i == 0:
            versions[name] = draw_from(VERSIONS)
        skip_range = draw_from(st.none() | RANGES) or ""
        entries.append(Entry(name, skipRange=skip_range))
    return entries, versions


def _scanned(entries: list[Entry], versions: dict[str, SemVer]) -> list[tuple[str, str]]:
    """The reference: opm's writer tests every entry against every skipRange
    (alpha/declcfg/write.go), drawing entries by descending version."""
    zero = SemVer(0, 0, 0)
    ordered = sorted(entries, key=lambda e: versions.get(e.name, zero).precedence, reverse=True)
    edges = []
    for entry in ordered:
        try:
            parsed = parse_range(entry.skipRange) if entry.skipRange else None
        except VersionError:
            continue
        if parsed is not None:
            edges += [
                (other.name, entry.name)
                for other in entries
                if versions.get(other.name, zero) in parsed
            ]
    return edges


@given(channels())
def test_skiprange_edges_are_those_of_opms_scan(
    channel: tuple[list[Entry], dict[str, str]],
) -> None:
    entries, versions = channel
    catalog = Catalog(source="memory")
    catalog.channels.append(ChannelBlob(package="op", name="stable", entries=entries))
    for name, version in versions.items():
        value = {"packageName": "op", "version": version}
        catalog.bundles.append(
            BundleBlob(name=name, package="op", properties=[Property("olm.package", value)])
        )
    (drawn,) = draw(catalog, RenderOptions(), lambda _: None)
    got = [(e.source, e.target) for _, e in drawn.edges if e.kind == "skipRange"]
    assert got == _scanned(entries, {n: parse_blang(v) for n, v in versions.items()})


# --- convert: a bundle in several channels --------------------------------------------------


def test_a_bundle_in_several_channels_is_completed_in_each(tmp_path: Path) -> None:
    """opm fills in (and deprecates) a bundle's entry in every channel that lists it."""
    bundle = {
        "schema": "olm.bundle",
        "name": "foo.v1",
        "package": "foo",
        "image": "quay.io/x/foo:v1",
        "properties": [
            {"type": "olm.package", "value": {"packageName": "foo", "version": "1.0.0"}}
        ],
    }
    blobs: list[dict[str, Any]] = [
        {"schema": "olm.package", "name": "foo", "defaultChannel": "a"},
        *(
            {
                "schema": "olm.channel",
                "package": "foo",
                "name": name,
                "entries": [{"name": "foo.v1"}],
            }
            for name in ("a", "b", "c")
        ),
        bundle,
        {
            "schema": "olm.deprecations",
            "package": "foo",
            "entries": [
                {"reference": {"schema": "olm.bundle", "name": "foo.v1"}, "message": "old"}
            ],
        },
    ]
    model = convert(load_catalog(write_blobs(tmp_path / "cat", blobs)))
    for channel in model["foo"].channels.values():
        member = channel.bundles["foo.v1"]
        assert (str(member.version), member.deprecation) == ("1.0.0", "old")
        assert member.blob is not None and member.blob.image == "quay.io/x/foo:v1"
    assert [len(members) for members in model["foo"].members.values()] == [3]
