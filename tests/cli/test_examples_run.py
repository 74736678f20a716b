"""Every example of every command's --help runs as written, in one workspace built from
the sample data (`kupgrade sample write`) and the files the examples name.

The only changes made to an example before it runs are the loopback ports (an update
service on 127.0.0.1:8080 and a registry on 127.0.0.1:5000 get free ports here) and the
`<64 hex>` placeholder (the digest of the release the `release new` example built).
Examples that reach hosts outside this machine are listed, not run; each run must exit 0,
or 1 where the command reports a finding or refusal (never an input error).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kupgrade.cli.lazy import loaded
from kupgrade.cli.main import app
from kupgrade.sim.openshift.releases import build_release
from kupgrade.sim.profile import Spec
from kupgrade.updateservice.process import free_port
from tests.support.bundlekit import write_bundle
from tests.support.conformance import SHARED, needs_gpg, needs_registry
from tests.support.processes import RegistryProcess, served_api

Command = Any

# Leaf commands in the order their examples run (later ones use what earlier ones made).
ORDER = [
    "sample write",
    "explain",
    "skew reference",
    "cluster profile",
    "graph build",
    "graph diff",
    "graph filter",
    "graph lint",
    "serve",
    "path",
    "updates",
    "promql eval",
    "release new",
    "release push",
    "release info",
    "release extract",
    "release graph",
    "release manifests",
    "release sign",
    "release verify",
    "olm push",
    "olm validate",
    "olm heads",
    "olm render-graph",
    "olm list packages",
    "olm list channels",
    "olm list bundles",
    "olm render",
    "olm render-template",
    "olm skiprange",
    "olm resolve",
    "skew check",
    "skew check-step",
    "plan",
    "rollout",
    "cluster create",
    "cluster import",
    "cluster calibration",
    "olm subscribe",
    "controller run",
    "olm approve",
    "rehearse sweep",
    "upgrade",
    "get",
    "cluster list",
    "fleet create",
    "fleet rollout example",
    "fleet rollout plan",
    "fleet rollout rehearse",
    "fleet rollout start",
    "fleet rollout status",
    "fleet rollout approve",
    "fleet rollout halt",
    "fleet rollout resume",
    "fleet rehearse",
    "fleet status",
    "fleet list",
    "fleet delete",
    "cluster metrics",
    "cluster serve-api",
    "cluster delete",
    "demo",
]
# Examples that connect to another machine (a URL given as metadata is only text).
OUTSIDE = re.compile(
    r"(--upstream|--store|--prometheus)\s+https?://(?!127\.0\.0\.1|localhost)"
    r"|registry\.example\.com/"
)
LONG_RUNNING = ("kupgrade serve ", "kupgrade cluster serve-api ")


def _leaves() -> dict[str, Command]:
    found: dict[str, Command] = {}

    def walk(path: list[str], command: Command) -> None:
        if isinstance(getattr(command, "commands", None), dict):
            for name, sub in command.commands.items():
                walk([*path, name], sub)
        else:
            found[" ".join(path)] = command

    walk([], loaded(app))
    return found


def examples(command: Command) -> list[str]:
    """The examples of a command's docstring, continuation lines joined."""
    doc = command.callback.__doc__ or ""
    out: list[str] = []
    for block in re.findall(r"```\n(.*?)```", doc, re.S):
        text = block.replace("\\\\\n", " ")  # the docstring escapes its backslashes
        text = re.sub(r"\\\n\s*", " ", text)
        out += [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    return out


def test_the_order_names_every_command() -> None:
    assert sorted(ORDER) == sorted(_leaves())


# --- the workspace ---------------------------------------------------------------------


HISTORY = 'release_order: ["1.16.5", "1.28.100-gke.146", "1.16.6", "1.28.500-gke.120"]\n'


def _catalog(package: str, channel: str, names: list[str]) -> str:
    blobs: list[dict[str, Any]] = [
        {"schema": "olm.package", "name": package, "defaultChannel": channel}
    ]
    entries = [{"name": names[0]}] + [
        {"name": n, "replaces": p} for p, n in itertools.pairwise(names)
    ]
    blobs.append({"schema": "olm.channel", "package": package, "name": channel, "entries": entries})
    for name in names:
        version = name.split(".v", 1)[1]
        blobs.append(
            {
                "schema": "olm.bundle",
                "package": package,
                "name": name,
                "image": f"quay.io/example/{package}-bundle:v{version}",
                "properties": [
                    {"type": "olm.package", "value": {"packageName": package, "version": version}}
                ],
            }
        )
    return "".join(json.dumps(b) + "\n" for b in blobs)


LAB_FLEET = """\
clusters:
  lab-admin: {version: "1.28.500-gke.120", role: admin}
  lab-user-1: {version: "1.28.500-gke.120", role: user, managed_by: lab-admin,
               pools: {np1: "1.28.500-gke.120"}}
  lab-user-2: {version: "1.16.9", role: user, managed_by: lab-admin}
target: "1.29.100-gke.251"
available: ["1.28.500-gke.120", "1.29.100-gke.251"]
simulation: {nodesPerPool: 2}
"""


OC_CAPTURES = SHARED / "peer" / "oc" / "status-examples"
RECOMMEND_CAPTURES = SHARED / "peer" / "oc" / "recommend-examples"
MUST_GATHER = Path(__file__).parents[1] / "data" / "captures" / "must-gather-aws"


def _workspace(root: Path) -> None:
    """The files the examples name that no earlier example writes."""
    sample = root / "sample"
    shutil.copytree(sample / "releases", root / "releases")
    shutil.copytree(sample / "graph-data", root / "cincinnati-graph-data")
    with tarfile.open(root / "graph-data.tar.gz", "w:gz") as tar:
        for path in sorted((sample / "graph-data").rglob("*")):
            tar.add(path, arcname=str(path.relative_to(sample / "graph-data")), recursive=False)
    shutil.copy(sample / "metrics" / "cluster.om", root / "cluster.om")
    # The releases as a Cincinnati graph document (what `--releases raw.json` reads).
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "graph",
            "build",
            "--releases",
            str(sample / "releases"),
            "--graph-data",
            str(sample / "graph-data"),
            "-o",
            str(root / "raw.json"),
        ],
        check=True,
        capture_output=True,
    )
    for compared in ("expected.json", "a.json", "b.json"):  # graphs to compare
        shutil.copy(root / "raw.json", root / compared)
    (root / "rules.yaml").write_text(
        "expressions:\n- {id: provider, expr: 'group by (type) (cluster_infrastructure_provider)'}\n"
    )
    # cluster.yaml and fleet.yaml come from the `skew reference` examples.
    (root / "release-history.yaml").write_text(HISTORY)
    (root / "order.yaml").write_text(HISTORY)
    (root / "cluster-shape.yaml").write_text(
        "version: 1.28.500-gke.120\nrole: user\nworkerNodePools: [w1, w2]\n"
    )
    (root / "pool.yaml").write_text("{pool_nodes: 7, maxSurge: 10%}\n")
    (root / "lab-fleet.yaml").write_text(LAB_FLEET)
    for name, package, channel, bundles in (
        ("catalog", "etcd", "alpha", ["etcdoperator.v0.9.0", "etcdoperator.v0.9.2"]),
        ("cat-a", "app", "stable", ["app.v1.0.0", "app.v1.1.0"]),
        ("cat-b", "app", "stable", ["app.v1.0.0", "app.v1.2.0"]),
    ):
        (root / name).mkdir()
        (root / name / "catalog.json").write_text(_catalog(package, channel, bundles))
    shutil.copy(root / "catalog" / "catalog.json", root / "catalog.json")
    # `olm render` and `olm render-template`: a bundle directory and catalog templates
    write_bundle(root / "etcd-bundle", "etcd", "0.9.4")
    images = [f"quay.io/example/etcd-bundle:v{v}" for v in ("0.9.0", "0.9.2")]
    (root / "semver.yaml").write_text(
        "schema: olm.semver\nstable:\n  bundles:\n"
        + "".join(f"  - image: {image}\n" for image in images)
    )
    (root / "semver-dirs.yaml").write_text(
        "schema: olm.semver\ngenerateMajorChannels: true\nstable:\n  bundles:\n"
        "  - image: ./etcd-bundle\n"
    )
    (root / "basic.yaml").write_text(
        "schema: olm.template.basic\nentries:\n"
        "- {schema: olm.package, name: etcd, defaultChannel: alpha}\n"
        "- schema: olm.channel\n  package: etcd\n  name: alpha\n  entries:\n"
        "  - {name: etcdoperator.v0.9.0}\n  - {name: etcdoperator.v0.9.2, replaces: etcdoperator.v0.9.0}\n"
        + "".join(f"- {{schema: olm.bundle, image: '{image}'}}\n" for image in images)
    )
    # A captured cluster, as `oc get clusterversion,... -o yaml` writes it (oc's own).
    (root / "captured").mkdir()
    for found in sorted(OC_CAPTURES.glob("4.14.1-degraded-*.yaml")):
        shutil.copy(found, root / "captured" / found.name.replace("4.14.1-degraded", "prod"))
    # One of `oc adm upgrade recommend`'s examples, with its alerts (-alerts.json).
    for found in sorted(RECOMMEND_CAPTURES.glob("4.16.27-degraded-monitoring-*")):
        name = found.name.replace("4.16.27-degraded-monitoring", "monitoring")
        shutil.copy(found, root / "captured" / name)
    # A real must-gather (tests/data/captures), as a directory and as `tar czf` packs it.
    shutil.copytree(MUST_GATHER, root / "must-gather.local.5049")
    with tarfile.open(root / "must-gather.tar.gz", "w:gz") as tar:
        tar.add(root / "must-gather.local.5049", arcname="must-gather.local.5049")
    # A directory of manifests: the model release's, with its own release-metadata.
    layout = root / "model-release"
    build_release(Spec(), "4.16.3", layout)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "release",
            "extract",
            str(layout),
            "--to",
            str(root / "payload"),
        ],
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryProcess]:
    with RegistryProcess(tmp_path_factory.mktemp("registry")) as process:
        yield process


