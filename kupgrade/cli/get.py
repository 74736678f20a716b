"""`kupgrade get`: objects of a simulated cluster (or of the cluster a kubeconfig reaches)
as `oc get` prints them. A module of its own, so that `get` in a script's loop imports
the store and the table columns, not the simulator and the controllers."""

from __future__ import annotations

import sys
import time
from typing import Annotated, Any

import typer

from kupgrade.cli.captured import FromOpt, NowOpt, captured, refuse_with_kubeconfig
from kupgrade.cli.live import ContextOpt, KubeconfigOpt, backend
from kupgrade.cli.output import ClusterOpt, Format, print_json, user_errors
from kupgrade.cluster.gdc import in_bootstrap
from kupgrade.cluster.workloads import OWNERS, PodCounts, workload_status
from kupgrade.errors import InputError
from kupgrade.sim.budgets import BudgetLedger
from kupgrade.sim.homes import opened
from kupgrade.sim.store import Store
from kupgrade.views.tables import KINDS, oc_table


@user_errors
def get_command(
    what: Annotated[
        str,
        typer.Argument(
            help="clusterversion, clusteroperators (co), machineconfigpools (mcp), nodes "
            "(no); distributed cloud: clusters, nodepools, preflightchecks, healthchecks; "
            "OLM: catalogsources, subscriptions (sub), installplans (ip), csv; workloads: "
            "pods (po), poddisruptionbudgets (pdb), deployments (deploy), replicasets (rs), "
            "daemonsets (ds), statefulsets (sts), events (ev). "
            "Singular, plural, short or group-qualified, as oc accepts them."
        ),
    ],
    cluster: ClusterOpt = None,
    bootstrap: Annotated[
        bool,
        typer.Option(
            "--bootstrap",
            help="gdc: the bootstrap cluster's copies, which show the progress while it owns "
            "the cluster's resources.",
        ),
    ] = False,
    namespace: Annotated[
        str, typer.Option("-n", "--namespace", help="Only objects in this namespace.")
    ] = "",
    all_namespaces: Annotated[
        bool, typer.Option("-A", "--all-namespaces", help="Every namespace (the default).")
    ] = False,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    from_: FromOpt = None,
    now: NowOpt = None,
    output: Annotated[
        Format, typer.Option("-o", "--output", help="text (oc get columns), json or yaml.")
    ] = Format.text,
) -> None:
    """Print objects as `oc get` does, or their full YAML/JSON.

    **Examples**

    ```
    kupgrade get clusterversion --cluster demo
    kupgrade get mcp --cluster demo
    kupgrade get nodes --cluster demo -o yaml
    kupgrade get clusters --cluster user1
    kupgrade get nodepools --cluster admin --bootstrap -o json
    kupgrade get clusterversion --kubeconfig ~/.kube/config --context prod
    kupgrade get subscriptions --cluster demo -A -o json
    kupgrade get csv --cluster demo -n operators
    kupgrade get pods --cluster demo -n shop
    kupgrade get deploy --cluster demo -A
    kupgrade get events --cluster demo
    kupgrade get pods -A --from must-gather.local.5049/ --now 2024-05-04T10:00:00Z
    ```
    """
    if namespace and all_namespaces:
        raise InputError("give -n or -A, not both", field="--namespace")
    kind = KINDS.get(what.lower())
    if kind is None:
        raise InputError(
            f"unknown resource type {what!r}",
            field="WHAT",
            hint="one of clusterversion, clusteroperators (co), machineconfigpools (mcp), "
            "nodes (no), clusters, nodepools, preflightchecks, healthchecks, catalogsources, "
            "subscriptions, installplans, csv, pods, pdb, deploy, rs, ds, sts, events",
        )
    refuse_with_kubeconfig(from_, kubeconfig is not None)
    if from_:
        dump = captured(from_, now)
        objs, at = dump.list(kind), dump.now()
    elif kubeconfig is not None:
        objs, at = backend(kubeconfig, context).list(kind), time.time()
    else:
        with opened(cluster) as (_, store, _spec):
            objs = _local(kind, store, bootstrap)
            at = float(store.meta("now", 0))
    if namespace:
        objs = [o for o in objs if o["metadata"].get("namespace", "") == namespace]
    if output.data:
        print_json({"apiVersion": "v1", "kind": "List", "items": objs})
        return
    sys.stdout.write(oc_table(kind, objs, at))


def _local(kind: str, store: Store, bootstrap: bool) -> list[dict[str, Any]]:
    """A simulated cluster's objects of `kind` as its API serves them: events from the
    event log, a workload with the status its pods give it."""
    if kind == "Event":
        # Imported here: the API's modules are not what `get nodes` in a loop should load.
        from kupgrade.apiserver.virtual import events_of  # noqa: PLC0415

        return events_of(store)
    objs = [o for o in store.list(kind) if bootstrap == in_bootstrap(o)]
    if kind in OWNERS:
        counts = PodCounts((pod for _, pod in store.scan("Pod")), store.list("ReplicaSet"))
        objs = [{**o, "status": workload_status(o, counts)} for o in objs]
    if kind == "PodDisruptionBudget":  # the disruption controller's status, as served
        budgets = BudgetLedger(store)
        objs = [{**o, "status": {**(o.get("status") or {}), **budgets.status(o)}} for o in objs]
    return objs
