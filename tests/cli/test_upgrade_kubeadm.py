"""`kupgrade upgrade plan` (kubeadm's `upgrade plan`) and `kupgrade upgrade --to V
--dry-run` (kubeadm's `upgrade apply --dry-run`) on simulated clusters, through the CLI:
what kubeadm would offer and change, nothing written, other platforms refused in one
line, bad inputs refused in one line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from kupgrade.views.kubeadm_plan import render_plan
from tests.support.cli import run_cli
from tests.support.processes import served_api

AVAILABLE = ["--available", "v1.30.9,v1.31.2"]
PREFACE = [
    "[upgrade] Fetching available versions to upgrade to",
    "[upgrade/versions] Cluster version: 1.30.4",
]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kubeadm cluster `k8s` (v1.30.4, two control-plane nodes, two workers), an
    OpenShift cluster `oc` and a distributed-cloud admin cluster `admin`."""
    root = tmp_path_factory.mktemp("kubeadm")
    for args in (
        ["k8s", "--platform", "kubernetes", "--version", "v1.30.4", "--control-planes", "2"],
        ["oc", "--version", "4.13.40"],
        ["admin", "--platform", "gdc", "--role", "admin", "--version", "1.28.500-gke.120"],
    ):
        extra = ["--workers", "2"] if args[0] == "k8s" else []
        made = run_cli(["cluster", "create", *args, *extra], root)
        assert made.exit_code == 0, made.stderr
    return root


def _json(home: Path, *args: str) -> Any:
    done = run_cli([*args, "-o", "json"], home)
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


def _store(home: Path, name: str) -> str:
    return hashlib.sha256((home / "clusters" / name / "cluster.db").read_bytes()).hexdigest()


# --- upgrade plan ----------------------------------------------------------------------


def test_plan_offers_the_patch_then_the_next_minor(home: Path) -> None:
    """SPEC H7 as kubeadm words it: the newest patch of v1.30 first, then v1.31 (the
    kubeadm a user installs for it: no note to update it)."""
    plan = _json(home, "upgrade", "plan", "--cluster", "k8s", *AVAILABLE)
    assert plan["kind"] == "UpgradePlan"
    assert plan["apiVersion"] == "output.kubeadm.k8s.io/v1alpha3"
    patch, stable = plan["availableUpgrades"]
    assert patch["description"] == "version in the v1.30 series"
    assert stable["description"] == "stable version"
    names = [c["name"] for c in stable["components"]]
    assert names.count("kubelet") == 4 and names.count("kube-apiserver") == 2
    assert names.count("etcd") == 2 and "CoreDNS" in names and "kubeadm" in names
    by_name = {c["name"]: c for c in stable["components"]}
    # kube-proxy's current version is the cluster's as kubeadm prints it (no "v")
    assert by_name["kube-proxy"] == {
        "name": "kube-proxy",
        "currentVersion": "1.30.4",
        "newVersion": "v1.31.2",
    }
    assert by_name["etcd"]["currentVersion"] == "3.5.12-0"
    assert by_name["etcd"]["newVersion"] == "3.5.15-0"
    assert by_name["CoreDNS"] == {"name": "CoreDNS", "currentVersion": "", "newVersion": "v1.11.3"}
    assert by_name["kubeadm"]["currentVersion"] == by_name["kubeadm"]["newVersion"] == "v1.31.2"
    assert [c["group"] for c in plan["configVersions"]] == [
        "kubeproxy.config.k8s.io",
        "kubelet.config.k8s.io",
    ]
    assert all(c["currentVersion"] == "" for c in plan["configVersions"])


def test_plan_text_is_the_preface_then_kubeadms_printer(home: Path) -> None:
    done = run_cli(["upgrade", "plan", "--cluster", "k8s", *AVAILABLE], home)
    assert done.exit_code == 0, done.stderr
    plan = _json(home, "upgrade", "plan", "--cluster", "k8s", *AVAILABLE)
    preface, _, rest = done.stdout.partition("\n\n")
    assert preface.splitlines() == [
        *PREFACE,
        "[upgrade/versions] kubeadm version: v1.31.2",
        "[upgrade/versions] Target version: v1.31.2",
        "[upgrade/versions] Latest version in the v1.30 series: v1.30.9",
    ]
    assert rest == render_plan(plan)
    assert "\tkubeadm upgrade apply v1.30.9\n" in rest
    assert "\tkubeadm upgrade apply v1.31.2\n" in rest
    assert "Note:" not in rest


def test_an_older_kubeadm_sees_only_its_minor_and_is_told_to_update(home: Path) -> None:
    """validateStableVersion: `stable` past kubeadm's minor falls back to its own."""
    args = ["upgrade", "plan", "--cluster", "k8s", *AVAILABLE, "--kubeadm", "v1.30.4"]
    (only,) = _json(home, *args)["availableUpgrades"]
    assert only["description"] == "version in the v1.30 series"
    text = run_cli(args, home).stdout
    assert "[upgrade/versions] Target version: v1.30.9\n" in text
    assert (
        "Note: Before you can perform this upgrade, you have to update kubeadm to v1.30.9.\n"
        in text
    )


