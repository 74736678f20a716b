"""Fuzzing every reader with mutated real inputs (issue 17).

Each target starts from real documents (the conformance data, the sample dataset, a
release this suite builds) and feeds the reader byte-level or type-level mutations. The
property is the same for all: the reader answers or raises its own one-line error (a
KupgradeError, or the error type its API documents) — never another exception, never a
hang. `make test` runs a small budget; `make fuzz` runs the same targets for ten minutes.
"""

from __future__ import annotations

import functools
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from hypothesis import strategies as st

from kupgrade import intake
from kupgrade.cluster.alerts import read_answer
from kupgrade.errors import KupgradeError
from kupgrade.graph.builder import build_graph
from kupgrade.graph.codec import decode_graph
from kupgrade.graph.graphdata import load_graph_data
from kupgrade.graph.lint import lint_tree
from kupgrade.graph.policy import PolicyError, PolicyView
from kupgrade.graph.releases import load_releases
from kupgrade.graph.tree import Entry, Tree, open_tree, pack_tree
from kupgrade.olm.load import load_catalog
from kupgrade.olm.validate import validate_catalog
from kupgrade.plan.request import PlanRequest, plan_document
from kupgrade.plan.rollout_doc import EXAMPLE, read_rollout
from kupgrade.release.documents import split_documents
from kupgrade.release.metadata import parse_image_references, parse_release_metadata
from kupgrade.release.oci import build_image, layout_files
from kupgrade.release.payload import load_payload
from kupgrade.release.sources import open_payload
from kupgrade.release.verify import SignatureRejectedError, check_signed_content
from kupgrade.risks.promql.engine import evaluate_text
from kupgrade.risks.promql.snapshot import parse_snapshot
from kupgrade.risks.promql.snapshot_file import load_snapshot
from kupgrade.sim.profile import Profile
from kupgrade.sim.profiles import check_profile, load_profile
from kupgrade.skew.fleet import is_fleet_document, parse_fleet
from kupgrade.skew.gdc import check_fleet
from kupgrade.skew.inventory import parse_inventory, read_yaml
from kupgrade.skew.k8s import check as check_k8s
from kupgrade.twin.anonymize import anonymized
from kupgrade.twin.calibration import calibrate
from kupgrade.twin.dump import Dump, read_dumps
from kupgrade.twin.mapping import twin_of
from tests.support.conformance import SHARED, conformance_doc, conformance_path
from tests.support.fuzzkit import fuzz, mutated, swapped
from tests.support.hostile import CONTENTS

TARGETS = 23
SHARE = 1 / TARGETS
USER = (KupgradeError,)


def _bytes_of(paths: list[Path], limit: int = 64 * 1024) -> list[bytes]:
    return [p.read_bytes()[:limit] for p in paths if p.is_file()]


# --- bytes readers -----------------------------------------------------------------------


def test_fuzz_json() -> None:
    e2e = sorted(conformance_path("cincinnati", "e2e").glob("*.json"))[:4]
    seeds = [*_bytes_of(e2e), b'{"a": [1, 2.5, "x", null, true], "b": {"c": {}}}']
    fuzz("json", mutated(seeds), lambda b: intake.decode_json(b, "in.json"), USER, SHARE)


def test_fuzz_yaml() -> None:
    gd = conformance_path("cincinnati", "graph-data-head")
    seeds = _bytes_of(sorted((gd / "blocked-edges").iterdir())[:20])
    seeds += [conformance_path("skew", "k8s.yaml").read_bytes()[:8192]]
    fuzz("yaml", mutated(seeds), lambda b: intake.load_yaml_all(b, "in.yaml"), USER, SHARE)


def test_fuzz_graph_document() -> None:
    e2e = sorted(conformance_path("cincinnati", "e2e").glob("*.json"))[:4]

    def read(data: bytes) -> None:
        PolicyView(decode_graph(data, "graph.json")).filter("stable-4.9", "amd64")

    fuzz("graph-json", mutated(_bytes_of(e2e, 1 << 20)), read, (*USER, PolicyError), SHARE)