# --- running them ----------------------------------------------------------------------


class Runner:
    def __init__(self, root: Path, env: dict[str, str], ports: dict[str, str]) -> None:
        self.root, self.env, self.ports = root, env, ports
        self.digest = "0" * 64
        self.ran: list[str] = []
        self.skipped: list[str] = []

    def prepare(self, example: str) -> str:
        text = example.replace("<64 hex>", self.digest)
        text = text.replace("--port 6443", f"--port {free_port()}")
        for written, real in self.ports.items():
            text = text.replace(written, real)
        return text

    def run(self, example: str) -> None:
        if OUTSIDE.search(example):
            self.skipped.append(example)
            return
        tools = re.findall(r"\|\s*([\w-]+)", example) + re.findall(r"^(curl)\b", example)
        if any(shutil.which(tool) is None for tool in tools):
            self.skipped.append(example)  # a tool the example pipes into is not installed
            return
        command = self.prepare(example)
        if command.startswith(LONG_RUNNING):
            self._serve(command)
            return
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert "Traceback" not in done.stderr, (example, done.stderr)
        assert done.returncode in (0, 1), (example, done.returncode, done.stderr)
        if done.returncode == 1:
            # A finding or refusal, not a mistake in the example.
            assert not done.stderr.startswith("error:"), (example, done.stderr)
        if example.startswith("kupgrade release new") and "release-4.16.3.tar" in example:
            # The release the later examples push, sign, verify and name by digest.
            self.digest = done.stdout.strip().removeprefix("sha256:")
        self.ran.append(example)

    def _serve(self, command: str) -> None:
        """Start a server example, see it answer (or say where it serves), stop it."""
        update_service = command.startswith("kupgrade serve ")
        if update_service:
            port = free_port()
            command = re.sub(r"--port \d+", "", command) + f" --port {port}"
        with subprocess.Popen(
            ["bash", "-c", "exec " + command],
            cwd=self.root,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as proc:
            try:
                if update_service:
                    _wait_ready(f"http://127.0.0.1:{port}")
                else:
                    assert proc.stdout is not None
                    first = proc.stdout.readline().decode()
                    assert "127.0.0.1" in first or first.strip() == "{", (command, first)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
        self.ran.append(command)


def _wait_ready(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} never became ready")


@contextmanager
def _served(env: dict[str, str], name: str, *extra: str) -> Iterator[dict[str, Any]]:
    """`cluster serve-api NAME`: its kubeconfig, while it serves."""
    with served_api(Path(env["KUPGRADE_HOME"]), name, *extra, env=env) as (_, said):
        yield yaml.safe_load(Path(said["kubeconfig"]).read_text())


@contextmanager
def _live_cluster(root: Path, env: dict[str, str], service_port: int) -> Iterator[None]:
    """`~/.kube/config` (HOME is the workspace's) reaches clusters, for the examples with
    `--kubeconfig` and `--context`: a simulated one serving its API with its controllers
    running, on the sample's update service, under the context name "prod"; and one served
    without them, for the controllers run over the API, as "rehearsal"."""
    live_env = {**env, "KUPGRADE_HOME": str(root / "live-home")}
    upstream = f"http://127.0.0.1:{service_port}/api/upgrades_info/graph"
    for name in ("live", "stepped"):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "kupgrade",
                "cluster",
                "create",
                name,
                "--upstream",
                upstream,
                "--channel",
                "stable-4.14",
            ],
            env=live_env,
            check=True,
            capture_output=True,
        )
    with (
        _served(live_env, "live") as config,
        _served(live_env, "stepped", "--no-controllers") as stepped,
    ):
        config["contexts"][0]["name"] = config["current-context"] = "prod"
        stepped["contexts"][0]["name"] = "rehearsal"
        for part in ("clusters", "users", "contexts"):
            config[part] += stepped[part]
        (root / ".kube").mkdir(exist_ok=True)
        (root / ".kube" / "config").write_text(yaml.safe_dump(config))
        time.sleep(2)  # its availability controller asks the update service once
        yield


