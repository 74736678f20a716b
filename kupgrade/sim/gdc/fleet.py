"""Simulated distributed-cloud clusters read back as the fleet whose skew rules an upgrade
must keep (SPEC G2-G4): each cluster as the fleet format of `kupgrade skew check` writes
it, and every such cluster of the kupgrade home as one fleet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kupgrade.cluster import gdc as g
from kupgrade.errors import InputError
from kupgrade.sim.homes import cluster_names, home, opened
from kupgrade.sim.store import Store
from kupgrade.skew.fleet import Fleet, History, parse_fleet


def fleet_entry(store: Store) -> dict[str, Any]:
    """One cluster as the fleet format of `kupgrade skew check` writes it."""
    cluster = store.list("Cluster")[0]
    notes = cluster["metadata"].get("annotations") or {}
    entry: dict[str, Any] = {
        "version": cluster["status"]["anthosBareMetalVersion"],
        "role": cluster["spec"]["type"],
        "pools": {
            p["metadata"]["name"]: p["status"]["anthosBareMetalVersion"]
            for p in store.list("NodePool")
            if g.pool_role(p) == g.WORKER
            and p["metadata"]["namespace"] == g.namespace_of(cluster["metadata"]["name"])
        },
    }
    if notes.get(g.MANAGED_BY):
        entry["managed_by"] = notes[g.MANAGED_BY]
    kept = {k: v for k, v in notes.items() if k != g.MANAGED_BY}
    if kept:
        entry["annotations"] = kept
    return entry


def sim_fleet(entries: dict[str, dict[str, Any]], history: History | None, where: Path) -> Fleet:
    """The fleet of every simulated distributed-cloud cluster, for the skew rules."""
    try:
        return parse_fleet({"clusters": entries}, str(where), history)
    except InputError as exc:
        raise InputError(
            f"the simulated clusters do not form a valid fleet: {exc.message}",
            file=str(where),
            hint="create a user cluster's management cluster first "
            "(`kupgrade cluster create ADMIN --platform gdc --role admin`)",
        ) from None


def gdc_fleet(history: History | None) -> Fleet:
    """Every simulated distributed-cloud cluster of the kupgrade home (a store that holds
    its own Cluster object), as one fleet for the skew rules."""
    entries: dict[str, dict[str, Any]] = {}
    for name in cluster_names():
        with opened(name) as (_, store, _spec):
            if g.own_clusters(store.list("Cluster")):
                entries[name] = fleet_entry(store)
    return sim_fleet(entries, history, home() / "clusters")
