"""Staged fleet rollouts on simulated clusters (SPEC X9, with X1, X3, X4, X5): windows,
soaks, approvals, exclusions and health gates on the virtual clock; refusals with rule,
objects and fix; bad documents refused in one line; every state checked by the rules."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml

from kupgrade.errors import InputError
from kupgrade.plan.rollout_doc import EXAMPLE, read_rollout
from kupgrade.plan.windows import WEEKDAYS
from kupgrade.sim.store import Store
from tests.support.cli import kupgrade
from tests.support.fleetkit import create, gdc_broken, states

START = "2026-12-04T20:00:00Z"  # a Friday evening
T0 = dt.datetime(2026, 12, 4, 20, 0, tzinfo=dt.UTC).timestamp()
BERLIN = "Europe/Berlin"
ERRORS = "sum(rate(http_errors_total[5m])) / sum(rate(http_requests_total[5m]))"


def _gdc_fleet(**simulation: Any) -> dict[str, Any]:
    v128, v129 = "1.28.500-gke.120", "1.29.100-gke.251"
    users = {
        f"u{i}": {
            "version": v128,
            "role": "user",
            "managed_by": "admin",
            "labels": {"env": "dev" if i == 1 else "prod"},
        }
        for i in range(1, 5)
    }
    return {
        "clusters": {"admin": {"version": v128, "role": "admin"}, **users},
        "target": v129,
        "available": [v128, v129],
        "simulation": {"start": START, "controlPlanes": 1, "nodesPerPool": 2, **simulation},
    }


def _rollout(stages: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kupgrade.io/v1alpha1",
        "kind": "FleetRollout",
        "metadata": {"name": "r"},
        "spec": {"stages": stages, **spec},
    }


STAGES: list[dict[str, Any]] = [
    {"name": "mgmt", "clusters": {"roles": ["admin"]}},
    {"name": "canary", "clusters": {"labels": {"env": "dev"}}, "soak": "2h"},
    {"name": "prod", "clusters": {}, "maxConcurrency": 2},
]
WEEKEND: dict[str, Any] = {
    "clusters": {"roles": ["user"]},
    "days": ["Sat", "Sun"],
    "start": "01:00",
    "duration": "4h",
    "timeZone": BERLIN,
}


def _run(home: Path, *args: str) -> Any:
    return kupgrade(*args, env={"KUPGRADE_HOME": str(home)})


def _json(home: Path, *args: str, code: int = 0) -> dict[str, Any]:
    result = _run(home, *args, "-o", "json")
    assert result.returncode == code, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def _write(home: Path, doc: dict[str, Any], name: str = "r.yaml") -> str:
    path = home / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _in_window(at: float, seconds: float) -> bool:
    """Literally: [at, at + seconds] inside one Sat/Sun 01:00-05:00 Berlin occurrence."""
    local = dt.datetime.fromtimestamp(at, ZoneInfo(BERLIN))
    begin = local.replace(hour=1, minute=0, second=0, microsecond=0)
    end = begin + dt.timedelta(hours=4)
    return (
        WEEKDAYS[local.weekday()] in ("Sat", "Sun")
        and begin <= local
        and local + dt.timedelta(seconds=seconds) <= end
    )


def _metrics(path: Path, burn_at: float | None) -> None:
    """Request and error counters every minute for a day and a half; from `burn_at` one
    request in twenty fails (a burning objective), before it one in a thousand."""
    requests, errors, rows_r, rows_e = 0, 0, [], []
    for i in range(36 * 60):
        t = int(T0) + i * 60
        requests += 1000
        errors += 50 if burn_at is not None and t >= burn_at else 1
        rows_r.append(f"http_requests_total {requests} {t}")
        rows_e.append(f"http_errors_total {errors} {t}")
    path.write_text(
        "# TYPE http_requests counter\n"
        + "\n".join(rows_r)
        + "\n# TYPE http_errors counter\n"
        + "\n".join(rows_e)
        + "\n# EOF\n"
    )


def test_the_example_is_a_rollout_every_field_explained(tmp_path: Path) -> None:
    printed = _run(tmp_path, "fleet", "rollout", "example")
    assert printed.returncode == 0
    assert printed.stdout == EXAMPLE
    rollout = read_rollout(yaml.safe_load(printed.stdout), "example")
    assert [s.name for s in rollout.stages] == ["management", "canary", "production"]
    canary = rollout.stages[1]
    assert (canary.max_concurrency, canary.soak, canary.approval) == (1, 7200.0, False)
    assert canary.gates[0].threshold == 0.01 and canary.gates[0].hold == 600.0
    assert rollout.stages[2].approval is True
    assert rollout.windows[0].rule.seconds == 4 * 3600  # type: ignore[union-attr]
    assert rollout.durations == {"lab-user-1": 5400.0}
    # every key the example writes is explained, on its line or in the comment above it
    lines = EXAMPLE.splitlines()
    explained: dict[str, bool] = {}
    for i, line in enumerate(lines):
        body = line.split("#")[0].strip().removeprefix("- ")
        if ":" in body and not line.lstrip().startswith("#"):
            key = body.split(":")[0].strip()
            told = "#" in line or lines[i - 1].lstrip().startswith("#") or body.endswith(":")
            explained[key] = explained.get(key, False) or told
    unexplained = sorted(k for k, told in explained.items() if not told)
    assert unexplained == []
    assert {"target", "stages", "maxConcurrency", "soak", "approval", "gates", "promql"} <= set(
        explained
    )
    assert {"threshold", "for", "windows", "days", "timeZone", "exclusions"} <= set(explained)


def test_windows_soak_and_stage_order_hold_on_the_virtual_clock(tmp_path: Path) -> None:
    create(tmp_path, _gdc_fleet())
    rollout = _write(tmp_path, _rollout(STAGES, windows=[WEEKEND]))
    planned = _json(tmp_path, "fleet", "rollout", "plan", rollout, "--fleet", "f")
    report = _json(tmp_path, "fleet", "rollout", "rehearse", rollout, "--fleet", "f")
    assert planned["outcome"] == report["outcome"] == "completed"
    assert report["startedAt"] == START
    for r in (planned, report):
        assert [s["stage"] for s in r["steps"]] == ["mgmt", "canary", "prod", "prod", "prod"]
    steps = {s["cluster"]: s for s in report["steps"]}
    # the admin cluster has no window: it goes at once; users only inside the weekend
    assert steps["admin"]["startedAt"] == 0.0
    for name in ("u1", "u2", "u3", "u4"):
        s = steps[name]
        assert _in_window(T0 + s["startedAt"], s["forecastSeconds"]), s
        assert s["heldBy"]
    canary = report["stages"][1]
    prod_start = min(steps[n]["startedAt"] for n in ("u2", "u3", "u4"))
    assert canary["soakUntil"] == pytest.approx(canary["doneAt"] + 7200)
    assert prod_start >= canary["soakUntil"]
    # maxConcurrency 2: never three production clusters at once
    spans = [(steps[n]["startedAt"], steps[n]["finishedAt"]) for n in ("u2", "u3", "u4")]
    for t, _ in spans:
        assert sum(1 for a, b in spans if a <= t < b) <= 2
    # every recorded state keeps every rule (SPEC X1)
    events = [e for e in report["events"] if e["object"].startswith("stage/")]
    assert [e["reason"] for e in events][:2] == ["StageStarted", "StageDone"]
    # the fleet itself was not touched by the rehearsal
    assert _json(tmp_path, "fleet", "status", "--fleet", "f")["outcome"] == "not started"


def test_every_state_the_rollout_passes_is_legal(tmp_path: Path) -> None:
    fleet = _gdc_fleet()
    create(tmp_path, fleet)
    rollout = _write(tmp_path, _rollout(STAGES, windows=[WEEKEND]))
    _json(tmp_path, "fleet", "rollout", "start", rollout, "--fleet", "f")
    store = Store(tmp_path / "fleets" / "f" / "fleet.db")
    try:
        events = store.events()
    finally:
        store.close()
    checked = states(events)
    assert len(checked) > 5
    for _, state in checked:
        assert gdc_broken(fleet, state) == []


def test_a_burning_canary_halts_before_the_next_stage(tmp_path: Path) -> None:
    burn = T0 + 7 * 3600  # during the canary's soak
    _metrics(tmp_path / "ok.om", None)
    _metrics(tmp_path / "burn.om", burn)
    create(tmp_path, _gdc_fleet(metrics="ok.om", clusters={"u1": {"metrics": "burn.om"}}))
    gate = {"name": "errors", "promql": ERRORS, "threshold": 0.01, "for": "10m"}
    stages = [STAGES[0], {**STAGES[1], "soak": "6h", "gates": [gate]}, STAGES[2]]
    rollout = _write(tmp_path, _rollout(stages, windows=[WEEKEND]))
    report = _json(tmp_path, "fleet", "rollout", "rehearse", rollout, "--fleet", "f", code=1)
    assert report["outcome"] == "halted"
    halt = report["halt"]
    assert (halt["gate"], halt["cluster"], halt["stage"]) == ("errors", "u1", "canary")
    assert halt["value"] == pytest.approx(0.05)
    # above its threshold for its `for`: halted ten minutes after the rate showed it
    assert 600 <= T0 + halt["at"] - burn <= 600 + 300
    assert not [s for s in report["steps"] if s["stage"] == "prod" and s["startedAt"] is not None]
    assert "u1" in halt["why"] and "errors" in halt["why"]
    text = _run(tmp_path, "fleet", "rollout", "rehearse", rollout, "--fleet", "f")
    assert (
        text.returncode == 1 and "halted: gate errors of stage canary on cluster u1" in text.stdout
    )


def test_gates_without_a_burn_pass_and_are_reported(tmp_path: Path) -> None:
    _metrics(tmp_path / "ok.om", None)
    create(tmp_path, _gdc_fleet(metrics="ok.om"))
    gate = {"name": "errors", "promql": ERRORS, "threshold": 0.01, "for": "10m"}
    stages = [STAGES[0], {**STAGES[1], "gates": [gate]}, STAGES[2]]
    report = _json(
        tmp_path, "fleet", "rollout", "rehearse", _write(tmp_path, _rollout(stages)), "--fleet", "f"
    )
    assert report["outcome"] == "completed"
    readings = report["stages"][1]["gates"]
    assert [(g["gate"], g["cluster"]) for g in readings] == [("errors", "u1")]
    assert readings[0]["value"] == pytest.approx(0.001)


def test_an_approval_gate_waits_until_approve(tmp_path: Path) -> None:
    create(tmp_path, _gdc_fleet())
    stages = [STAGES[0], STAGES[1], {**STAGES[2], "approval": True}]
    rollout = _write(tmp_path, _rollout(stages))
    first = _json(tmp_path, "fleet", "rollout", "start", rollout, "--fleet", "f")
    assert first["outcome"] == "waiting"
    assert "approve prod" in first["waitingFor"]
    assert all(s["startedAt"] is None for s in first["steps"] if s["stage"] == "prod")
    again = _json(tmp_path, "fleet", "rollout", "resume", "--fleet", "f")
    assert again["outcome"] == "waiting"  # nothing changes without the approval
    plain = _run(tmp_path, "fleet", "rehearse", "--fleet", "f")
    assert plain.returncode == 1 and "a rollout of fleet f is under way" in plain.stderr
    said = _json(tmp_path, "fleet", "rollout", "approve", "prod", "--fleet", "f", "--by", "alice")
    assert said["applied"] == "approved prod"
    done = _json(tmp_path, "fleet", "rollout", "resume", "--fleet", "f")
    assert done["outcome"] == "completed"
    approval = done["stages"][2]["approval"]
    assert approval["approvedBy"] == "alice" and approval["approvedOn"]
    assert approval["approvedAt"] >= approval["askedAt"]
    reasons = [(e["object"], e["reason"]) for e in done["events"]]
    assert ("stage/prod", "ApprovalRequested") in reasons
    assert ("stage/prod", "Approved") in reasons
    unknown = _run(tmp_path, "fleet", "rollout", "approve", "nope", "--fleet", "f")
    assert unknown.returncode == 1 and "no stage 'nope'" in unknown.stderr


def test_a_halt_holds_new_steps_until_resume(tmp_path: Path) -> None:
    create(tmp_path, _gdc_fleet())
    stages = [STAGES[0], STAGES[1], {**STAGES[2], "approval": True}]
    rollout = _write(tmp_path, _rollout(stages))
    assert _json(tmp_path, "fleet", "rollout", "start", rollout, "--fleet", "f")["outcome"] == (
        "waiting"
    )
    _json(tmp_path, "fleet", "rollout", "approve", "prod", "--fleet", "f", "--by", "bob")
    _json(tmp_path, "fleet", "rollout", "halt", "--fleet", "f", "--by", "carol")
    status = _json(tmp_path, "fleet", "rollout", "status", "--fleet", "f")
    assert all(s["startedAt"] is None for s in status["steps"] if s["stage"] == "prod")
    done = _json(tmp_path, "fleet", "rollout", "resume", "--fleet", "f", "--by", "carol")
    assert done["outcome"] == "completed"
    messages = [e["message"] for e in done["events"]]
    assert "halted by carol" in messages and "resumed by carol" in messages


def _kube_fleet() -> dict[str, Any]:
    return {
        "platform": "kubernetes",
        "policy": "k8s-n3",
        "clusters": {
            "patchy": {"cp": "1.30.2", "pools": {"md0": "1.30.2"}},
            "minory": {"cp": "1.29.9", "pools": {"md0": "1.29.9"}},
        },
        "target": "1.30.5",
        "available": ["1.29.9", "1.30.5"],
        "simulation": {"start": START, "controlPlanes": 1, "nodesPerPool": 2},
    }


def test_an_exclusion_scoped_minor_defers_minor_steps_not_patches(tmp_path: Path) -> None:
    create(tmp_path, _kube_fleet())
    exclusion = {"from": "2026-12-04", "to": "2026-12-06", "scope": "minor"}
    rollout = _write(
        tmp_path, _rollout([{"name": "all", "maxConcurrency": 2}], exclusions=[exclusion])
    )
    report = _json(tmp_path, "fleet", "rollout", "rehearse", rollout, "--fleet", "f")
    assert report["outcome"] == "completed"
    end = dt.datetime(2026, 12, 7, tzinfo=dt.UTC).timestamp() - T0
    patch = [s for s in report["steps"] if s["cluster"] == "patchy"]
    minor = [s for s in report["steps"] if s["cluster"] == "minory" and s["from"] != s["to"]]
    assert patch and all(s["startedAt"] < end for s in patch)
    moved = [s for s in minor if s["from"].split(".")[:2] != s["to"].split(".")[:2]]
    assert moved and all(s["startedAt"] >= end for s in moved)
    everything = {**exclusion, "scope": "all"}
    held = _json(
        tmp_path,
        "fleet",
        "rollout",
        "plan",
        _write(tmp_path, _rollout([{"name": "all", "maxConcurrency": 2}], exclusions=[everything])),
        "--fleet",
        "f",
    )
    assert all(s["startedAt"] >= end for s in held["steps"])


def test_a_step_longer_than_every_window_is_refused_with_rule_objects_fix(tmp_path: Path) -> None:
    create(tmp_path, _gdc_fleet())
    rollout = _write(
        tmp_path, _rollout(STAGES, windows=[WEEKEND], durations={"clusters": {"u3": "6h"}})
    )
    for command in ("plan", "rehearse", "start"):
        report = _json(tmp_path, "fleet", "rollout", command, rollout, "--fleet", "f", code=1)
        assert report["outcome"] == "refused"
        refused = report["refused"]
        assert refused["rules"] == ["X9.window"]
        assert "cluster/u3" in refused["objects"]
        assert "6h0m0s" in refused["message"] and "4h0m0s" in refused["message"]
        assert "window of at least 6h0m0s" in refused["fix"]
    assert _json(tmp_path, "fleet", "status", "--fleet", "f")["outcome"] == "not started"


def test_a_stage_order_that_breaks_skew_is_refused_with_the_rule(tmp_path: Path) -> None:
    create(tmp_path, _gdc_fleet())
    users_first = [
        {"name": "users", "clusters": {"roles": ["user"]}},
        {"name": "mgmt", "clusters": {"roles": ["admin"]}},
    ]
    report = _json(
        tmp_path,
        "fleet",
        "rollout",
        "plan",
        _write(tmp_path, _rollout(users_first)),
        "--fleet",
        "f",
        code=1,
    )
    refused = report["refused"]
    assert refused["rules"] == ["G2.user-newer"]
    assert "cluster/admin" in refused["objects"]
    assert "stage users would move" in refused["message"]
    assert "in stage users or an earlier one" in refused["fix"]
    text = _run(tmp_path, "fleet", "rollout", "plan", str(tmp_path / "r.yaml"), "--fleet", "f")
    assert text.returncode == 1 and "G2.user-newer" in text.stdout


def test_a_cluster_no_stage_selects_is_refused(tmp_path: Path) -> None:
    create(tmp_path, _gdc_fleet())
    only = [STAGES[0], {"name": "dev", "clusters": {"labels": {"env": "dev"}}}]
    report = _json(
        tmp_path,
        "fleet",
        "rollout",
        "plan",
        _write(tmp_path, _rollout(only)),
        "--fleet",
        "f",
        code=1,
    )
    assert report["refused"]["rules"] == ["X9.stage"]
    assert "no stage selects it" in report["refused"]["message"]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"spec": {"stages": [{"name": "a", "colour": "red"}]}}, "unknown field `colour`"),
        (
            {"spec": {"stages": [{"name": "a"}], "windows": [{**WEEKEND, "days": []}]}},
            "never opens",
        ),
        (
            {
                "spec": {
                    "stages": [{"name": "a"}],
                    "windows": [{**WEEKEND, "timeZone": "Mars/Base"}],
                }
            },
            "unknown time zone 'Mars/Base'",
        ),
        (
            {
                "spec": {
                    "stages": [
                        {"name": "a", "gates": [{"name": "g", "promql": "sum(", "threshold": 1}]}
                    ]
                }
            },
            "gate g: parse error",
        ),
        ({"spec": {"stages": [{"name": "a", "soak": "forever"}]}}, "'forever' is not a duration"),
        ({"spec": {"stages": [{"name": "a", "soak": "31d"}]}}, "longer than 30 days"),
        ({"spec": {"stages": [{"name": "a"}, {"name": "a"}]}}, "two stages are named 'a'"),
        ({"spec": {"stages": []}}, "at least one stage"),
        (
            {"spec": {"stages": [{"name": "a"}], "windows": [{**WEEKEND, "start": "25:00"}]}},
            "not a time of day",
        ),
        (
            {
                "spec": {
                    "stages": [{"name": "a"}],
                    "exclusions": [{"from": "2027-01-05", "to": "2026-12-20"}],
                }
            },
            "ends (2026-12-20) before it starts",
        ),
        (
            {"spec": {"stages": [{"name": "a"}], "exclusions": [{"from": "x", "to": "y"}]}},
            "neither a date",
        ),
        ({"kind": "Fleet"}, "not a rollout"),
        ({"spec": {"stages": [{"name": "a", "maxConcurrency": 0}]}}, "maxConcurrency is 0"),
    ],
)
def test_bad_rollout_documents_are_refused_in_one_line(
    tmp_path: Path, change: dict[str, Any], said: str
) -> None:
    create(tmp_path, _gdc_fleet())
    doc = {**_rollout([{"name": "a"}]), **change}
    result = _run(tmp_path, "fleet", "rollout", "plan", _write(tmp_path, doc), "--fleet", "f")
    assert result.returncode == 1
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    assert said in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert str(tmp_path / "r.yaml") in lines[0]


def test_hostile_rollout_files_are_refused_in_one_line(tmp_path: Path) -> None:
    create(tmp_path, _gdc_fleet())
    for body in (b"\xff\xfe not utf-8", b"spec: [unclosed", b"- a list\n", b"a: " + b"[" * 5000):
        (tmp_path / "bad.yaml").write_bytes(body)
        result = _run(
            tmp_path, "fleet", "rollout", "plan", str(tmp_path / "bad.yaml"), "--fleet", "f"
        )
        assert result.returncode == 1, body
        assert "Traceback" not in result.stderr and "bad.yaml" in result.stderr


def test_status_shows_stages_windows_gates_and_a_gantt_chart(tmp_path: Path) -> None:
    create(tmp_path, _gdc_fleet())
    rollout = _write(tmp_path, _rollout(STAGES, windows=[WEEKEND]))
    _json(tmp_path, "fleet", "rollout", "start", rollout, "--fleet", "f")
    text = _run(tmp_path, "fleet", "rollout", "status", "--fleet", "f")
    assert text.returncode == 0
    for word in (
        "STAGE",
        "canary",
        "SOAK UNTIL",
        "WINDOW CLUSTERS",
        "Europe/Berlin",
        "====",
        "completed",
    ):
        assert word in text.stdout
    data = _json(tmp_path, "fleet", "rollout", "status", "--fleet", "f")
    assert {"outcome", "startedAt", "steps", "stages", "windows", "events"} <= data.keys()
    assert all({"cluster", "stage", "startedAt", "finishedAt"} <= s.keys() for s in data["steps"])
    again = _json(tmp_path, "fleet", "rollout", "start", rollout, "--fleet", "f")
    assert again["outcome"] == "completed" and again["steps"] == data["steps"]


def test_a_twins_measured_update_is_its_clusters_forecast(tmp_path: Path) -> None:
    """SPEC X7, X9: the must-gather's own update history gives the forecast."""
    capture = Path(__file__).parents[1] / "data" / "captures" / "must-gather-aws"
    assert _run(tmp_path, "cluster", "import", "aws", "--from", str(capture)).returncode == 0
    create(tmp_path, _gdc_fleet())
    durations = {"clusters": {"u1": "90m"}, "twins": {"u2": "aws", "u3": "nope"}}
    planned = _json(
        tmp_path,
        "fleet",
        "rollout",
        "plan",
        _write(tmp_path, _rollout(STAGES, durations=durations)),
        "--fleet",
        "f",
    )
    forecasts = {s["cluster"]: (s["forecastSeconds"], s["forecastFrom"]) for s in planned["steps"]}
    assert forecasts["u1"] == (5400.0, "stated")
    assert forecasts["u2"] == (1829.0, "twin aws")
    assert forecasts["u3"][1] == "profile (twin nope has no measured update)"
    assert forecasts["u4"][1] == "profile"
    u2 = next(s for s in planned["steps"] if s["cluster"] == "u2")
    assert u2["finishedAt"] - u2["startedAt"] == 1829.0