@needs_gpg
@needs_registry
def test_every_help_example_runs_as_written(
    tmp_path: Path, registry: RegistryProcess, gnupg_home: tuple[str, dict[str, Path]]
) -> None:
    home, keys = gnupg_home
    env = {
        **os.environ,
        "KUPGRADE_HOME": str(tmp_path / "home"),
        "GNUPGHOME": home,
        "HOME": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    service_port = free_port()
    ports = {"127.0.0.1:8080": f"127.0.0.1:{service_port}", "127.0.0.1:5000": registry.host}
    runner = Runner(tmp_path, env, ports)
    leaves = _leaves()
    first, *rest = ORDER
    for example in examples(leaves[first]):  # `sample write ./sample` makes the sample data
        runner.run(example)
    _workspace(tmp_path)
    shutil.copy(keys["release"], tmp_path / "release.asc")
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kupgrade",
            "serve",
            "--releases",
            "sample/releases",
            "--graph-data",
            "sample/graph-data",
            "--port",
            str(service_port),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as service:
        try:
            _wait_ready(f"http://127.0.0.1:{service_port}")
            with _live_cluster(tmp_path, env, service_port):
                for name in rest:
                    for example in examples(leaves[name]):
                        runner.run(example)
        finally:
            service.terminate()
            service.wait(timeout=30)
    assert len(runner.ran) >= 80, len(runner.ran)
    # Only examples that reach other machines are left out, and they are few.
    assert all(OUTSIDE.search(e) or "|" in e or e.startswith("curl") for e in runner.skipped)
    assert len(runner.skipped) <= 8, runner.skipped
    assert yaml.safe_load((tmp_path / "cluster.yaml").read_text())["apiservers"]
    assert (tmp_path / "graph.svg").exists() or shutil.which("dot") is None
