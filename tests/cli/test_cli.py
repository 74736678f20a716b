"""The CLI contract of the update-service issue, run as a real process."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from kupgrade.errors import InputError
from tests.support.cli import kupgrade
from tests.support.conformance import conformance_path


def test_build_filter_round_trip(tmp_path: Path) -> None:
    e2e = conformance_path("cincinnati", "e2e")
    out = tmp_path / "full.json"
    result = kupgrade(
        "graph",
        "build",
        "--releases",
        str(e2e / "synthetic-raw.json"),
        "--graph-data",
        str(e2e / "graph-data-134475077"),
        "-o",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == (e2e / "synthetic-full.json").read_bytes()
    result = kupgrade(
        "graph", "filter", "--graph", str(out), "--channel", "stable-4.8", "--arch", "s390x"
    )
    assert result.returncode == 0
    doc = json.loads(result.stdout)
    snapshot = json.loads(
        (e2e / "134475077ed4eeaedf3c339f12915b9cdaf7d194_stable-4.8_s390x_v1.json").read_text()
    )
    assert doc["version"] == 1 and len(doc["nodes"]) == len(snapshot["nodes"])
    text = kupgrade("graph", "filter", "--graph", str(out), "--channel", "stable-4.8", "-o", "text")
    assert "conditional edges" in text.stdout and "VSphereNodeNameChanges" in text.stdout


def test_build_to_stdout(sample_dir: Path) -> None:
    result = kupgrade(
        "graph",
        "build",
        "--releases",
        str(sample_dir / "releases"),
        "--graph-data",
        str(sample_dir / "graph-data"),
        "-o",
        "-",
    )
    assert result.returncode == 0
    assert len(json.loads(result.stdout)["nodes"]) == 162


def test_failed_build_writes_nothing(tmp_path: Path, sample_dir: Path) -> None:
    out = tmp_path / "graph.json"
    out.write_text("previous content")
    bad = tmp_path / "raw.json"
    bad.write_text('{"nodes": [{"version": "1.0.0"}], "edges": [[0, 5]]}')
    result = kupgrade(
        "graph",
        "build",
        "--releases",
        str(bad),
        "--graph-data",
        str(sample_dir / "graph-data"),
        "-o",
        str(out),
    )
    assert result.returncode == 1
    assert "edges[0]" in result.stderr and "out of range" in result.stderr
    assert out.read_text() == "previous content"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "graph.json",
        "raw.json",
    ]  # no temp file left


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["graph", "filter", "--graph", "{raw}", "--channel", "UPPER"], "does not match regex"),
        (["graph", "filter", "--graph", "{junk}", "--channel", "a-1"], "not valid JSON"),
        (
            ["graph", "build", "--releases", "{raw}", "--graph-data", "{junk}", "-o", "{out}"],
            "not a readable tar archive",
        ),
        (["graph", "lint", "{junk}"], "not a readable tar archive"),
        (["graph", "diff", "{raw}", "{junk}"], "not valid JSON"),
    ],
)
def test_bad_input_is_a_clear_error(tmp_path: Path, args: list[str], needle: str) -> None:
    raw = tmp_path / "raw.json"
    raw.write_text('{"nodes": [{"version": "1.0.0"}], "edges": []}')
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x00\x01 not json")
    values = {"raw": str(raw), "junk": str(junk), "out": str(tmp_path / "o.json")}
    result = kupgrade(*(a.format(**values) for a in args))
    assert result.returncode == 1 and needle in result.stderr, result.stderr
    assert result.stderr.startswith("error:")


def test_lint_exit_codes_and_json(tmp_path: Path, sample_dir: Path) -> None:
    assert kupgrade("graph", "lint", str(sample_dir / "graph-data")).returncode == 0
    bad = conformance_path("cincinnati", "parser-fixtures", "invalid0", "cincinnati-graph-data")
    result = kupgrade("graph", "lint", str(bad))
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 5 and all(": " in line for line in lines)
    as_json = json.loads(kupgrade("graph", "lint", str(bad), "-o", "json").stdout)
    assert {p["file"] for p in as_json} >= {"blocked-edges/invalid_format.yaml", "channels/"}


def test_diff(tmp_path: Path) -> None:
    e2e = conformance_path("cincinnati", "e2e")
    same = kupgrade(
        "graph",
        "diff",
        str(e2e / "synthetic-full.json"),
        str(e2e / "synthetic-full.json"),
        "-o",
        "json",
    )
    assert same.returncode == 0 and json.loads(same.stdout) == {"equal": True, "differences": []}
    doc = json.loads((e2e / "synthetic-full.json").read_text())
    doc["edges"] = doc["edges"][1:]
    doc["conditionalEdges"] = []
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(doc))
    result = kupgrade("graph", "diff", str(e2e / "synthetic-full.json"), str(changed))
    assert (
        result.returncode == 1
        and "edges missing" in result.stdout
        and "conditional edges missing" in result.stdout
    )
    assert (
        kupgrade(
            "graph", "diff", str(e2e / "synthetic-full.json"), str(changed), "--cincinnati"
        ).stdout.count("\n")
        == 1
    )


def test_serve_reports_a_busy_port(sample_dir: Path) -> None:

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = str(sock.getsockname()[1])
        result = kupgrade(
            "serve",
            "--releases",
            str(sample_dir / "releases"),
            "--graph-data",
            str(sample_dir / "graph-data"),
            "--port",
            port,
        )
    assert result.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "--port:" in result.stderr


@pytest.mark.parametrize(
    ("host", "says"),
    [("999.1.1.1", "cannot resolve '999.1.1.1'"), ("no-such-host.invalid", "cannot resolve")],
)
def test_serve_blames_a_bad_host_not_the_port(sample_dir: Path, host: str, says: str) -> None:
    result = kupgrade(
        "serve",
        "--releases",
        str(sample_dir / "releases"),
        "--graph-data",
        str(sample_dir / "graph-data"),
        "--host",
        host,
        "--port",
        "18089",
    )
    assert result.returncode == 1
    assert result.stderr.startswith("error: --host: ") and says in result.stderr
    assert "--port" not in result.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["graph", "build"],
        ["graph", "filter"],
        ["graph", "lint"],
        ["graph", "diff"],
        ["serve"],
        ["demo"],
        ["sample", "write"],
    ],
)
def test_every_command_documents_examples_and_json(command: list[str]) -> None:
    result = kupgrade(*command, "--help")
    assert result.returncode == 0 and "Examples" in result.stdout
    assert "-o" in result.stdout


def test_version() -> None:
    assert kupgrade("--version").stdout.startswith("kupgrade ")


def test_names_are_printed_as_they_are_not_as_emoji(tmp_path: Path) -> None:
    """Rich replaces `:name:` codes with emoji unless told not to: a node called
    w:smile:1 must be printed so (SPEC H1: the finding names the object)."""
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(
        'apiservers: [{name: "a:fire:1", version: "1.30.4"}]\n'
        'nodes: [{name: "w:smile:1", kubelet: "1.26.0"}]\n'
    )
    result = kupgrade("skew", "check", str(inventory), "--policy", "k8s-n2")
    assert result.returncode == 1, result.stderr
    assert "w:smile:1" in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("", ["skew", "check"]),
        ("{}\n", ["skew", "check", "-o", "json"]),
        ('nodes: [{name: n1, kubelet: "1.30.2"}]\n', ["skew", "check"]),
        ('kubectl: [{name: me, version: "1.30.2"}]\n', ["skew", "check-step"]),
    ],
)
def test_an_inventory_without_an_apiserver_is_refused(
    tmp_path: Path, text: str, command: list[str]
) -> None:
    """Every skew rule measures a component against the apiservers (SPEC H2-H5): an
    inventory that lists none has nothing to check, and "no violations" with exit 0 would
    pass an empty or mistaken file, as `plan` and fleet files already refuse."""
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(text)
    step = ["--step", "node/n1 -> 1.30.2"] if command[-1] == "check-step" else []
    result = kupgrade(*command, str(inventory), *step)
    assert result.returncode == 1, result.stdout
    [line] = result.stderr.splitlines()
    assert str(inventory) in line and "lists no kube-apiserver" in line, line
    assert "skew reference inventory" in line, line
    if "json" in command:  # the same refusal, as a document for scripts
        error = json.loads(result.stdout)
        assert error["file"] == str(inventory) and error["field"] == "apiservers", error
    else:
        assert result.stdout == ""


class _Quiet:
    """An API server that shows no control-plane pod and whose /version names no release
    (a Readable, kupgrade/cluster/live.py): what a real cluster cannot be made to do."""

    def list(self, kind: str, **selectors: object) -> list[dict[str, object]]:
        if kind == "Node":
            return [
                {"metadata": {"name": "n1"}, "status": {"nodeInfo": {"kubeletVersion": "v1.30.2"}}}
            ]
        return []

    def server_version(self) -> dict[str, object]:
        return {"gitVersion": "unknown"}


def test_a_cluster_that_names_no_apiserver_version_is_refused() -> None:
    """`skew check --kubeconfig` on such a cluster has nothing to measure against either
    (SPEC H2-H5): the same refusal, naming the cluster."""
    from kupgrade.cluster.live import inventory_of  # noqa: PLC0415
    from kupgrade.skew.inventory import with_apiservers  # noqa: PLC0415 - the unit under test

    inventory = inventory_of(_Quiet(), [("kubectl", "1.30.2")])
    assert [n.kubelet for n in inventory.nodes] == ["1.30.2"]
    with pytest.raises(InputError, match="lists no kube-apiserver") as raised:
        with_apiservers(inventory, "the cluster")
    assert raised.value.file == "the cluster"


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("clusters: {}\n", ["skew", "check", "FILE"]),
        (
            "clusters: {}\nrelease_order: ['1.28.0', '1.29.0']\n",
            ["skew", "check", "FILE", "--policy", "gdc"],
        ),
        (
            "fleet: {clusters: {}}\n",
            ["skew", "check-step", "FILE", "--step", "cluster/a -> 1.29.0"],
        ),
        ("clusters: {}\n", ["plan", "FILE", "--to", "1.30.0"]),
        ("platform: kubernetes\nclusters: {}\n", ["plan", "FILE", "--to", "1.30.0", "-o", "json"]),
    ],
)
def test_a_fleet_without_a_cluster_is_refused(
    tmp_path: Path, text: str, command: list[str]
) -> None:
    """A fleet that lists no cluster has nothing to check or plan: one line naming the file
    and exit 1, not "no skew violations" or a plan of 0 steps with exit 0 (`fleet create`
    refuses it too)."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(text)
    result = kupgrade(*(str(fleet) if word == "FILE" else word for word in command))
    assert result.returncode == 1, result.stdout
    [line] = result.stderr.splitlines()
    assert str(fleet) in line and "the fleet lists no cluster" in line, line
    if "json" in command:
        assert json.loads(result.stdout)["field"] == "clusters"
    else:
        assert result.stdout == ""