def test_nothing_available_is_up_to_date_with_kubeadms_warnings(home: Path) -> None:
    done = run_cli(["upgrade", "plan", "--cluster", "k8s"], home)
    assert done.exit_code == 0, done.stderr
    assert done.stdout.endswith("\nAwesome, you're up-to-date! Enjoy!\n")
    assert "Falling back to current kubeadm version as latest stable version" in done.stderr
    empty = _json(home, "upgrade", "plan", "--cluster", "k8s")
    assert empty["availableUpgrades"] == [] and len(empty["configVersions"]) == 2


RC = "--allow-release-candidate-upgrades"
EXPERIMENTAL = "--allow-experimental-upgrades"


@pytest.mark.parametrize(
    ("flag", "latest", "shown"),
    [
        (RC, "v1.32.0-alpha.0", f"v1.31.0-rc.1 {RC}"),
        (EXPERIMENTAL, "v1.32.0-alpha.0", f"v1.31.0-rc.1 {RC}"),  # an rc: the rc's flag
        (EXPERIMENTAL, "v1.32.0-alpha.1", f"v1.32.0-alpha.1 {EXPERIMENTAL}"),
    ],
)
def test_unstable_releases(home: Path, flag: str, latest: str, shown: str) -> None:
    """compute.go: the rc of the previous branch (latest-1.31) with the rc flag; the
    newest release with the experimental one, the previous branch's when the newest is
    an alpha.0. The command's flag follows the version's pre-release."""
    args = ["upgrade", "plan", "--cluster", "k8s", "--available", f"v1.30.9,v1.31.0-rc.1,{latest}"]
    args += ["--kubeadm", latest, flag]
    patch, unstable = _json(home, *args)["availableUpgrades"]
    assert patch["description"] == "version in the v1.30 series"
    wanted = "release candidate version" if flag == RC else "experimental version"
    assert unstable["description"] == wanted
    text = run_cli(args, home).stdout
    assert f"\tkubeadm upgrade apply {shown}\n" in text
    assert "[upgrade/versions] Latest previous version: v1.31.0-rc.1\n" in text


# --- upgrade --to V --dry-run ----------------------------------------------------------


def test_dry_run_lists_every_change_and_writes_nothing(home: Path) -> None:
    before = _store(home, "k8s")
    args = ["upgrade", "--cluster", "k8s", "--to", "v1.31.2", *AVAILABLE, "--dry-run"]
    found = _json(home, *args)
    assert found["dryRun"] is True and found["blocked"] is None
    assert [(s["object"], s["to"]) for s in found["steps"]] == [
        ("control-plane", "1.30.9"),
        ("control-plane", "1.31.2"),
        ("nodepool/worker", "1.31.2"),
    ]
    changes = found["changes"]
    kinds = {c["kind"] for c in changes}
    assert kinds == {"StaticPod", "ConfigMap", "Deployment", "DaemonSet", "File", "Kubelet"}
    etcd = [c for c in changes if c["name"].endswith("/etcd.yaml")]
    # v1.30.9 keeps etcd 3.5.12-0 (skipped, as kubeadm skips it); v1.31.2 moves it
    assert {c["step"] for c in etcd} == {found["steps"][1]["id"]}
    assert {c["target"] for c in etcd} == {"registry.k8s.io/etcd:3.5.15-0"}
    proxy = [c for c in changes if c["kind"] == "DaemonSet"]
    assert [c["target"] for c in proxy] == [
        "registry.k8s.io/kube-proxy:v1.30.9",
        "registry.k8s.io/kube-proxy:v1.31.2",
    ]
    kubelets = [c for c in changes if c["kind"] == "Kubelet" and c["target"] == "v1.31.2"]
    assert len(kubelets) == 4
    text = run_cli(args, home)
    assert text.exit_code == 0
    assert text.stdout.splitlines()[0] == (
        '[upgrade/version] You have chosen to change the cluster version to "v1.31.2"'
    )
    assert "[upgrade/successful] Finished dryrunning successfully!\n" in text.stdout
    assert _store(home, "k8s") == before
    status = _json(home, "upgrade", "--cluster", "k8s")
    assert status["upgrade"] is None and status["apiservers"] == ["v1.30.4"]


