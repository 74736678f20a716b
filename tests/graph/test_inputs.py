"""Reading inputs: graph-data directories and tarballs, release-metadata directories, graph JSON."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from kupgrade.errors import InputError
from kupgrade.graph.codec import decode_graph, encode_graph
from kupgrade.graph.loading import build_from_paths, fingerprint
from kupgrade.graph.releases import load_releases
from kupgrade.graph.tree import open_tree
from kupgrade.updateservice.rebuild import graph_data_tarball


def make_tar(path: Path, members: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return path


def test_tarball_and_directory_build_the_same_graph(sample_dir: Path, tmp_path: Path) -> None:
    tgz = tmp_path / "gd.tar.gz"
    with tarfile.open(tgz, "w:gz") as archive:
        archive.add(sample_dir / "graph-data", arcname="./")
    from_dir = build_from_paths(sample_dir / "releases", sample_dir / "graph-data")
    from_tar = build_from_paths(sample_dir / "releases", tgz)
    assert encode_graph(from_dir.graph) == encode_graph(from_tar.graph)
    assert from_dir.tree.digest() == from_tar.tree.digest()


def test_graph_data_tarball_round_trips_and_is_deterministic(
    sample_dir: Path, tmp_path: Path
) -> None:
    tree = open_tree(sample_dir / "graph-data")
    packed = graph_data_tarball(tree)
    assert packed == graph_data_tarball(tree)
    path = tmp_path / "served.tar.gz"
    path.write_bytes(packed)
    assert open_tree(path).digest() == tree.digest()


def test_hostile_tarball_members_are_not_read(tmp_path: Path) -> None:
    members = {
        "version": b"1.1.0",
        "raw/metadata.json": b"{}",
        "channels/ok.yaml": b"name: a-1\nversions: []\n",
        "../escape.yaml": b"x",
        "/abs/channels/x.yaml": b"x",
        "channels/deep/nested.yaml": b"x",
    }
    path = make_tar(tmp_path / "t.tgz", members, links={"blocked-edges/link.yaml": "/etc/passwd"})
    tree = open_tree(path)
    assert sorted(tree.dirs["channels"]) == ["ok.yaml"]
    link = tree.dirs["blocked-edges"]["link.yaml"]
    assert link.data is None and "not a regular file" in (link.problem or "")
    assert not (tmp_path.parent / "escape.yaml").exists()


def test_symlink_out_of_a_directory_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "gd"
    (root / "channels").mkdir(parents=True)
    secret = tmp_path / "secret.yaml"
    secret.write_text("name: s-1\nversions: []\n")
    os.symlink(secret, root / "channels" / "leak.yaml")
    entry = open_tree(root).dirs["channels"]["leak.yaml"]
    assert entry.data is None and "outside" in (entry.problem or "")


def test_a_symlink_loop_is_named_and_the_rest_read(tmp_path: Path) -> None:
    root = tmp_path / "gd"
    (root / "blocked-edges").mkdir(parents=True)
    os.symlink("b.yaml", root / "blocked-edges" / "a.yaml")
    os.symlink("a.yaml", root / "blocked-edges" / "b.yaml")
    os.symlink("self.yaml", root / "blocked-edges" / "self.yaml")
    (root / "blocked-edges" / "ok.yaml").write_text("to: 4.1.0\nfrom: .*\n")
    os.symlink(".", root / "blocked-edges" / "here")  # a directory looping back: not followed
    found = open_tree(root).dirs["blocked-edges"]
    for name in ("a.yaml", "b.yaml", "self.yaml"):
        assert found[name].data is None and found[name].problem == "is a symbolic link that loops"
    assert found["ok.yaml"].data is not None


def test_not_a_tarball(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tgz"
    junk.write_bytes(b"not a tar at all")
    with pytest.raises(InputError, match="not a readable tar archive"):
        open_tree(junk)


def release_doc(
    version: str, previous: list[str], arch: str = "amd64", **extra: object
) -> dict[str, object]:
    doc: dict[str, object] = {
        "kind": "cincinnati-metadata-v0",
        "version": version,
        "previous": previous,
        "next": [],
        "metadata": {"url": f"https://errata/{version}"},
        "payload": "quay.io/ocp/release@sha256:" + "ab" * 32,
        "architecture": arch,
    }
    doc.update(extra)
    return doc


def write_releases(root: Path, docs: list[dict[str, object]]) -> Path:
    for i, doc in enumerate(docs):
        path = root / f"sub{i % 2}" / f"r{i}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
    return root


def test_release_metadata_directory(tmp_path: Path) -> None:
    root = write_releases(
        tmp_path / "rel",
        [release_doc("4.14.1", ["4.14.0"]), release_doc("4.14.2", ["4.14.1"], next=["4.15.0"])],
    )
    graph = load_releases(root)
    versions = {n.version: n for n in graph.nodes}
    assert set(versions) == {"4.14.0+amd64", "4.14.1+amd64", "4.14.2+amd64", "4.15.0+amd64"}
    assert not versions["4.14.0+amd64"].concrete and not versions["4.15.0+amd64"].concrete
    meta = versions["4.14.1+amd64"].metadata or {}
    assert meta["io.openshift.upgrades.graph.release.manifestref"] == "sha256:" + "ab" * 32
    assert meta["io.openshift.upgrades.graph.release.arch"] == "amd64"
    edges = {(graph.nodes[a].version, graph.nodes[b].version) for a, b in graph.edges()}
    assert edges == {
        ("4.14.0+amd64", "4.14.1+amd64"),
        ("4.14.1+amd64", "4.14.2+amd64"),
        ("4.14.2+amd64", "4.15.0+amd64"),
    }


@pytest.mark.parametrize(
    ("doc", "field", "message"),
    [
        (
            release_doc("4.14.1", [], payload="quay.io/ocp/release:4.14.1"),
            "payload",
            "pinned by digest",
        ),
        (release_doc("4.14", []), "version", "SemVer"),
        (release_doc("4.14.1+amd64", []), "version", "build metadata"),
        (release_doc("4.14.1", ["nope"]), "previous[0]", "SemVer"),
        (release_doc("4.14.1", [], kind="something"), "kind", "cincinnati-metadata-v0"),
        (release_doc("4.14.1", [], architecture="AMD64"), "architecture", "[0-9a-z]+"),
        (release_doc("4.14.1", [], metadata={"url": 3}), "metadata", "string values"),
    ],
)
def test_release_metadata_errors_name_file_and_field(
    tmp_path: Path, doc: dict[str, object], field: str, message: str
) -> None:
    root = write_releases(tmp_path / "rel", [doc])
    with pytest.raises(InputError) as info:
        load_releases(root)
    assert info.value.field == field and message in info.value.message
    assert info.value.file is not None and info.value.file.endswith("r0.json")


def test_release_metadata_cycle_and_duplicates(tmp_path: Path) -> None:
    root = write_releases(
        tmp_path / "a", [release_doc("4.14.1", ["4.14.2"]), release_doc("4.14.2", ["4.14.1"])]
    )
    with pytest.raises(InputError, match="cycle"):
        load_releases(root)
    root = write_releases(tmp_path / "b", [release_doc("4.14.1", []), release_doc("4.14.1", [])])
    with pytest.raises(InputError, match="also described"):
        load_releases(root)


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ([], None),
        ({"nodes": {}}, "nodes"),
        ({"nodes": [{"version": ""}], "edges": []}, "nodes[0].version"),
        ({"nodes": [{"version": "1.0.0"}, {"version": "1.0.0"}], "edges": []}, "nodes[1].version"),
        ({"nodes": [{"version": "1.0.0"}], "edges": [[0, 1]]}, "edges[0]"),
        ({"nodes": [{"version": "1.0.0"}], "edges": [[0, True]]}, "edges[0]"),
        ({"nodes": [{"version": "1.0.0"}], "edges": [[0, 0]]}, "edges[0]"),
        (
            {
                "nodes": [{"version": "1.0.0"}],
                "edges": [],
                "conditionalEdges": [{"edges": [{}], "risks": []}],
            },
            "conditionalEdges[0].edges[0].from",
        ),
    ],
)
def test_graph_json_errors_name_the_field(doc: object, field: str | None) -> None:
    with pytest.raises(InputError) as info:
        decode_graph(json.dumps(doc).encode(), "g.json")
    assert info.value.field == field and info.value.file == "g.json"


def test_node_with_non_string_metadata_is_abstract() -> None:
    graph = decode_graph(
        b'{"nodes":[{"version":"1.0.0","payload":"p","metadata":{"k":1}}],"edges":[]}', "g"
    )
    assert not graph.nodes[0].concrete


def test_fingerprint_changes_with_content(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a").write_text("1")
    first = fingerprint(tmp_path / "d")
    (tmp_path / "d" / "b").write_text("2")
    assert fingerprint(tmp_path / "d") != first
