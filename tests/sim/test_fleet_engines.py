"""Fleet rehearsals cut into parts no rule ties, rehearsed as Ray tasks and merged: the
same report, the same member stores and the same states recorded as one process gives;
a part that stops hands the fleet back to one process; an install killed half-way is
finished when the fleet is next opened; bad engines and addresses in one line (SPEC X1,
X5)."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.errors import InputError
from kupgrade.sim.fleet.engines import LocalEngine, probe
from kupgrade.sim.fleet.home import opened_fleet
from kupgrade.sim.fleet.install import PENDING, stage
from kupgrade.sim.fleet.parts import Cut, all_completed, jobs, merge, partition, rehearse_part
from kupgrade.sim.fleet.rehearsal import TICK, Rehearsal, Settings
from tests.support.cli import kupgrade
from tests.support.fleetkit import create, kupgrade_home

START, MIDDLE, TARGET = "1.28.500-gke.120", "1.29.100-gke.251", "1.30.0-gke.1930"
SIM = {"controlPlanes": 1, "nodesPerPool": 2, "seed": 5}


def gdc_groups() -> dict[str, Any]:
    """Two management groups: admin-a with two users, admin-b with one."""
    user = {"version": START, "role": "user", "pools": {"np1": START}}
    return {
        "clusters": {
            "admin-a": {"version": START, "role": "admin"},
            "admin-b": {"version": START, "role": "admin"},
            "ua1": {**user, "managed_by": "admin-a"},
            "ua2": {**user, "managed_by": "admin-a"},
            "ub1": {**user, "managed_by": "admin-b"},
        },
        "simulation": SIM,
    }


def kube_fleet(count: int) -> dict[str, Any]:
    return {
        "platform": "kubernetes",
        "policy": "k8s-n3",
        "simulation": {"nodesPerPool": 2, "seed": 3},
        "clusters": {
            f"k{i}": {"cp": "1.29.0", "pools": {"md0": "1.29.0", "md1": "1.29.0"}}
            for i in range(count)
        },
    }


def run(home: Path, *args: str) -> Any:
    return kupgrade(*args, env={"KUPGRADE_HOME": str(home)})


def twins(tmp_path: Path, doc: dict[str, Any]) -> tuple[Path, Path]:
    """Two homes holding the same fleet, byte for byte."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    create(one, doc)
    shutil.copytree(one, two)
    return one, two


