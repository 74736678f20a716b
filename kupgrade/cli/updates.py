"""`kupgrade updates`: which updates are recommended for this cluster, and why not the others."""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import Annotated

import typer

from kupgrade.cli.backends import (
    CaOpt,
    MetricsOpt,
    PrometheusOpt,
    TimeOpt,
    TokenOpt,
    promql_condition,
)
from kupgrade.cli.captured import FromOpt, NowOpt, captured, refuse_with_kubeconfig
from kupgrade.cli.live import ContextOpt, KubeconfigOpt, backend
from kupgrade.cli.output import Format, OutputOpt, print_json, stderr, user_errors
from kupgrade.cluster.backend import Backend
from kupgrade.cluster.clusterversion import architectures
from kupgrade.cluster.upgrade_text import render_upgrade
from kupgrade.errors import InputError
from kupgrade.graph.client import ClusterView, fetch
from kupgrade.risks.recommend import CVO_HEAD, SEED
from kupgrade.risks.rules import Registry
from kupgrade.risks.updates import cluster_version, evaluate

UpstreamOpt = Annotated[
    str, typer.Option("--upstream", help="Update service graph URL (Cincinnati API).")
]
ChannelOpt = Annotated[
    str, typer.Option("--channel", help="The cluster's channel, e.g. stable-4.14.")
]
ArchOpt = Annotated[str, typer.Option("--arch", help="The cluster's architecture.")]


WORDING = {"documented": SEED, "current": CVO_HEAD}
# The cluster-version operator's default when spec.upstream is empty.
DEFAULT_UPSTREAM = "https://api.openshift.com/api/upgrades_info/v1/graph"


def cluster_view_of(api: Backend) -> tuple[str, str, str, str, str, str]:
    """(upstream, channel, version, desired architecture, cluster ID, current
    architecture) from the ClusterVersion."""
    cv = api.get("ClusterVersion", "version")
    if cv is None:
        raise InputError(
            "the cluster has no ClusterVersion (it is not OpenShift)", field="--kubeconfig"
        )
    spec, desired = cv.get("spec") or {}, (cv.get("status") or {}).get("desired") or {}
    wanted, current = architectures(cv)
    return (
        str(spec.get("upstream") or DEFAULT_UPSTREAM),
        str(spec.get("channel") or ""),
        str(desired.get("version") or ""),
        wanted,
        str(spec.get("clusterID") or ""),
        current,
    )


@user_errors
def updates_command(
    upstream: Annotated[
        str | None,
        typer.Option("--upstream", help="Update service graph URL (Cincinnati API)."),
    ] = None,
    channel: Annotated[
        str | None, typer.Option("--channel", help="The cluster's channel, e.g. stable-4.14.")
    ] = None,
    version: Annotated[
        str | None, typer.Option("--version", help="The cluster's current version.")
    ] = None,
    arch: ArchOpt = "amd64",
    current_arch: Annotated[
        str | None,
        typer.Option(
            "--current-arch",
            help="The architecture the cluster runs now (default: --arch); --arch Multi over "
            "a single architecture asks for the current version as a multi-arch payload.",
        ),
    ] = None,
    cluster_id: Annotated[
        str | None, typer.Option("--id", help="Cluster ID (UUID) sent upstream; default: random.")
    ] = None,
    metrics: MetricsOpt = None,
    at: TimeOpt = None,
    prometheus: PrometheusOpt = None,
    token_file: TokenOpt = None,
    ca_file: CaOpt = None,
    include_not_recommended: Annotated[
        bool,
        typer.Option(
            "--include-not-recommended", help="Also list updates with known issues, and why."
        ),
    ] = False,
    hosted: Annotated[
        bool,
        typer.Option(
            "--hosted",
            help="A HyperShift hosted cluster whose metrics carry its --id as label _id: "
            'every _id="" in a risk\'s query asks for that id, as the version controller does.',
        ),
    ] = False,
    wording: Annotated[
        str,
        typer.Option(
            "--wording",
            help="How a risk that could not be evaluated reads: documented (default) or "
            "current (as today's cluster-version operator words it).",
        ),
    ] = "documented",
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    from_: FromOpt = None,
    now: NowOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Show the updates of this cluster's channel as `oc adm upgrade` would.

    With --kubeconfig (or --from, a dump) the upstream, channel, version, architecture
    and cluster ID are read from the cluster's ClusterVersion (flags given win), as the
    cluster-version operator reads them.

    Risks on conditional updates are evaluated against a metrics snapshot (--metrics) or
    a live Prometheus/Thanos (--prometheus), each query once. Exit 1 when updates could
    not be retrieved (the RetrievedUpdates reason says why).

    **Examples**

    ```
    kupgrade updates --upstream http://127.0.0.1:8080/api/upgrades_info/graph \\
        --channel stable-4.14 --version 4.13.40 --metrics cluster.om --include-not-recommended
    kupgrade updates --upstream https://api.openshift.com/api/upgrades_info/v1/graph \\
        --channel stable-4.14 --version 4.14.10 --prometheus https://thanos:9091 -o json
    kupgrade updates --kubeconfig ~/.kube/config --metrics cluster.om
    kupgrade updates --from captured/ --upstream http://127.0.0.1:8080/api/upgrades_info/graph
    ```
    """
    refuse_with_kubeconfig(from_, kubeconfig is not None)
    if kubeconfig is not None or from_:
        found = cluster_view_of(captured(from_, now) if from_ else backend(kubeconfig, context))
        upstream, channel, version = upstream or found[0], channel or found[1], version or found[2]
        arch, cluster_id = found[3] if arch == "amd64" else arch, cluster_id or found[4]
        current_arch = current_arch or found[5]
    if not (upstream and channel and version):
        raise InputError(
            "needs --upstream, --channel and --version, or a cluster's --kubeconfig",
            field="--channel",
        )
    if hosted and not cluster_id:
        raise InputError("needs the cluster's --id (its _id label)", field="--hosted")
    condition = promql_condition(metrics, at, prometheus, token_file, ca_file, required=False)
    if condition is not None and hosted:
        condition.hosted_id = cluster_id
    view = ClusterView(upstream, channel, version, arch, current_arch=current_arch or arch)
    if cluster_id:
        view = dataclasses.replace(view, cluster_id=cluster_id)
    if wording not in WORDING:
        raise InputError("must be documented or current", field="--wording")
    result = evaluate(
        view, fetch(view, time.time), Registry.standard(condition), time.time, WORDING[wording]
    )
    for note in result.notes:
        stderr.print(f"[yellow]note:[/] {note}", highlight=False)
    if output.data:
        print_json(result.status())
    else:
        out, err = render_upgrade(
            cluster_version(view, result, time.time()), include_not_recommended
        )
        sys.stdout.write("".join(line + "\n" for line in out))
        sys.stderr.write("".join(line + "\n" for line in err))
    if result.retrieved.get("status") != "True":
        raise typer.Exit(1)
