"""`kupgrade skew check`: which version-skew rules an inventory breaks, and how to fix it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kupgrade.cli.output import Format, OutputOpt, print_json, stdout, user_errors
from kupgrade.skew.inventory import load_inventory
from kupgrade.skew.k8s import check, resolve_policy
from kupgrade.skew.steps import judge, parse_step

app = typer.Typer(help="Version-skew rules (SPEC G, H).", no_args_is_help=True)

PolicyOpt = Annotated[
    str,
    typer.Option(
        "--policy",
        help="Rule set: k8s-n2 (two minors, the seed's text), k8s-n3 (upstream since 1.28), "
        "auto (n2 while the newest apiserver is 1.27 or older), or kubeadm-X.Y[.Z] (auto plus "
        "the policies of that kubeadm for control-plane steps).",
    ),
]


@app.command("check")
@user_errors
def check_command(
    inventory: Annotated[Path, typer.Argument(help="Inventory YAML (apiservers, nodes, ...).")],
    policy: PolicyOpt = "auto",
    output: OutputOpt = Format.text,
) -> None:
    """Every skew violation with its rule id, the objects involved and the fix.

    Exit 0 when there is none, 1 when there are violations.

    **Examples**

    ```
    kupgrade skew check cluster.yaml
    kupgrade skew check cluster.yaml --policy k8s-n2 -o json
    ```
    """
    inv = load_inventory(inventory)
    found = check(inv, policy)
    if output is Format.json:
        print_json(
            {
                "policy": resolve_policy(policy, inv),
                "violations": [v.to_json() for v in found],
            }
        )
    elif not found:
        stdout.print(f"no skew violations ({resolve_policy(policy, inv)})", highlight=False)
    else:
        table = Table("RULE", "OBJECT", "PROBLEM", "FIX", box=None)
        for v in found:
            table.add_row(v.id, v.object, v.message, v.fix)
        stdout.print(table)
    if found:
        raise typer.Exit(1)


@app.command("check-step")
@user_errors
def check_step_command(
    inventory: Annotated[Path, typer.Argument(help="Inventory YAML (apiservers, nodes, ...).")],
    step: Annotated[
        str,
        typer.Option(
            "--step",
            help="COMPONENT[/NAME[,NAME]] -> VERSION; node/NAME is its kubelet; no names: all.",
        ),
    ],
    policy: PolicyOpt = "auto",
    drained: Annotated[
        bool, typer.Option("--drained", help="The step's nodes were drained first.")
    ] = False,
    available: Annotated[
        str | None,
        typer.Option("--available", help="Released versions, comma-separated (for SPEC H7)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="kubeadm policies: skippable findings only warn.")
    ] = False,
    output: OutputOpt = Format.text,
) -> None:
    """Whether one upgrade step is allowed, refused (which rule, what to do) or warned.

    Exit 0 when allowed or allowed with warnings, 1 when refused.

    **Examples**

    ```
    kupgrade skew check-step cluster.yaml --step 'kube-apiserver/a1 -> 1.30.4'
    kupgrade skew check-step cluster.yaml --step 'node/w1 -> 1.30.4' --drained -o json
    kupgrade skew check-step cluster.yaml --step 'kube-apiserver -> 1.31.2' --policy kubeadm-1.31
    kupgrade skew check-step cluster.yaml --step 'kube-apiserver -> 1.30.0' \\
        --available 1.29.3,1.29.8,1.30.0,1.30.4
    ```
    """
    inv = load_inventory(inventory)
    versions = [v.strip() for v in available.split(",") if v.strip()] if available else []
    verdict = judge(
        inv, parse_step(step, inv, drained=drained, available=versions), policy, force=force
    )
    if output is Format.json:
        print_json(verdict.to_json())
    else:
        stdout.print(f"{verdict.verdict}: {step}", highlight=False, markup=False)
        for finding in verdict.findings:
            stdout.print(
                f"  {finding.id}  {finding.object}: {finding.message}\n      fix: {finding.fix}",
                highlight=False,
                markup=False,
            )
    if verdict.rules:
        raise typer.Exit(1)
