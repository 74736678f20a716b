"""The machine-config controller's metrics (SPEC E3), as it exports them
(machine-config-operator pkg/controller/common/metrics.go, at 7ff337a4).

`mcc_drain_err{node}` is set to 1 once a node's drain has gone on for more than an hour
(drain_controller.go drainNode) and removed when the drain succeeds, which is what the
MCCDrainError alert fires on; the `mco_*_machine_count{pool}` gauges carry each pool's
counts. Read from the cluster through the Backend, so a rehearsal can be scraped or
diffed like a real cluster's /metrics.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from kupgrade.cluster.backend import Backend
from kupgrade.controllers.nodes.drains import drain_state

# name -> (help text, the MachineConfigPool status field it reports)
POOL_GAUGES = {
    "mco_machine_count": ("total number of machines in a specified pool", "machineCount"),
    "mco_updated_machine_count": (
        "total number of updated machines in specified pool",
        "updatedMachineCount",
    ),
    "mco_degraded_machine_count": (
        "total number of degraded machines in specified pool",
        "degradedMachineCount",
    ),
    "mco_unavailable_machine_count": (
        "total number of unavailable machines in specified pool",
        "unavailableMachineCount",
    ),
}


def drain_errors(api: Backend) -> list[str]:
    """Nodes whose drain has exceeded its timeout and not yet succeeded."""
    return sorted(
        node["metadata"]["name"]
        for node in api.list("Node")
        if (found := drain_state(api, node["metadata"]["name"])) is not None and found.timeout
    )


def samples(api: Backend) -> list[dict[str, Any]]:
    """Every sample: {name, labels, value}, in exposition order."""
    out: list[dict[str, Any]] = [
        {"name": "mcc_drain_err", "labels": {"node": node}, "value": 1.0}
        for node in drain_errors(api)
    ]
    pools = sorted(api.list("MachineConfigPool"), key=lambda p: p["metadata"]["name"])
    for name, (_, field) in POOL_GAUGES.items():
        for pool in pools:
            value = (pool.get("status") or {}).get(field, 0)
            out.append(
                {"name": name, "labels": {"pool": pool["metadata"]["name"]}, "value": float(value)}
            )
    return out


class _Collector(Collector):
    def __init__(self, found: list[dict[str, Any]]) -> None:
        self.found = found

    def collect(self) -> Iterator[Metric]:
        helps = {"mcc_drain_err": "logs failed drain"} | {k: v[0] for k, v in POOL_GAUGES.items()}
        labels = {"mcc_drain_err": ["node"]} | {k: ["pool"] for k in POOL_GAUGES}
        for name, text in helps.items():
            family = GaugeMetricFamily(name, text, labels=labels[name])
            for sample in self.found:
                if sample["name"] == name:
                    family.add_metric(list(sample["labels"].values()), sample["value"])
            yield family


def exposition(api: Backend) -> str:
    """The metrics in Prometheus' text format, as the controller's /metrics serves them."""
    registry = CollectorRegistry()
    registry.register(_Collector(samples(api)))
    return generate_latest(registry).decode()
