"""`kupgrade olm subscribe` and `olm approve`: operators installed on a simulated cluster
through OLM's objects, carried out by `kupgrade controller run` (SPEC F)."""

from __future__ import annotations

from typing import Annotated

import typer

from kupgrade.cli.olm import app, parse_source
from kupgrade.cli.output import ClusterOpt, Format, OutputOpt, print_json, stdout, user_errors
from kupgrade.errors import InputError
from kupgrade.sim.cluster import SimCluster
from kupgrade.sim.homes import opened
from kupgrade.sim.openshift.olm import add_source, approve, package_of, subscribe
from kupgrade.sim.platforms import platform_of


@app.command("subscribe")
@user_errors
def subscribe_command(
    source: Annotated[
        str,
        typer.Option(
            "--source",
            help="NAME=CATALOG|IMAGE[,namespace=NS][,priority=N]: the "
            "CatalogSource to create (a file-based catalog or a catalog image).",
        ),
    ],
    cluster: ClusterOpt = None,
    package: Annotated[
        str, typer.Option("--package", help="The package (default: the catalog's only one).")
    ] = "",
    channel: Annotated[
        str, typer.Option("--channel", help="The channel (default: the package's default).")
    ] = "",
    approval: Annotated[
        str, typer.Option("--approval", help="Automatic or Manual install plans.")
    ] = "Automatic",
    starting_csv: Annotated[
        str, typer.Option("--starting-csv", help="The CSV to install first.")
    ] = "",
    namespace: Annotated[
        str, typer.Option("--namespace", help="The subscription's namespace.")
    ] = "operators",
    output: OutputOpt = Format.text,
) -> None:
    """Subscribe a simulated cluster to an operator: a CatalogSource and a Subscription
    that `kupgrade controller run` resolves, installs and keeps upgraded, one CSV at a time.

    **Examples**

    ```
    kupgrade olm subscribe --cluster demo --source community=./catalog --channel alpha
    kupgrade olm subscribe --cluster demo --source community=./catalog --package etcd \\
      --approval Manual --starting-csv etcdoperator.v0.9.0 --namespace manual-ops -o json
    ```
    """
    name, path, source_namespace, priority = parse_source(source)
    with opened(cluster) as (root, store, spec):
        platform = platform_of(spec)
        if "operators" not in platform.verbs:
            raise InputError(
                f"cluster {root.name} is a {platform.title} cluster, on which the "
                "simulator runs no OLM",
                hint="subscribe an OpenShift cluster",
            )
        sim = SimCluster(store)
        chosen = package_of(str(path), package)
        add_source(sim, name, str(path), namespace=source_namespace, priority=priority)
        sub = subscribe(
            sim,
            package=chosen,
            source=name,
            source_namespace=source_namespace,
            namespace=namespace,
            channel=channel,
            approval=approval,
            starting_csv=starting_csv,
        )
        store.commit()
    if output.data:
        print_json(sub)
        return
    stdout.print(
        f"subscription {namespace}/{chosen} created; run `kupgrade controller run` to install it",
        highlight=False,
        markup=False,
    )


@app.command("approve")
@user_errors
def approve_command(
    plan: Annotated[str, typer.Argument(help="The install plan (install-xxxxx).")],
    cluster: ClusterOpt = None,
    namespace: Annotated[
        str, typer.Option("--namespace", help="Its namespace (default: any).")
    ] = "",
    output: OutputOpt = Format.text,
) -> None:
    """Approve a Manual install plan, as `oc patch installplan --type merge -p
    '{"spec":{"approved":true}}'` does; `kupgrade controller run` then installs it.

    **Examples**

    ```
    kupgrade get installplans --cluster demo -A
    kupgrade olm approve install-zw892 --cluster demo --namespace manual-ops
    ```
    """
    with opened(cluster) as (_, store, _spec):
        approved = approve(SimCluster(store), plan, namespace)
        store.commit()
    if output.data:
        print_json(approved)
        return
    stdout.print(
        f"install plan {approved['metadata']['namespace']}/{plan} approved",
        highlight=False,
        markup=False,
    )