def rows(path: Path, table: str, skip: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(path)
    try:
        found = db.execute(f"SELECT * FROM {table}").fetchall()
    finally:
        db.close()
    return sorted((r for r in found if not (table == "meta" and r[0] in skip)), key=repr)


def same_stores(one: Path, two: Path, members: list[str]) -> None:
    for name in members:
        a, b = (h / "clusters" / name / "cluster.db" for h in (one, two))
        for table in ("objects", "schedule", "events"):
            assert rows(a, table) == rows(b, table), (name, table)
        assert rows(a, "meta", (TICK,)) == rows(b, "meta", (TICK,)), name
    fa, fb = (h / "fleets" / "f" / "fleet.db" for h in (one, two))
    ev = [[r[1:] for r in rows(f, "events")] for f in (fa, fb)]  # (at, ...) without seq
    assert sorted(ev[0], key=repr) == sorted(ev[1], key=repr)


def report(done: Any) -> dict[str, Any]:
    out = json.loads(done.stdout)
    out.pop("wallSeconds")
    return dict(out)


@pytest.mark.parametrize(
    ("doc", "to", "available"),
    [
        (gdc_groups(), TARGET, MIDDLE),
        (kube_fleet(4), "1.31.0", "1.30.0,1.31.0"),
    ],
    ids=["gdc-groups", "kubernetes"],
)
def test_ray_gives_the_report_and_stores_one_process_gives(
    tmp_path: Path, doc: dict[str, Any], to: str, available: str
) -> None:
    pytest.importorskip("ray")
    one, two = twins(tmp_path, doc)
    args = ("fleet", "rehearse", "--to", to, "--available", available, "-o", "json")
    local = run(one, *args)
    ray = run(two, *args, "--engine", "ray")
    assert local.returncode == ray.returncode == 0, ray.stderr
    assert report(ray) == report(local)
    assert report(local)["outcome"] == "completed"
    same_stores(one, two, sorted(doc["clusters"]))
    # once done, the same command shows the report again, whatever the engine
    again = run(two, *args, "--engine", "ray")
    assert report(again) == report(local)
    status = run(two, "fleet", "status", "-o", "json")
    assert status.returncode == 0


def test_the_cut_follows_the_rules_and_the_plan(tmp_path: Path) -> None:
    create(tmp_path, gdc_groups())
    with kupgrade_home(tmp_path), opened_fleet("f") as (_, store, info, members):
        rehearsal = Rehearsal(store, members, info)
        rehearsal.begin(Settings(TARGET, [MIDDLE], "gdc", 0))
        assert partition(rehearsal).parts == [["admin-a", "ua1", "ua2"], ["admin-b", "ub1"]]
        state = rehearsal.state or {}
        rehearsal.fleet.set_meta("rehearsal", {**state, "maxParallel": 2})
        cut = partition(rehearsal)
        assert len(cut.parts) == 1 and "--max-parallel" in (cut.whole or "")


def test_a_part_that_stops_hands_the_fleet_to_one_process(tmp_path: Path) -> None:
    """A plan the platform refuses stops its part; the driver rehearses the whole fleet in
    one process, which stops where the single run stops."""
    pytest.importorskip("ray")
    one, two = twins(tmp_path, gdc_groups())
    plan = {
        "steps": [
            {"id": "s1", "object": "cluster/admin-a", "from": START, "to": MIDDLE, "after": []},
            {"id": "s2", "object": "cluster/ua1", "from": START, "to": TARGET, "after": ["s1"]},
            {"id": "s3", "object": "cluster/admin-b", "from": START, "to": MIDDLE, "after": []},
        ]
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    args = ("fleet", "rehearse", "--to", TARGET, "--plan", str(tmp_path / "plan.json"))
    local = run(one, *args, "-o", "json")
    ray = run(two, *args, "--engine", "ray")
    assert local.returncode == ray.returncode == 1
    assert "rehearsed in one process" in ray.stderr
    on_ray = run(two, "fleet", "status", "-o", "json")
    on_local = run(one, "fleet", "status", "-o", "json")
    assert json.loads(on_ray.stdout) == json.loads(on_local.stdout)
    assert json.loads(local.stdout)["stop"]["kind"] == "refused"


def test_an_install_killed_half_way_is_finished_on_the_next_open(tmp_path: Path) -> None:
    """Moves 1 and 2 done, move 3 not (a kill between them): the next command that opens
    the fleet puts the members in place before reading them."""
    one, two = twins(tmp_path, kube_fleet(3))
    local = run(
        one, "fleet", "rehearse", "--to", "1.31.0", "--available", "1.30.0,1.31.0", "-o", "json"
    )
    with kupgrade_home(two), opened_fleet("f") as (root, store, info, members):
        rehearsal = Rehearsal(store, members, info)
        rehearsal.begin(Settings("1.31.0", ["1.30.0", "1.31.0"], "k8s-n3", 0))
        results = LocalEngine().map(rehearse_part, jobs(rehearsal, partition(rehearsal)))
        assert all_completed(results)
        tick = int(store.meta("tick")) + 1
        now = max(float(r.meta["now"]) for r in results)
        stage(root, [m for r in results for m in r.members], tick, now)
        merge(rehearsal, results)
        store.set_meta("tick", tick)
        store.set_meta(PENDING, sorted(rehearsal.names))
        store.commit()
    assert (two / "fleets" / "f" / ".install").is_dir()
    shown = run(two, "fleet", "rehearse", "-o", "json")
    assert shown.returncode == 0
    assert report(shown) == report(local)
    assert not (two / "fleets" / "f" / ".install").exists()
    same_stores(one, two, ["k0", "k1", "k2"])


def test_watching_needs_one_clock_and_engines_are_named(tmp_path: Path) -> None:
    create(tmp_path, kube_fleet(1))
    for args, says in (
        (["--engine", "ray", "--speed", "60"], "go with --engine local"),
        (["--engine", "ray", "--console"], "go with --engine local"),
        (["--engine", "dask"], "unknown engine"),
        (["--address", "127.0.0.1:6379"], "goes with --engine ray"),
    ):
        done = run(tmp_path, "fleet", "rehearse", "--to", "1.30.0", *args)
        assert done.returncode != 0
        assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    # nothing was started by a refused command
    status = json.loads(run(tmp_path, "fleet", "status", "-o", "json").stdout)
    assert status["outcome"] == "not started"


def _server(answer: bytes) -> tuple[socket.socket, int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.recv(64)
            conn.sendall(answer)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener, listener.getsockname()[1]


def test_an_address_that_is_no_ray_head_is_refused_quickly() -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    with pytest.raises(InputError, match="cannot reach a Ray head"):
        probe(f"127.0.0.1:{port}")
    listener, web = _server(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    try:
        with pytest.raises(InputError, match="not as a Ray head"):
            probe(f"127.0.0.1:{web}")
    finally:
        listener.close()
    grpc_like = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # an empty SETTINGS frame, as gRPC sends
    listener, port = _server(grpc_like)
    try:
        probe(f"ray://127.0.0.1:{port}")  # answers as a gRPC server: let Ray connect
    finally:
        listener.close()
    for bad in ("head", ":80", "head:http"):
        with pytest.raises(InputError, match="not HOST:PORT"):
            probe(bad)


class _Rules:
    def __init__(self, scopes: dict[str, list[str]]) -> None:
        self.scopes = scopes

    def scope(self, name: str) -> list[str]:
        return self.scopes[name]


class _Fleet:
    """What partition reads of a rehearsal."""

    def __init__(self, scopes: dict[str, list[str]], steps: dict[str, dict[str, Any]]) -> None:
        self.names = sorted(scopes)
        self.state: dict[str, Any] = {"maxParallel": 0}
        self.pacer = None
        self.steps = steps
        self.monitor = type("M", (), {"rules": _Rules(scopes)})()


@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=n),
        )
    )
)
def test_no_scope_or_plan_edge_crosses_a_part(case: tuple[int, list[Any], list[Any]]) -> None:
    n, ties, edges = case
    names = [f"c{i:02d}" for i in range(n)]
    scopes = {name: [name] for name in names}
    for a, b in ties:
        scopes[names[a]].append(names[b])
    steps = {f"s{i}": {"cluster": names[i], "after": []} for i in range(n)}
    for a, b in edges:
        steps[f"s{a}"]["after"].append(f"s{b}")
    cut: Cut = partition(_Fleet(scopes, steps))  # type: ignore[arg-type]
    part_of = {name: i for i, part in enumerate(cut.parts) for name in part}
    assert sorted(part_of) == names  # every member once
    for name, scope in scopes.items():
        assert {part_of[o] for o in scope} == {part_of[name]}
    for record in steps.values():
        for after in record["after"]:
            assert part_of[steps[after]["cluster"]] == part_of[record["cluster"]]
    # the finest cut: a part of two or more is held by a tie or an edge
    tied = {(names[a], names[b]) for a, b in ties} | {(names[a], names[b]) for a, b in edges}
    for part in cut.parts:
        if len(part) > 1:
            assert any(a in part and b in part and a != b for a, b in tied)