def test_dry_run_stops_where_kubeadm_would(home: Path) -> None:
    """kubeadm v1.30 cannot apply v1.31 (its P6): the step is named, exit 1."""
    args = ["upgrade", "--cluster", "k8s", "--to", "v1.31.2", "--dry-run", "--kubeadm", "v1.30.4"]
    done = run_cli(args, home)
    assert done.exit_code == 1
    assert (
        'kubeadm P6: Specified version to upgrade to "v1.31.2" is at least one minor' in done.stdout
    )
    assert done.stdout.endswith("[dryrun] Nothing was changed.\n")
    assert json.loads(run_cli([*args, "-o", "json"], home).stdout)["blocked"].startswith(
        "s1: kubeadm P6"
    )


def test_dry_run_then_the_request_records_the_same_steps(home: Path) -> None:
    made = run_cli(
        ["cluster", "create", "k2", "--platform", "kubernetes", "--version", "v1.30.4"], home
    )
    assert made.exit_code == 0, made.stderr
    args = ["upgrade", "--cluster", "k2", "--to", "v1.31.2", *AVAILABLE]
    planned = _json(home, *args, "--dry-run")["steps"]
    recorded = _json(home, *args)["steps"]
    assert [(s["object"], s["to"]) for s in planned] == [(s["object"], s["to"]) for s in recorded]
    again = run_cli([*args, "--dry-run"], home)  # as the request would: refused now
    assert again.exit_code == 1 and "already in progress" in again.stderr


# --- refusals, one line each -----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["upgrade", "plan", "--cluster", "oc"], ["OpenShift", "kupgrade upgrade --cluster oc"]),
        (["upgrade", "plan", "--cluster", "admin"], ["distributed-cloud", "bmctl"]),
        (
            ["upgrade", "--cluster", "oc", "--to", "4.14.1", "--dry-run"],
            ["OpenShift", "--preflight"],
        ),
        (["upgrade", "plan", "--cluster", "k8s", "--available", "v1.x"], ["--available", "v1.x"]),
        (["upgrade", "plan", "--cluster", "k8s", "--kubeadm", "1.31"], ["--kubeadm", "1.31"]),
        (["upgrade", "plan", "--cluster", "k8s", "--to", "v1.31.2"], ["--to"]),
        (["upgrade", "plan", "--cluster", "k8s", "--leave-pools", "a"], ["--leave-pools"]),
        (["upgrade", "plan", "--cluster", "k8s", "--from", "x.tar.gz"], ["--from", "dump"]),
        (["upgrade", "plan", "--cluster", "k8s", "--dry-run"], ["--dry-run"]),
        (["upgrade", "--cluster", "k8s", "--dry-run"], ["--dry-run needs --to"]),
        (
            ["upgrade", "--cluster", "k8s", "--to", "v1.31.2", "--dry-run", "--preflight"],
            ["choose one"],
        ),
        (["upgrade", "--cluster", "k8s", "--to", "v1.32.0", "--dry-run"], ["no upgrade path"]),
        (
            ["upgrade", "--cluster", "k8s", "--to", "v1.31.2", "--dry-run", "--nodepool", "w"],
            ["--nodepool"],
        ),
        (
            [
                "upgrade",
                "plan",
                "--cluster",
                "k8s",
                "--allow-experimental-upgrades",
                "--available",
                "v1.31.2",
            ],
            ["FATAL", "latest-1.30"],
        ),
        (["upgrade", "plan", "--cluster", "nope"], ["nope"]),
    ],
)
def test_refusals_are_one_line(home: Path, args: list[str], words: list[str]) -> None:
    done = run_cli(args, home)
    assert done.exit_code == 1, done.stdout
    assert done.stderr.count("\n") == 1, done.stderr
    for word in words:
        assert word in done.stderr


def test_plan_and_dry_run_read_a_live_cluster_only(tmp_path: Path) -> None:
    """Through a kubeconfig (a served simulated cluster): the same plan as from its
    store, the same dry run, and only gets and lists reach the API server."""
    made = run_cli(
        ["cluster", "create", "live", "--platform", "kubernetes", "--version", "v1.30.4"], tmp_path
    )
    assert made.exit_code == 0, made.stderr
    stored = _json(tmp_path, "upgrade", "plan", "--cluster", "live", *AVAILABLE)
    dry = ["--to", "v1.31.2", *AVAILABLE, "--dry-run"]
    stored_dry = _json(tmp_path, "upgrade", "--cluster", "live", *dry)
    audit = tmp_path / "audit.jsonl"
    with served_api(tmp_path, "live", "--no-controllers", "--audit-log", str(audit)) as (_, info):
        config = ["--kubeconfig", info["kubeconfig"]]
        plan = _json(tmp_path, "upgrade", "plan", *config, *AVAILABLE)
        changes = _json(tmp_path, "upgrade", *config, *dry)
    assert plan == stored
    assert changes["changes"] == stored_dry["changes"]
    verbs = {json.loads(line)["verb"] for line in audit.read_text().splitlines()}
    assert verbs and verbs <= {"get", "list"}, verbs