@functools.cache
def _graph_data() -> tuple[Tree, Any]:
    root = conformance_path("cincinnati", "e2e")
    raw = load_releases(root / "synthetic-raw.json")
    return open_tree(root / "graph-data-134475077"), raw


def test_fuzz_graph_data_files() -> None:
    tree, raw = _graph_data()
    names = [(d, n) for d, entries in sorted(tree.dirs.items()) for n in sorted(entries)]
    names += [("", n) for n in sorted(tree.top)]
    seeds = [tree.dirs[d][n].data or b"" if d else tree.top[n].data or b"" for d, n in names]

    def read(pick: tuple[int, bytes]) -> None:
        index, data = pick
        where, name = names[index % len(names)]
        copy = Tree(tree.source, dict(tree.top), {k: dict(v) for k, v in tree.dirs.items()})
        (copy.dirs[where] if where else copy.top)[name] = Entry(name, data=data)
        lint_tree(copy)
        build_graph(raw, load_graph_data(copy))

    fuzz("graph-data", st.tuples(st.integers(0, 10**6), mutated(seeds)), read, USER, SHARE)


def test_fuzz_graph_data_tarball(sample_dir: Path) -> None:
    tree = open_tree(sample_dir / "graph-data")
    include = ["version", "raw/metadata.json"] + [
        f"{d}/{n}" for d in ("channels", "blocked-edges") for n in sorted(tree.dirs[d])[:10]
    ]
    seed = pack_tree(tree, include)

    def read(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "gd.tar.gz"
            path.write_bytes(data)
            load_graph_data(open_tree(path))

    fuzz("graph-data-tarball", mutated([seed]), read, USER, SHARE)


def _payload_dir() -> Path:
    return conformance_path("cvo", "payloads", "payloadtest", "release-manifests")


def test_fuzz_manifests() -> None:
    seeds = _bytes_of(sorted(_payload_dir().iterdir()))
    fuzz("manifests", mutated(seeds), lambda b: split_documents(b, "m.yaml"), USER, SHARE)


def test_fuzz_release_metadata_and_image_references() -> None:
    seeds = _bytes_of([_payload_dir() / "release-metadata", _payload_dir() / "image-references"])

    def read(data: bytes) -> None:
        for parse in (parse_release_metadata, parse_image_references):
            try:
                parse(data)
            except KupgradeError:
                continue

    fuzz("release-metadata", mutated(seeds), read, USER, SHARE)


def test_fuzz_signature_content() -> None:
    digest = "sha256:" + "ab" * 32
    seed = json.dumps(
        {
            "critical": {
                "type": "atomic container signature",
                "image": {"docker-manifest-digest": digest},
                "identity": {"docker-reference": "quay.io/x/y"},
            },
            "optional": {"creator": "kupgrade", "timestamp": 1700000000},
        }
    ).encode()
    fuzz(
        "signature-content",
        mutated([seed]),
        lambda b: check_signed_content(b, digest),
        (*USER, SignatureRejectedError),
        SHARE,
    )


def test_fuzz_oci_layout() -> None:
    files = {
        f"release-manifests/{p.name}": p.read_bytes()
        for p in sorted(_payload_dir().iterdir())
        if p.is_file()
    }
    layout = layout_files(build_image(files, "4.15.0"))
    names = sorted(layout)
    seeds = [layout[n] for n in names if not n.startswith("blobs/") or len(layout[n]) < 4096]

    def read(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "layout"
            for name, content in layout.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_bytes(content)
            target = "index.json" if data[:1] == b"{" and b"manifests" in data else names[0]
            (root / target).write_bytes(data)
            load_payload(open_payload(str(root)).files)

    fuzz("oci-layout", mutated(seeds), read, USER, SHARE)


def test_fuzz_catalog() -> None:
    fbc = conformance_path("olm", "catalogs", "operator-registry")
    seeds = _bytes_of(sorted(p for p in fbc.rglob("*") if p.suffix in (".yaml", ".json")))[:20]

    def read(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "catalog.yaml").write_bytes(data)
            validate_catalog(load_catalog(tmp))

    fuzz("catalog", mutated(seeds), read, USER, SHARE)


def test_fuzz_package_manifests() -> None:
    source = conformance_path("olm", "catalogs", "package-manifests", "etcd")
    files = sorted(p for p in source.rglob("*") if p.is_file())

    def read(pick: tuple[int, bytes]) -> None:
        index, data = pick
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "etcd"
            for path in files:
                target = root / path.relative_to(source)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(path.read_bytes())
            (root / files[index % len(files)].relative_to(source)).write_bytes(data)
            validate_catalog(load_catalog(Path(tmp)))

    seeds = _bytes_of(files)
    fuzz("package-manifests", st.tuples(st.integers(0, 99), mutated(seeds)), read, USER, SHARE)


# --- structured documents ------------------------------------------------------------------


def _cases(kind: str, key: str) -> list[Any]:
    return [case[key] for case in conformance_doc("skew", kind)["cases"] if key in case]


def test_fuzz_skew_inventory() -> None:
    seeds = _cases("k8s.yaml", "inventory")

    def read(doc: Any) -> None:
        check_k8s(parse_inventory(doc, "inventory.yaml"), "auto")

    fuzz("skew-inventory", swapped(seeds), read, USER, SHARE)


def test_fuzz_fleet() -> None:
    seeds = [
        case["fleet"] for case in conformance_doc("skew", "fleet.yaml")["cases"] if "fleet" in case
    ]

    def read(doc: Any) -> None:
        if is_fleet_document(doc):
            check_fleet(parse_fleet(doc, "fleet.yaml"))
        else:
            parse_inventory(doc, "fleet.yaml")

    fuzz("fleet", swapped(seeds), read, USER, SHARE)


def test_fuzz_plan_input() -> None:
    seeds = [
        case["fleet"] for case in conformance_doc("skew", "fleet.yaml")["cases"] if "fleet" in case
    ]
    seeds += _cases("k8s.yaml", "inventory")

    def read(doc: Any) -> None:
        plan_document(doc, "plan.yaml", PlanRequest("1.31.2", None, None, None))

    fuzz("plan-input", swapped(seeds), read, USER, SHARE)


def test_fuzz_profile() -> None:
    seed = msgspec.to_builtins(Profile())
    seed["spec"]["pools"] = [{"name": "master", "nodes": 1}, {"name": "worker", "nodes": 2}]

    def read(doc: Any) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "profile.yaml"
            try:
                path.write_text(yaml.safe_dump(doc))
            except (ValueError, yaml.YAMLError):
                return
            check_profile(load_profile(path), str(path))

    fuzz("profile", swapped([seed]), read, USER, SHARE)


def test_fuzz_rollout_document() -> None:
    """SPEC X9: a rollout document, mutated field by field, is read or refused in one line."""
    seed = yaml.safe_load(EXAMPLE)

    def read(doc: Any) -> None:
        read_rollout(doc, "rollout.yaml")

    fuzz("rollout-document", swapped([seed]), read, USER, SHARE)


def test_fuzz_rollout_bytes() -> None:
    """The rollout file as bytes (what `fleet rollout plan FILE` reads): broken YAML and
    encodings are refused as the file's."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rollout.yaml"

        def read(data: bytes) -> None:
            path.write_bytes(data)
            read_rollout(read_yaml(path, "rollout"), str(path))

        fuzz("rollout-bytes", mutated([EXAMPLE.encode()]), read, USER, SHARE)


# --- a cluster's dump, read as a twin (SPEC X7) ------------------------------------------------

CAPTURES = Path(__file__).parents[1] / "data" / "captures" / "must-gather-aws"


def _capture_files() -> list[Path]:
    return sorted(CAPTURES.rglob("*.yaml"))[:40]


def test_fuzz_dump_files() -> None:
    seeds = _bytes_of(_capture_files(), 16 * 1024)

    def read(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "dump" / "pods.yaml"
            path.parent.mkdir()
            path.write_bytes(data)
            twin_of(read_dumps([path.parent]).objects, name="t", start="2024-05-04T10:00:00Z")

    fuzz("dump files", mutated(seeds), read, USER, SHARE)


def test_fuzz_dump_objects() -> None:
    docs = [yaml.safe_load(p.read_bytes()) for p in _capture_files()]

    def read(doc: Any) -> None:
        dump = Dump()
        items = doc.get("items") if isinstance(doc, dict) else None
        for obj in items if isinstance(items, list) else [doc]:
            if isinstance(obj, dict):
                dump.add(obj)
        twin = twin_of(dump.objects, name="t", start="2024-05-04T10:00:00Z")
        calibrate(list(dump.objects.values()), twin.profile.spec)
        check_profile(anonymized(twin.profile), "t")

    fuzz("dump objects", swapped([d for d in docs if isinstance(d, dict)]), read, USER, SHARE)


# --- PromQL ----------------------------------------------------------------------------------


@functools.cache
def _snapshot_text() -> bytes:
    path = sorted(conformance_path("promql", "cases").glob("*.om"))[0]
    lines = path.read_bytes().split(b"\n")[:400]
    return b"\n".join(line for line in lines if not line.startswith(b"# EOF")) + b"\n# EOF\n"


def test_fuzz_snapshot() -> None:
    def read(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "m.om"
            path.write_bytes(data)
            load_snapshot(path)

    fuzz("snapshot", mutated([_snapshot_text()]), read, USER, SHARE)


def test_fuzz_promql_expressions() -> None:
    doc = conformance_doc("promql", "expressions.yaml")
    exprs = [e["expr"].encode() for e in doc.get("expressions", [])][:200]
    snapshot = parse_snapshot(_snapshot_text().decode())
    at = snapshot.latest_ms or 0

    def read(data: bytes) -> None:
        answer = evaluate_text(data.decode("utf-8", "replace"), snapshot, at)
        assert ("error" in answer) != ("resultType" in answer)

    fuzz("promql", mutated(exprs), read, (), SHARE)


def test_fuzz_alerts_answer() -> None:
    examples = SHARED / "peer" / "oc" / "status-examples"
    seeds = _bytes_of(sorted(examples.glob("*-alerts.json")))
    seeds += [
        b'{"data": {"alerts": [{"labels": {"alertname": "A"}, "activeAt": "2024-01-01T00:00:00Z"}]}}'
    ]
    fuzz("alerts", mutated(seeds), lambda b: read_answer(b, "alerts.json"), USER, SHARE)


@pytest.mark.parametrize("kind", ["alias-bomb", "deep"])
def test_known_bombs_are_refused_fast(kind: str) -> None:
    """The two inputs that grew the service to gigabytes: refused in well under a second."""

    data = CONTENTS["alias-bomb"] if kind == "alias-bomb" else CONTENTS["deep-yaml-flow"]
    started = time.perf_counter()
    with pytest.raises(intake.LimitError):
        intake.load_yaml(data, "bomb.yaml")
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("separator", [": ", ":", " : "])
def test_an_alias_bomb_is_refused_however_its_aliases_are_written(separator: str) -> None:
    """The nesting and alias scan is skipped for text where no alias can be (graph-data's
    `.*` regexes, PromQL's ` * `); an alias right after a flow mapping's `:` (no space, as
    `{"k":*a}` allows) must still be seen, and the bomb refused."""
    levels = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        refs = ", ".join(f'"{k}"{separator}*a{i - 1}' for k in "klmnopqrst")
        levels.append(f"a{i}: &a{i} {{{refs}}}")
    with pytest.raises(intake.LimitError):
        intake.load_yaml("\n".join(levels), "bomb.yaml")
