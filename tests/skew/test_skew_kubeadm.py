"""kubeadm's EnforceVersionPolicies: every case of conformance/skew/kubeadm.yaml."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kupgrade.skew.kubeadm import Upgrade, enforce
from tests.support.caseuse import unused
from tests.support.cli import kupgrade
from tests.support.conformance import conformance_cases, need_case


def _matches(got: list[Any], want: list[dict[str, str]]) -> bool:
    if [g.id for g in got] != [w["id"] for w in want]:
        return False
    return all(
        g.message == w["message"] if "message" in w else g.message.startswith(w["message_prefix"])
        for g, w in zip(got, want, strict=True)
    )


@pytest.mark.parametrize("case", conformance_cases("cases", "skew", "kubeadm.yaml"))
def test_enforce_version_policies(case: Any) -> None:
    case = need_case(case, "skew", "kubeadm.yaml")
    errors = case.get("lookup_errors") or {}
    unused(case, *errors)  # a lookup that failed has no value to read (the case's null)
    found = enforce(
        Upgrade(
            cluster=None if "cluster" in errors else case["cluster"],
            kubelets=None if "kubelets" in errors else list(case.get("kubelets") or []),
            kubeadm=None if "kubeadm" in errors else case["kubeadm"],
            new=case["new"],
            kubelet_skew=case["kubelet_skew"],
            min_control_plane=case.get("min_control_plane"),
            allow_experimental=bool(case.get("allowExperimental")),
            allow_rcs=bool(case.get("allowRCs")),
            lookup_errors=errors,
        )
    )
    expect = case["expect"]
    assert _matches(found.mandatory, expect["mandatory"]), found.mandatory
    assert _matches(found.skippable, expect["skippable"]), found.skippable


def test_kubeadm_policy_on_a_control_plane_step(tmp_path: Path) -> None:
    """`--policy kubeadm-X.Y`: kubeadm's findings refuse the step; --force makes skippable
    ones warnings, never mandatory ones."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        'apiservers: [{name: a1, version: "1.30.3"}]\n'
        'nodes: [{name: n1, kubelet: "1.30.3"}, {name: n2, kubelet: "1.26.0"}]\n'
    )

    def step(to: str, *extra: str) -> tuple[int, dict[str, Any]]:
        done = kupgrade(
            "skew",
            "check-step",
            str(inv),
            "--step",
            f"kube-apiserver -> {to}",
            "--policy",
            "kubeadm-1.31",
            "-o",
            "json",
            *extra,
        )
        return done.returncode, json.loads(done.stdout)

    code, answer = step("1.31.2")
    assert (code, answer["verdict"], answer["rules"]) == (1, "refused", ["P10"])
    assert answer["message"].startswith("There are kubelets in this cluster that are too old")
    code, answer = step("1.31.2", "--force")
    assert (code, answer["verdict"], answer["warnings"]) == (0, "warning", ["P10"])
    code, answer = step("1.32.0", "--force")
    assert code == 1 and {"P4", "P6", "H6.no-minor-skip"} <= set(answer["rules"])
    done = kupgrade(
        "skew",
        "check-step",
        str(inv),
        "--step",
        "kube-apiserver -> 1.31.2",
        "--policy",
        "kubeadm-x",
    )
    assert done.returncode == 1 and "unknown skew policy" in done.stderr
