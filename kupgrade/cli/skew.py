"""`kupgrade skew check`: which version-skew rules an inventory breaks, and how to fix it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kupgrade.cli.output import Format, OutputOpt, print_json, stdout, user_errors
from kupgrade.skew.inventory import load_inventory
from kupgrade.skew.k8s import check, resolve_policy

app = typer.Typer(help="Version-skew rules (SPEC G, H).", no_args_is_help=True)

PolicyOpt = Annotated[
    str,
    typer.Option(
        "--policy",
        help="Rule set: k8s-n2 (two minors, the seed's text), k8s-n3 (upstream since 1.28) "
        "or auto (n2 while the newest apiserver is 1.27 or older).",
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
