"""Builder and replicas: snapshots published whole, read whole, switched atomically."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kupgrade.graph.codec import graph_to_json
from kupgrade.graph.policy import PolicyView
from kupgrade.release.oci import Descriptor, canonical_json, sha256
from kupgrade.updateservice.builder import BuilderState
from kupgrade.updateservice.metrics import ServiceMetrics
from kupgrade.updateservice.rebuild import Rebuilt, build_here
from kupgrade.updateservice.rendered import render_all
from kupgrade.updateservice.replica import ReplicaState, newest
from kupgrade.updateservice.snapshot_stores import DirectoryStore, SnapshotStore, open_store
from kupgrade.updateservice.snapshots import FILES, Snapshot, SnapshotError, pack, unpack
from tests.support.conformance import needs_registry
from tests.support.processes import RegistryProcess


@pytest.fixture(scope="module")
def built(sample_dir: Path) -> Rebuilt:
    done = build_here(sample_dir / "releases", sample_dir / "graph-data")
    return Rebuilt(done.graph, done.tarball, done.skipped, render_all(PolicyView(done.graph)))


@pytest.fixture(scope="module")
def snapshot(built: Rebuilt) -> Snapshot:
    return pack(built, built.renders)


def other_snapshot(built: Rebuilt) -> Snapshot:
    """A second, different snapshot: one answer fewer."""
    renders = dict(built.renders)
    renders.pop(sorted(renders)[0])
    return pack(built, renders)


def assert_same(loaded: Rebuilt, built: Rebuilt) -> None:
    assert loaded.tarball == built.tarball
    assert loaded.skipped == built.skipped
    assert loaded.graph.blocked == built.graph.blocked
    assert graph_to_json(loaded.graph) == graph_to_json(built.graph)
    assert {k: (r.body, r.etag, r.gzip_body, r.gzip_etag) for k, r in loaded.renders.items()} == {
        k: (r.body, r.etag, r.gzip_body, r.gzip_etag) for k, r in built.renders.items()
    }


def replica_of(store: SnapshotStore) -> ReplicaState:
    return ReplicaState(store, 60, ServiceMetrics())


# --- round trips ------------------------------------------------------------------------


def test_pack_is_deterministic(built: Rebuilt, snapshot: Snapshot) -> None:
    assert pack(built, dict(reversed(built.renders.items()))).digest == snapshot.digest
    assert other_snapshot(built).digest != snapshot.digest


def test_directory_round_trip(tmp_path: Path, built: Rebuilt, snapshot: Snapshot) -> None:
    store = open_store(str(tmp_path / "snaps"))
    assert isinstance(store, DirectoryStore)
    assert store.publish(snapshot) is True
    assert (tmp_path / "snaps" / "latest").read_text() == f"{snapshot.digest}\n"
    folder = tmp_path / "snaps" / "snapshots" / snapshot.digest.removeprefix("sha256:")
    assert sorted(p.name for p in folder.iterdir()) == sorted([*FILES.values(), "manifest.json"])
    assert not [p for p in (tmp_path / "snaps" / "snapshots").iterdir() if p.name.startswith(".")]
    digest, loaded = newest(store)
    assert digest == snapshot.digest
    assert_same(loaded, built)


@needs_registry
def test_registry_round_trip_and_prune(tmp_path: Path, built: Rebuilt, snapshot: Snapshot) -> None:
    with RegistryProcess(tmp_path / "registry") as registry:
        source = f"{registry.host}/kupgrade/update-graph"
        replica = replica_of(open_store(source))
        assert replica.refresh_once() is False  # nothing published: not ready, one reason
        assert "no snapshot has been published" in replica.readiness()[1]
        store = open_store(source)
        assert store.publish(snapshot) is True
        assert store.publish(snapshot) is False  # the tag names it already
        assert replica.refresh_once() is True
        assert replica.current is not None and replica.current.snapshot == snapshot.digest
        assert_same(replica.current.built, built)
        second = other_snapshot(built)
        assert store.publish(second) is True and store.prune(1) == [snapshot.digest]
        assert replica.refresh_once() is True
        assert replica.current.snapshot == second.digest
        # A tampered blob is refused and the last good snapshot kept.
        third = pack(built, {})
        store.publish(third)
        layer = third.layers[1]
        blob = registry.log.parent / "data/docker/registry/v2/blobs/sha256"
        hexa = layer.digest.removeprefix("sha256:")
        path = blob / hexa[:2] / hexa / "data"
        path.write_bytes(b"\x00" + path.read_bytes()[1:])
        assert replica.refresh_once() is False
        assert replica.current.snapshot == second.digest
        assert replica.last_error is not None and "hashes to" in replica.last_error


# --- the builder --------------------------------------------------------------------------


def test_builder_publishes_only_on_change(sample_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_dir, data)
    metrics = ServiceMetrics()
    store = open_store(str(tmp_path / "snaps"))
    builder = BuilderState(data / "releases", data / "graph-data", 60, metrics, store, keep=2)
    assert builder.readiness()[0] is False
    assert builder.refresh_once() is True
    first = builder.published
    pointer = tmp_path / "snaps" / "latest"
    stamp = pointer.stat().st_mtime_ns
    assert builder.refresh_once() is True  # inputs unchanged: no build, no publication
    # Inputs touched but their content the same: a build, the same digest, no publication.
    channel = sorted((data / "graph-data" / "channels").glob("*.yaml"))[0]
    channel.write_bytes(channel.read_bytes())
    os.utime(channel, (1, 1))
    assert builder.refresh_once() is True
    assert builder.current is not None and builder.current.number == 2
    assert builder.published == first and pointer.stat().st_mtime_ns == stamp

    def published() -> float:
        return metrics.snapshot_publications.labels("published")._value.get()

    assert published() == 1
    # Three real changes: three publications, and only the newest two kept.
    for version in ("4.14.25", "4.14.26", "4.14.27"):
        (data / "graph-data" / "blocked-edges" / "zz.yaml").write_text(f"to: {version}\nfrom: .*\n")
        assert builder.refresh_once() is True
    assert published() == 4 and builder.published != first
    kept = sorted(p.name for p in (tmp_path / "snaps" / "snapshots").iterdir())
    assert len(kept) == 2 and builder.published.removeprefix("sha256:") in kept
    ready, text = builder.readiness()
    assert ready and builder.published in text


def test_builder_retries_a_failed_publication(sample_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "snaps"
    target.write_text("a file where the directory should be")
    builder = BuilderState(
        sample_dir / "releases",
        sample_dir / "graph-data",
        60,
        ServiceMetrics(),
        open_store(str(target)),
    )
    assert builder.refresh_once() is False
    ready, text = builder.readiness()
    assert not ready and "cannot publish" in text
    target.unlink()
    assert builder.refresh_once() is True  # the same generation, published now
    assert builder.published is not None and builder.readiness()[0]


# --- a replica never serves a half-written snapshot --------------------------------------


def _folder(root: Path, snap: Snapshot) -> Path:
    return root / "snapshots" / snap.digest.removeprefix("sha256:")


def _point(root: Path, text: bytes) -> None:
    (root / "latest").write_bytes(text)


def _written(root: Path, snap: Snapshot) -> Path:
    DirectoryStore(root).publish(snap)
    return _folder(root, snap)


def _garbage_manifest(root: Path, snap: Snapshot) -> None:
    garbage = b'{"schemaVersion": 2, "config": [1, 2'
    folder = root / "snapshots" / sha256(garbage).removeprefix("sha256:")
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_bytes(garbage)
    _point(root, f"{sha256(garbage)}\n".encode())


def _temp_without_pointer(root: Path, snap: Snapshot) -> None:
    temporary = root / "snapshots" / ".tmp-0123"
    temporary.mkdir()
    (temporary / "manifest.json").write_bytes(snap.manifest)


FAULTS: dict[str, Callable[[Path, Snapshot], object]] = {
    "temp dir without pointer": _temp_without_pointer,
    "truncated blob": lambda root, snap: (
        p := _written(root, snap) / "renders.msgpack"
    ).write_bytes(p.read_bytes()[:100]),
    "wrong digest": lambda root, snap: (p := _written(root, snap) / "graph.json").write_bytes(
        b" " + p.read_bytes()[1:]
    ),
    "missing file": lambda root, snap: (_written(root, snap) / "graph-data.tar.gz").unlink(),
    "missing snapshot": lambda root, snap: shutil.rmtree(_written(root, snap)),
    "empty source": lambda root, snap: [
        shutil.rmtree(root / "snapshots"),
        (root / "latest").unlink(),
    ],
    "source removed": lambda root, snap: shutil.rmtree(root),
    "garbage JSON": _garbage_manifest,
    "non-UTF-8 pointer": lambda root, snap: _point(root, b"\xff\xfesha256:\n"),
    "pointer not a digest": lambda root, snap: _point(root, b"sha256:../../etc\n"),
    "pointer too long": lambda root, snap: _point(root, b"sha256:" + b"a" * 4096),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_broken_source_keeps_the_last_good_snapshot(
    fault: str, tmp_path: Path, built: Rebuilt, snapshot: Snapshot, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "snaps"
    DirectoryStore(root).publish(snapshot)
    replica = replica_of(DirectoryStore(root))
    assert replica.refresh_once() is True
    FAULTS[fault](root, other_snapshot(built))
    caplog.clear()
    for _ in range(3):  # polled again and again: one log line
        kept = replica.refresh_once()
    assert replica.current is not None and replica.current.snapshot == snapshot.digest
    ready, text = replica.readiness()
    assert ready and snapshot.digest in text
    if fault == "temp dir without pointer":
        assert kept is True and replica.last_error is None  # never looked at
        return
    assert kept is False and replica.last_error is not None
    assert "Traceback" not in caplog.text
    lines = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(lines) == 1 and f"still serving snapshot {snapshot.digest}" in lines[0].message
    # A replica with nothing loaded refuses it too, in one line naming the source.
    with pytest.raises(SnapshotError) as refused:
        newest(DirectoryStore(root))
    assert str(root) in str(refused.value) and "\n" not in str(refused.value)
    fresh = replica_of(DirectoryStore(root))
    assert fresh.refresh_once() is False and fresh.readiness()[0] is False


def test_a_repaired_source_is_served_again(
    tmp_path: Path, built: Rebuilt, snapshot: Snapshot
) -> None:
    root = tmp_path / "snaps"
    store = DirectoryStore(root)
    store.publish(snapshot)
    replica = replica_of(store)
    replica.refresh_once()
    second = other_snapshot(built)
    blob = _written(root, second) / "graph.json"
    good = blob.read_bytes()
    blob.write_bytes(good[:-1])
    assert replica.refresh_once() is False
    blob.write_bytes(good)
    assert replica.refresh_once() is True
    assert replica.current is not None and replica.current.snapshot == second.digest
    assert replica.last_error is None and replica.current.number == 2


# --- the reader takes any bytes -----------------------------------------------------------


def _rebundle(snapshot: Snapshot, replaced: dict[str, bytes]) -> tuple[bytes, dict[str, bytes]]:
    """The snapshot with some blobs replaced (by media type), its digests made consistent:
    the reader must then refuse the content itself."""
    descriptors = [snapshot.config, *snapshot.layers]
    blobs: dict[str, bytes] = {}
    fixed = []
    for d in descriptors:
        data = replaced.get(d.media_type, snapshot.blob(d))
        fixed.append(Descriptor(d.media_type, sha256(data), len(data), d.annotations))
        blobs[sha256(data)] = data
    manifest = canonical_json(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": fixed[0].to_json(),
            "layers": [d.to_json() for d in fixed[1:]],
        }
    )
    return manifest, blobs


def _read(manifest: bytes, blobs: dict[str, bytes]) -> Rebuilt:
    def fetch(descriptor: Descriptor) -> bytes:
        return blobs[descriptor.digest]

    return unpack(manifest, sha256(manifest), fetch, "fuzz")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
GRAPHS = st.fixed_dictionaries(
    {
        "graph": st.fixed_dictionaries(
            {"nodes": st.lists(JSON, max_size=3), "edges": st.lists(JSON, max_size=3)}
        )
        | JSON,
        "blocked": st.lists(st.lists(st.text(max_size=5), max_size=3), max_size=2) | JSON,
        "skipped": JSON,
    }
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.sampled_from(["config", "graph", "renders", "manifest"]),
    raw=st.binary(max_size=64),
    doc=GRAPHS | JSON,
    use_doc=st.booleans(),
)
def test_the_reader_refuses_any_content_in_one_error(
    snapshot: Snapshot, which: str, raw: bytes, doc: object, use_doc: bool
) -> None:
    data = canonical_json(doc) if use_doc else raw
    if which == "manifest":
        manifest, blobs = data, dict(snapshot.blobs)
    else:
        media = {"config": snapshot.config, "graph": snapshot.layers[0]}
        target = media.get(which, snapshot.layers[1]).media_type
        if which == "renders" and use_doc:
            data = msgspec.msgpack.encode(doc)
        manifest, blobs = _rebundle(snapshot, {target: data})
    try:
        loaded = _read(manifest, blobs)
    except SnapshotError as exc:
        assert exc.reason == "integrity" and "\n" not in str(exc)
    else:  # only an input that is a snapshot after all
        assert isinstance(loaded, Rebuilt)


def test_the_reader_reads_what_pack_wrote(snapshot: Snapshot, built: Rebuilt) -> None:
    assert_same(_read(snapshot.manifest, dict(snapshot.blobs)), built)
    with pytest.raises(SnapshotError, match="hashes to"):
        unpack(snapshot.manifest, "sha256:" + "0" * 64, lambda d: b"", "here")


# --- the store's name decides its kind ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("snapshots", "DirectoryStore"),
        ("./snapshots/", "DirectoryStore"),
        ("/var/lib/kupgrade/snapshots", "DirectoryStore"),
        ("127.0.0.1:5000/kupgrade/update-graph", "RegistryStore"),
        ("registry.example.com/ns/graph:prod", "RegistryStore"),
        ("localhost/graph", "RegistryStore"),
    ],
)
def test_open_store(text: str, kind: str) -> None:
    assert type(open_store(text)).__name__ == kind


def test_an_existing_directory_wins_over_a_registry_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "snap.example").mkdir()
    (tmp_path / "snap.example" / "graph").mkdir()
    assert isinstance(open_store("snap.example/graph"), DirectoryStore)
