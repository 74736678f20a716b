"""`kupgrade cluster import` and `cluster calibration`: the user's own cluster as a twin."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kupgrade.cli.output import Format, OutputOpt, print_json, stdout, user_errors
from kupgrade.errors import InputError
from kupgrade.sim.homes import CLUSTER_NAME, IMPORT_META, home, opened
from kupgrade.twin.importer import Source, import_twin

FromOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--from",
        help="A dump to read: a must-gather directory or .tar.gz, an Insights archive, "
        "`kubectl get -o yaml|json` files, or a directory of manifests (repeatable).",
    ),
]
KubeconfigOpt = Annotated[
    Path | None,
    typer.Option("--kubeconfig", help="Read a live cluster through this kubeconfig (read-only)."),
]
ContextOpt = Annotated[str | None, typer.Option("--context", help="The kubeconfig context.")]
AnonymizeOpt = Annotated[
    bool,
    typer.Option(
        "--anonymize",
        help="Replace node, namespace, workload and pod names and label values by stable "
        "hashes, so the twin can be shared.",
    ),
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random seed of the twin's rehearsals.")]
UpstreamOpt = Annotated[
    str | None,
    typer.Option(
        "--upstream", help="The update service the twin asks (default: the cluster's own)."
    ),
]


@user_errors
def import_command(
    name: Annotated[str, typer.Argument(help="The twin's name.")],
    from_: FromOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    anonymize: AnonymizeOpt = False,
    seed: SeedOpt = 1,
    upstream: UpstreamOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Import a live cluster or a dump as a simulated cluster (a twin) to rehearse on.

    A live cluster is only read: lists and gets, never a watch or a write. What the
    cluster lacks for a rehearsal is said one line each and filled with defaults; what
    it holds that kupgrade does not model is counted.

    **Examples**

    ```
    kupgrade cluster import prod --kubeconfig ~/.kube/config --context prod
    kupgrade cluster import case-0142 --from must-gather.local.5049/
    kupgrade cluster import case-0143 --from must-gather.tar.gz --anonymize -o json
    kupgrade cluster import lab --from captured/prod-cv.yaml --from captured/prod-node.yaml \\
        --from captured/prod-mcp.yaml
    kupgrade upgrade --cluster prod --to 4.14.27 --preflight --window 4h
    ```
    """
    if not CLUSTER_NAME.fullmatch(name):
        raise InputError(
            f"invalid cluster name {name!r}", field="NAME", hint="use letters, digits and dashes"
        )
    if bool(from_) == (kubeconfig is not None or context is not None):
        raise InputError(
            "give either --from PATH or --kubeconfig FILE",
            field="--from",
            hint="a dump is read with --from, a live cluster with --kubeconfig",
        )
    source = Source(tuple(from_ or ()), kubeconfig, context)
    made = import_twin(home(), name, source, seed=seed, anonymize=anonymize, upstream=upstream)
    if output.data:
        print_json(made.to_json())
        return
    summary = made.twin.to_json()
    pools = ", ".join(f"{p} {n}" for p, n in summary["pools"].items())
    stdout.print(
        f"imported {name}: {summary['platform']} {summary['version']}, {summary['nodes']} nodes "
        f"({pools}), {summary['workloads']} workloads, {summary['pods']} pods",
        highlight=False,
    )
    for note in summary["notes"]:
        stdout.print(f"  note: {note}", highlight=False)
    for kind, count in summary["notModelled"].items():
        stdout.print(f"  not modelled: {count} {kind}", highlight=False)


@user_errors
def calibration_command(
    name: Annotated[str | None, typer.Argument(help="The twin's name.")] = None,
    output: OutputOpt = Format.text,
) -> None:
    """The timings a twin rehearses with: each measured on the cluster's own history
    (and from what) or the profile's default.

    **Examples**

    ```
    kupgrade cluster calibration prod
    kupgrade cluster calibration prod -o json
    ```
    """
    with opened(name) as (root, store, _):
        record = store.meta(IMPORT_META)
    if not isinstance(record, dict):
        raise InputError(
            f"cluster {root.name} was not imported, so it has no history to calibrate on",
            field="NAME",
            hint="import one with `kupgrade cluster import NAME --from DUMP`",
        )
    figures = record.get("calibration") or []
    if output.data:
        print_json(figures)
        return
    width = max((len(f["name"]) for f in figures), default=10)
    stdout.print(f"{'FIGURE':<{width}}  {'SECONDS':>19}  SOURCE", highlight=False)
    for f in figures:
        low, high = f["seconds"]
        span = f"{low:.0f}" if low == high else f"{low:.0f}-{high:.0f}"
        said = f["source"] if f["measured"] else f"default: {f['source']}"
        stdout.print(f"{f['name']:<{width}}  {span:>19}  {said}", highlight=False)
