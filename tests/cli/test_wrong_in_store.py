"""An object wrong in the store (an older kupgrade wrote it, before writes were validated)
is said in one line by the runs that read it and breaks nothing: a budget that cannot be
read allows no disruption and says why, as the disruption controller's failSafe does;
the API server answers it; `kupgrade get` prints it (SPEC X4, X6)."""

from __future__ import annotations

from pathlib import Path

import httpx

from kupgrade.cluster.disruption import budget_status
from kupgrade.sim.store import Store
from tests.apiserver.test_kubeapi import PROFILE, Served
from tests.support.cli import run_cli
from tests.support.processes import served_api


def _spoiled(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE)
    assert run_cli(["cluster", "create", "demo", "--profile", str(profile)], home).exit_code == 0
    store = Store(home / "clusters" / "demo" / "cluster.db")
    budget = store.get("PodDisruptionBudget", "web", "shop") or {}
    budget["spec"]["minAvailable"] = "abc"
    store.put(budget)
    store.commit()
    store.close()
    return home


def test_a_budget_that_cannot_be_read_allows_no_disruption_and_says_why() -> None:
    status = budget_status({"minAvailable": "abc"}, 3, 3)
    assert status["disruptionsAllowed"] == 0
    assert status["conditions"][0]["reason"] == "SyncFailed"
    assert "'abc'" in status["conditions"][0]["message"]
    assert budget_status({"maxUnavailable": [1]}, 3, 3)["disruptionsAllowed"] == 0


def test_a_run_says_which_stored_object_is_wrong_and_goes_on(tmp_path: Path) -> None:
    home = _spoiled(tmp_path)
    run = run_cli(["controller", "run", "--cluster", "demo", "--until", "idle"], home)
    assert run.exit_code == 0, run.stderr
    warned = [line for line in run.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "poddisruptionbudget/shop/web: spec.minAvailable" in warned[0]
    listed = run_cli(["get", "pdb", "--cluster", "demo", "-n", "shop"], home)
    assert listed.exit_code == 0 and listed.stdout.split("\n")[1].split()[2:5] == [
        "abc",
        "N/A",
        "0",
    ]
    with served_api(home, "demo", "--no-controllers") as (process, info):
        served = Served(home, home / "clusters" / "demo", Path(info["kubeconfig"]), "", process)
        with httpx.Client(
            base_url=info["server"],
            verify=served.trust(),
            headers={"Authorization": f"Bearer {served.token()}"},
        ) as http:
            got = http.get("/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web")
            assert got.status_code == 200
            condition = got.json()["status"]["conditions"][0]
            assert condition["type"] == "DisruptionAllowed" and condition["status"] == "False"
            fixed = http.patch(
                "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web",
                content=b'{"spec":{"minAvailable":2}}',
                headers={"Content-Type": "application/merge-patch+json"},
            )
            assert fixed.status_code == 200 and fixed.json()["status"]["disruptionsAllowed"] == 1
