"""Every command that takes a file, fed what users feed it (issue 17).

Each hostile input goes into each file slot of each command, run as a separate process
under 30 s and 3 GiB. The property: a correct answer, or a non-zero exit with exactly one
line on stderr that names the file — never a traceback, a signal, a hang or an "internal
error". Directory inputs get the hostile file inside them, where the reader walks.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.support.conformance import SHARED, conformance_doc, conformance_path
from tests.support.hostile import (
    CONTENTS,
    SPECIAL,
    Outcome,
    run_bounded,
    special_path,
    write_content,
)

KINDS = [*CONTENTS, *SPECIAL]
OC_EXAMPLES = SHARED / "peer" / "oc" / "status-examples"
# Inputs that are a valid document for some readers (an empty YAML file is an empty
# inventory): for these a zero exit is a correct answer, not a miss.
HARMLESS = {"empty"}
# Inputs no reader can take as a document: the one line must name the file. (The others
# parse, and the reader's complaint is about their meaning: an empty catalog has no
# package; it need not repeat the file name.)
UNREADABLE = set(KINDS) - {"empty", "long-line", "bad-scalar-types", "directory"}
# `make test` runs a deterministic quarter of the matrix, chosen so that every slot meets
# several kinds and every kind several slots; `make fuzz` (KUPGRADE_FUZZ_SECONDS) runs all.
FULL = float(os.environ.get("KUPGRADE_FUZZ_SECONDS", "0")) > 0


def _matrix(slots: list[str]) -> list[tuple[str, str]]:
    return [
        (slot, kind)
        for i, slot in enumerate(slots)
        for j, kind in enumerate(KINDS)
        if FULL or (i + j) % 4 == 0 or kind in ("fifo", "alias-bomb")
    ]


Slot = Callable[[Path], list[str]]


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory, sample_dir: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("world")
    snapshot = root / "m.om"
    snapshot.write_text('# TYPE up gauge\nup{job="a"} 1 1700000000\n# EOF\n')
    graph = root / "graph.json"
    built = run_bounded(
        "graph",
        "build",
        "--releases",
        str(sample_dir / "releases"),
        "--graph-data",
        str(sample_dir / "graph-data"),
        "-o",
        str(graph),
    )
    assert built.returncode == 0, built.stderr
    manifests = root / "manifests"
    shutil.copytree(
        conformance_path("cvo", "payloads", "payloadtest", "release-manifests"), manifests
    )
    # (the copied payload brings its own release-metadata, version 1.0.0-abc, which is kept)
    layout = root / "layout"
    made = run_bounded(
        "release",
        "new",
        "--manifests",
        str(manifests),
        "--version",
        "1.0.0-abc",
        "--to-dir",
        str(layout),
    )
    assert made.returncode == 0, made.stderr
    fleet = root / "fleet.yaml"
    case = next(c for c in conformance_doc("skew", "fleet.yaml")["cases"] if "fleet" in c)
    fleet.write_text(yaml.safe_dump(case["fleet"]))
    capture = root / "capture"
    capture.mkdir()
    for part in ("cv", "co", "mcp", "mc", "node"):
        shutil.copy(OC_EXAMPLES / f"4.14.1-degraded-{part}.yaml", capture / f"c-{part}.yaml")
    return {
        "capture": capture,
        "fleet": fleet,
        "sample": sample_dir,
        "snapshot": snapshot,
        "graph": graph,
        "manifests": manifests,
        "layout": layout,
        "fbc": conformance_path("olm", "catalogs", "operator-registry", "fbc-dir"),
    }


def file_slots(w: dict[str, Path]) -> dict[str, Slot]:
    sample = w["sample"]
    return {
        "graph build --releases": lambda f: [
            "graph",
            "build",
            "--releases",
            str(f),
            "--graph-data",
            str(sample / "graph-data"),
            "-o",
            "-",
        ],
        "graph build --graph-data (tarball)": lambda f: [
            "graph",
            "build",
            "--releases",
            str(sample / "releases"),
            "--graph-data",
            str(f),
            "-o",
            "-",
        ],
        "graph filter": lambda f: [
            "graph",
            "filter",
            "--graph",
            str(f),
            "--channel",
            "stable-4.14",
        ],
        "graph diff": lambda f: ["graph", "diff", str(f), str(w["graph"])],
        "promql eval --metrics": lambda f: ["promql", "eval", "--metrics", str(f), "up"],
        "promql eval --exprs": lambda f: [
            "promql",
            "eval",
            "--metrics",
            str(w["snapshot"]),
            "--exprs",
            str(f),
        ],
        "skew check": lambda f: ["skew", "check", str(f)],
        "skew check-step": lambda f: ["skew", "check-step", str(f), "--step", "node/n1 -> 1.30.2"],
        "skew check --releases": lambda f: [
            "skew",
            "check",
            str(w["fleet"]),
            "--policy",
            "gdc",
            "--releases",
            str(f),
        ],
        "plan": lambda f: ["plan", str(f), "--to", "1.31.2"],
        "olm validate": lambda f: ["olm", "validate", str(f)],
        "olm list": lambda f: ["olm", "list", "bundles", str(f)],
        "olm render": lambda f: ["olm", "render", str(f)],
        "olm render-template": lambda f: ["olm", "render-template", "semver", str(f)],
        "olm resolve": lambda f: [
            "olm",
            "resolve",
            "--source",
            f"s={f}",
            "--package",
            "etcd",
            "--from-source",
            "s",
        ],
        "cluster create --profile": lambda f: ["cluster", "create", "c", "--profile", str(f)],
        "release info": lambda f: ["release", "info", str(f)],
        "release verify --keyring": lambda f: [
            "release",
            "verify",
            "sha256:" + "0" * 64,
            "--store",
            str(f.parent),
            "--keyring",
            str(f),
        ],
        "updates --metrics": lambda f: [
            "updates",
            "--upstream",
            "http://127.0.0.1:9/graph",
            "--channel",
            "stable-4.14",
            "--version",
            "4.14.1",
            "--metrics",
            str(f),
        ],
        "updates --token-file": lambda f: [
            "updates",
            "--upstream",
            "http://127.0.0.1:9/graph",
            "--channel",
            "stable-4.14",
            "--version",
            "4.14.1",
            "--prometheus",
            "http://127.0.0.1:9",
            "--token-file",
            str(f),
        ],
    }


DIR_SLOTS = {
    # (directory in the world, file inside it to make hostile, command)
    "graph build (channel file)": (
        "sample",
        "graph-data/channels/stable-4.14.yaml",
        lambda d: [
            "graph",
            "build",
            "--releases",
            str(d / "releases"),
            "--graph-data",
            str(d / "graph-data"),
            "-o",
            "-",
        ],
    ),
    "graph lint (raw metadata)": (
        "sample",
        "graph-data/raw/metadata.json",
        lambda d: ["graph", "lint", str(d / "graph-data")],
    ),
    "graph build (release metadata)": (
        "sample",
        "releases/4.14.1.json",
        lambda d: [
            "graph",
            "build",
            "--releases",
            str(d / "releases"),
            "--graph-data",
            str(d / "graph-data"),
            "-o",
            "-",
        ],
    ),
    "olm validate (catalog dir)": ("fbc", "operator.yaml", lambda d: ["olm", "validate", str(d)]),
    "olm list (catalog dir)": (
        "fbc",
        "operator.yaml",
        lambda d: ["olm", "list", "packages", str(d)],
    ),
    "upgrade status (captured ClusterVersion)": (
        "capture",
        "c-cv.yaml",
        lambda d: ["upgrade", "status", "--mock-clusterversion", str(d / "c-cv.yaml")],
    ),
    "upgrade status (captured Nodes)": (
        "capture",
        "c-node.yaml",
        lambda d: ["upgrade", "status", "--mock-clusterversion", str(d / "c-cv.yaml")],
    ),
    "release new (manifest)": (
        "manifests",
        "0000_10_a_file.yaml",
        lambda d: [
            "release",
            "new",
            "--manifests",
            str(d),
            "--version",
            "1.0.0-abc",
            "--to-dir",
            str(d.parent / "out"),
        ],
    ),
    "release info (index.json)": ("layout", "index.json", lambda d: ["release", "info", str(d)]),
    "release manifests (release-metadata)": (
        "manifests",
        "release-metadata",
        lambda d: ["release", "manifests", str(d.parent)],
    ),
}


def _place(target: Path, kind: str) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()
    if kind in CONTENTS:
        target.write_bytes(CONTENTS[kind])
    else:
        special_path(target.parent, kind, target.name)


def assert_answered(outcome: Outcome, path: Path, kind: str) -> None:
    assert not outcome.crashed, outcome.stderr[-2000:]
    if outcome.returncode == 0:
        assert kind in HARMLESS or kind == "directory", "a hostile input was accepted"
        return
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, outcome.stderr[-2000:]
    if kind in UNREADABLE:
        assert str(path) in lines[0] or path.name in lines[0], lines[0]


FILE_SLOTS = [
    "graph build --releases",
    "graph build --graph-data (tarball)",
    "graph filter",
    "graph diff",
    "promql eval --metrics",
    "promql eval --exprs",
    "skew check",
    "skew check-step",
    "skew check --releases",
    "plan",
    "olm validate",
    "olm list",
    "olm render",
    "olm render-template",
    "olm resolve",
    "cluster create --profile",
    "release info",
    "release verify --keyring",
    "updates --metrics",
    "updates --token-file",
]


@pytest.mark.parametrize(("slot", "kind"), _matrix(FILE_SLOTS))
def test_hostile_file(world: dict[str, Path], tmp_path: Path, slot: str, kind: str) -> None:
    path = (
        write_content(tmp_path / "in", kind)
        if kind in CONTENTS
        else special_path(tmp_path / "in", kind)
    )
    args = file_slots(world)[slot](path)
    outcome = run_bounded(*args, env={"KUPGRADE_HOME": str(tmp_path / "home")})
    assert_answered(outcome, path, kind)


@pytest.mark.parametrize(("slot", "kind"), _matrix(sorted(DIR_SLOTS)))
def test_hostile_file_in_a_directory(
    world: dict[str, Path], tmp_path: Path, slot: str, kind: str
) -> None:
    name, relative, command = DIR_SLOTS[slot]
    copy = tmp_path / "copy" / world[name].name
    shutil.copytree(world[name], copy, symlinks=True)
    target = copy / relative
    _place(target, kind)
    outcome = run_bounded(*command(copy), env={"KUPGRADE_HOME": str(tmp_path / "home")})
    assert not outcome.crashed, outcome.stderr[-2000:]
    if outcome.returncode != 0:
        lines = [line for line in outcome.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, outcome.stderr[-2000:]
