"""Own fleet.yaml-shaped cases for the README's `refused: {step, rules, fix}` expectation,
which no public case uses yet, and the one check every fleet test makes of a refusal."""

from __future__ import annotations

from typing import Any

from tests.support.caseuse import unused

# No plan exists: the only release past the cluster's minor skips one (G3 / H6).
OWN_REFUSED: list[dict[str, Any]] = [
    {
        "id": "own/gdc-no-1.16-stop",
        "platform": "gdc",
        "fleet": {"clusters": {"c": {"version": "1.15.12"}}},
        "target": "1.28.500-gke.120",
        "available": [],
        "expect": {
            "refused": {
                "step": {"object": "cluster/c", "from": "1.15.12", "to": "1.28.500-gke.120"},
                "rules": ["G3.skip-minor"],
                "fix": "add a 1.16 release to the available versions",
            }
        },
    },
    {
        "id": "own/k8s-no-1.31-stop",
        "platform": "kubernetes",
        "policy": "k8s-n3",
        "cluster": {"cp": "1.30.0", "pools": {"md0": "1.30.0"}},
        "target": "1.32.0",
        "available": ["1.32.0"],
        "expect": {
            "refused": {
                "step": {"object": "control-plane", "from": "1.30.0", "to": "1.32.0"},
                "rules": ["H6.no-minor-skip"],
                "fix": "add a 1.31 release to the available versions",
            }
        },
    },
]


def check_refused(case: Any, got: dict[str, Any], cluster: str | None = None) -> None:
    """A refusal (Refusal.to_json()) against the case's `expect.refused`: the same rules,
    the same blocking step (null when the start state itself breaks a rule) and a fix.

    The fix is prose in our own words (SPEC X4 asks that there is one); a refused step is
    in no plan, so an `id` or `after` on it has nothing to compare with. A fleet names a
    Kubernetes cluster's objects after it (`control-plane/<cluster>`): pass `cluster`."""
    want = case["expect"]["refused"]
    assert sorted(got["rules"]) == sorted(want["rules"]), got
    if want["step"] is None:
        assert got["step"] is None, got
    else:
        assert got["step"] is not None, got
        expected = {k: str(want["step"][k]) for k in ("object", "from", "to")}
        if cluster is not None:
            expected["object"] += f"/{cluster}"
        assert {k: got["step"][k] for k in ("object", "from", "to")} == expected
    unused(case, "expect.refused.fix", "expect.refused.step.id", "expect.refused.step.after")
    assert got["fix"]