def test_a_stage_with_nothing_to_do_asks_no_approval(tmp_path: Path) -> None:
    create(tmp_path, _gdc_fleet())
    stages = [*STAGES, {"name": "later", "clusters": {"names": ["gone"]}, "approval": True}]
    report = _json(
        tmp_path, "fleet", "rollout", "start", _write(tmp_path, _rollout(stages)), "--fleet", "f"
    )
    assert report["outcome"] == "completed"
    later = report["stages"][-1]
    assert later["status"] == "done" and later["clusters"] == []
    assert later["approval"]["askedAt"] is None


def test_unquoted_yaml_dates_times_and_day_names_read_as_written(tmp_path: Path) -> None:
    """YAML 1.1 reads `from: 2026-12-20` as a date and `start: 22:30` as the base-60
    integer 1350; a user who did not quote them means what the quoted form says."""
    quoted = yaml.safe_load(
        "apiVersion: kupgrade.io/v1alpha1\nkind: FleetRollout\nspec:\n  stages: [{name: a}]\n"
        '  windows: [{days: [Sat, Sun], start: "22:30", duration: 4h}]\n'
        '  exclusions: [{from: "2026-12-20", to: "2027-01-05T06:00:00+00:00", scope: minor}]\n'
    )
    bare = yaml.safe_load(
        "apiVersion: kupgrade.io/v1alpha1\nkind: FleetRollout\nspec:\n  stages: [{name: a}]\n"
        "  windows: [{days: [saturday, SUN], start: 22:30, duration: 4h}]\n"
        "  exclusions: [{from: 2026-12-20, to: 2027-01-05T06:00:00Z, scope: minor}]\n"
    )
    assert bare["spec"]["windows"][0]["start"] == 1350  # what PyYAML made of it
    one, other = read_rollout(quoted, "quoted"), read_rollout(bare, "bare")
    assert one.windows == other.windows and one.exclusions == other.exclusions
    window = one.windows[0].rule
    assert window.start == (22, 30) and window.days == frozenset({5, 6})
    wrong = {**bare, "spec": {**bare["spec"], "windows": [{"start": 5, "duration": "1h"}]}}
    with pytest.raises(InputError, match="start"):
        read_rollout(wrong, "wrong")


def test_a_rollout_rehearses_as_one_ray_task_with_the_same_report(tmp_path: Path) -> None:
    """A rollout's stages tie every cluster: one task; the report is this process's."""
    pytest.importorskip("ray")
    create(tmp_path, _gdc_fleet())
    rollout = _write(tmp_path, _rollout(STAGES, windows=[WEEKEND]))
    here = _json(tmp_path, "fleet", "rollout", "rehearse", rollout, "--fleet", "f")
    args = ("fleet", "rollout", "rehearse", rollout, "--fleet", "f", "--engine", "ray")
    on_ray = _json(tmp_path, *args)
    for report in (here, on_ray):
        report.pop("wallSeconds")
    assert on_ray == here and here["outcome"] == "completed"
    said = _run(tmp_path, *args)
    assert "one part" not in said.stderr and "tie every cluster" in said.stderr
    refused = _run(tmp_path, *args, "--speed", "60")
    assert refused.returncode != 0 and "go with --engine local" in refused.stderr
