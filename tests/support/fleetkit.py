"""Fleets for tests: created from a document under a KUPGRADE_HOME, rehearsed in this
process, and every state the rehearsal recorded rebuilt from its event log and checked
again with the skew rules, independently of the monitor that recorded them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from kupgrade.sim.fleet.doc import read_fleet
from kupgrade.sim.fleet.home import create_fleet, locked, opened_fleet
from kupgrade.sim.fleet.rehearsal import Rehearsal, Settings
from kupgrade.sim.fleet.report import fleet_report
from kupgrade.sim.gdc.fleet import running_versions
from kupgrade.sim.store import Store
from kupgrade.skew.fleet import parse_fleet
from kupgrade.skew.gdc import WARNINGS, check_fleet
from kupgrade.skew.inventory import Instance, Inventory, InventoryNode
from kupgrade.skew.k8s import check


@contextmanager
def kupgrade_home(home: Path) -> Iterator[None]:
    old = os.environ.get("KUPGRADE_HOME")
    os.environ["KUPGRADE_HOME"] = str(home)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("KUPGRADE_HOME", None)
        else:
            os.environ["KUPGRADE_HOME"] = old


def create(home: Path, doc: dict[str, Any], name: str = "f") -> None:
    path = home / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    with kupgrade_home(home):
        create_fleet(name, read_fleet(doc, str(path)))


def rehearse(
    home: Path, settings: Settings, name: str = "f", steps: list[dict[str, Any]] | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(report, the fleet's event log) of one rehearsal run to its end."""
    with (
        kupgrade_home(home),
        opened_fleet(name) as (root, store, info, members),
        locked(root, list(members)),
    ):
        rehearsal = Rehearsal(store, members, info)
        rehearsal.begin(settings, steps)
        rehearsal.run()
        return fleet_report(rehearsal, name), store.events()


def states(events: list[dict[str, Any]]) -> list[tuple[float, dict[str, dict[str, str]]]]:
    """Every recorded state: the first (`Version` events), then one after each group of
    changes the monitor recorded together (one cluster, one moment)."""
    current: dict[str, dict[str, str]] = {}
    out: list[tuple[float, dict[str, dict[str, str]]]] = []
    group: tuple[float, str] | None = None
    for e in events:
        if e["reason"] not in ("Version", "VersionChanged"):
            continue
        cluster, component = e["object"].split("/", 1)
        value = e["message"] if e["reason"] == "Version" else e["message"].split(" -> ")[1]
        key = (e["at"], cluster) if e["reason"] == "VersionChanged" else (e["at"], "")
        if group is not None and key != group:
            out.append((group[0], {c: dict(s) for c, s in current.items()}))
        group = key
        cluster_state = current.setdefault(cluster, {})
        if value == "absent":
            cluster_state.pop(component, None)
        else:
            cluster_state[component] = value
    if group is not None:
        out.append((group[0], {c: dict(s) for c, s in current.items()}))
    return out


def gdc_broken(fleet_doc: dict[str, Any], state: dict[str, dict[str, str]]) -> list[str]:
    """Rules broken by any pairing of the versions running (each cluster's control plane
    against its manager's and its pools')."""
    clusters = fleet_doc["clusters"]
    broken = []
    running = {name: running_versions(state[name]) for name in clusters}
    for name, body in clusters.items():
        planes, pools = running[name]
        manager = body.get("managed_by")
        bosses = running[manager][0] if manager else {None}
        for plane in planes:
            for boss in bosses:
                for pool, versions in pools.items() or [("", {None})]:
                    for pv in versions:
                        doc = {
                            "clusters": {
                                name: {**body, "version": plane, "pools": {pool: pv} if pv else {}}
                            }
                        }
                        if manager:
                            doc["clusters"][manager] = {
                                **clusters[manager],
                                "version": boss,
                                "pools": {},
                            }
                        fleet = parse_fleet({**fleet_doc, **doc}, "state")
                        broken += [v.id for v in check_fleet(fleet) if v.id not in WARNINGS]
    return broken


def control_planes(state: dict[str, dict[str, str]]) -> set[str]:
    """Every version a control plane of the fleet runs in `state`."""
    return {v for cluster in state.values() for v in running_versions(cluster)[0]}


def kube_broken(state: dict[str, str], policy: str) -> list[str]:
    inv: dict[str, list[Instance]] = {}
    kubelets: dict[str, str] = {}
    proxies: dict[str, str] = {}
    for key, version in state.items():
        component, node = key.split("/", 1)
        if component == "kubelet":
            kubelets[node] = version
        elif component == "kube-proxy":
            proxies[node] = version
        else:
            inv.setdefault(component, []).append(Instance(node, version))
    nodes = [
        InventoryNode(n, kubelets.get(n), proxies.get(n))
        for n in sorted(kubelets.keys() | proxies.keys())
    ]
    inventory = Inventory(
        apiservers=inv.get("kube-apiserver", []),
        kube_controller_manager=inv.get("kube-controller-manager", []),
        kube_scheduler=inv.get("kube-scheduler", []),
        cloud_controller_manager=inv.get("cloud-controller-manager", []),
        nodes=nodes,
    )
    return [v.id for v in check(inventory, policy)]


def started(home: Path, *args: str) -> subprocess.Popen[bytes]:
    """`kupgrade ARGS` in its own process group (so a test can SIGKILL it whole)."""
    return subprocess.Popen(
        [sys.executable, "-m", "kupgrade", *args],
        env={**os.environ, "KUPGRADE_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def event_logs(home: Path, names: list[str]) -> dict[str, list[tuple[float, str, str, str]]]:
    """The event log of fleet `f` and of each member named, as (at, object, reason, message)."""
    paths = {"fleet": home / "fleets" / "f" / "fleet.db"}
    paths |= {n: home / "clusters" / n / "cluster.db" for n in names}
    out = {}
    for name, path in paths.items():
        store = Store(path)
        try:
            out[name] = [(e["at"], e["object"], e["reason"], e["message"]) for e in store.events()]
        finally:
            store.close()
    return out
