"""`kupgrade upgrade status`: an update's progress as `oc adm upgrade status` prints it,
on a simulated cluster or through a kubeconfig (cluster/upgrade_status.py assesses)."""

from __future__ import annotations

import sys
import time
from enum import StrEnum

from kupgrade.cli.output import Format, print_json
from kupgrade.cluster.backend import Backend
from kupgrade.cluster.upgrade_status import Objects, as_data, assess, render
from kupgrade.errors import InputError

MCO_NAMESPACE = "openshift-machine-config-operator"


class Details(StrEnum):
    none = "none"
    nodes = "nodes"
    operators = "operators"
    health = "health"
    all = "all"


def read_objects(api: Backend) -> Objects:
    """What oc reads, with its refusals when the cluster is not OpenShift 4."""
    cv = api.get("ClusterVersion", "version")
    if cv is None:
        raise InputError(
            "no cluster version information available - you must be connected to an "
            "OpenShift version 4 server to fetch the current version",
            hint="a distributed-cloud cluster shows its upgrade with `kupgrade upgrade`",
        )
    operators = api.list("ClusterOperator")
    if not operators:
        raise InputError(
            "no cluster operator information available - you must be connected to an "
            "OpenShift version 4 server"
        )
    if not any(
        c.get("type") == "Progressing" for c in cv.get("status", {}).get("conditions") or []
    ):
        raise InputError("no current Progressing info",
                         hint="see `kupgrade get clusterversion -o yaml` for more details")  # fmt: skip
    mco = api.get("Deployment", "machine-config-operator", MCO_NAMESPACE) or {}
    containers = mco.get("spec", {}).get("template", {}).get("spec", {}).get("containers") or []
    image = next(
        (c.get("image", "") for c in containers if c.get("name") == "machine-config-operator"), ""
    )
    return Objects(cv, operators, api.list("MachineConfigPool"), api.list("Node"),
                   api.list("MachineConfig"), str(image))  # fmt: skip


def show_status(api: Backend, details: Details, output: Format) -> None:
    now = api.now() or time.time()
    status = assess(read_objects(api), now)
    if output.data:
        print_json(as_data(status))
        return
    wanted: set[str] = (
        {"nodes", "operators", "health"} if details is Details.all else {details.value}
    )
    sys.stdout.write(render(status, wanted))
