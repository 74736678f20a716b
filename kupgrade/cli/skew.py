"""`kupgrade skew check`: which version-skew rules an inventory breaks, and how to fix it."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from kupgrade.cli.live import ContextOpt, KubeconfigOpt, backend
from kupgrade.cli.output import (
    Format,
    OutputOpt,
    command_group,
    print_json,
    say,
    stderr,
    stdout,
    user_errors,
)
from kupgrade.errors import InputError
from kupgrade.skew.fleet import Fleet, is_fleet_document, listed_fleet, load_history
from kupgrade.skew.gdc import WARNINGS, check_fleet, judge_request, parse_request
from kupgrade.skew.inventory import Inventory, parse_inventory, read_yaml, with_apiservers
from kupgrade.skew.k8s import check, resolve_policy
from kupgrade.skew.verdict import Verdict, Violation

# What only one command or one case needs (the rules' texts, the file formats, the step
# judge, a live cluster's reader, the findings table) is imported where it is used:
# `skew check` runs in loops and scripts, and they cost its start ~20 ms
# (bench/cli_start.py).

app = command_group("Version-skew rules of Kubernetes, kubeadm and distributed cloud.")

PolicyOpt = Annotated[
    str,
    typer.Option(
        "--policy",
        help="Rule set: k8s-n2 (two minors, the documented skew), k8s-n3 (upstream since 1.28), "
        "auto (n2 while the newest apiserver is 1.27 or older; gdc for a fleet), "
        "kubeadm-X.Y[.Z] (auto plus the policies of that kubeadm for control-plane steps), "
        "or gdc (distributed-cloud fleets: clusters, roles, node pools).",
    ),
]
ReleasesOpt = Annotated[
    Path | None,
    typer.Option(
        "--releases",
        help="gdc: YAML with the release history (release_order oldest first, or releases "
        "[{version, date}]) and optionally release_line; it takes precedence over a "
        "history in the file itself.",
    ),
]


BmctlOpt = Annotated[
    str | None,
    typer.Option("--bmctl", help="gdc: the bmctl version used (default: the target's)."),
]


def load(path: Path, policy: str, releases: Path | None) -> Fleet | Inventory:
    """A fleet (policy gdc) or a Kubernetes inventory, whichever the file holds."""
    data = read_yaml(path, "inventory")
    if is_fleet_document(data):
        if policy not in ("gdc", "auto"):
            raise InputError(
                f"{path} lists distributed-cloud clusters; policy {policy!r} is for Kubernetes "
                "inventories",
                field="--policy",
                hint="use --policy gdc",
            )
        return listed_fleet(data, str(path), load_history(releases) if releases else None)
    if policy == "gdc":
        raise InputError(
            "policy gdc needs a fleet inventory (clusters: {NAME: {version, role, ...}})",
            file=str(path),
            field="--policy",
        )
    if releases is not None:
        raise InputError("--releases applies to distributed-cloud fleets only", field="--releases")
    return with_apiservers(parse_inventory(data, str(path)), str(path))


def print_findings(found: list[Violation]) -> None:
    from rich.table import Table  # noqa: PLC0415 - see the imports above

    table = Table("RULE", "OBJECT", "PROBLEM", "FIX", box=None)
    for v in found:
        table.add_row(v.id, v.object, v.message, v.fix)
    stdout.print(table)
    explain_hint(found)


def explain_hint(found: list[Violation]) -> None:
    if found:
        stderr.print(f"(`kupgrade explain {found[0].id}` says what a rule means)", highlight=False)


@user_errors
def explain_command(
    rule: Annotated[
        str | None,
        typer.Argument(help="A rule id as findings print it (G3.users-first), or its prefix (H3)."),
    ] = None,
    output: OutputOpt = Format.text,
) -> None:
    """What a rule id in a skew finding or refusal means, and where the rule comes from;
    without an id, every rule.

    **Examples**

    ```
    kupgrade explain G3.users-first
    kupgrade explain H6
    kupgrade explain -o json
    ```
    """
    from kupgrade.skew.explain import RULES, lookup  # noqa: PLC0415 - see the imports above

    found = list(RULES.values()) if rule is None else lookup(rule)
    if not found:
        raise InputError(
            f"no rule {rule!r}", field="RULE", hint="`kupgrade explain` lists every rule id"
        )
    if output.data:
        print_json([asdict(r) for r in found])
        return
    for r in found:
        stdout.print(
            f"{r.id} ({r.kind}): {r.rule}\n  source: {r.source}", highlight=False, markup=False
        )


@app.command("reference")
@user_errors
def reference_command(
    kind: Annotated[
        str, typer.Argument(help="inventory (Kubernetes) or fleet (distributed cloud).")
    ],
    output: OutputOpt = Format.text,
) -> None:
    """The file formats of `skew check`, `skew check-step` and `plan`: a commented example,
    or with -o json|yaml the JSON Schema their reader checks files against.

    **Examples**

    ```
    kupgrade skew reference inventory > cluster.yaml
    kupgrade skew reference fleet > fleet.yaml
    kupgrade skew reference fleet -o json
    ```
    """
    from kupgrade.skew.reference import KINDS, example, schema  # noqa: PLC0415 - see the imports above

    if kind not in KINDS:
        raise InputError(f"no reference for {kind!r}", field="KIND", hint="inventory or fleet")
    if output.data:
        print_json(schema(kind))
    else:
        sys.stdout.write(example(kind))


@app.command("check")
@user_errors
def check_command(
    inventory: Annotated[
        Path | None,
        typer.Argument(help="Inventory YAML (apiservers, nodes, ...) or fleet (clusters)."),
    ] = None,
    policy: PolicyOpt = "auto",
    releases: ReleasesOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Format.text,
) -> None:
    """Every skew violation with its rule id, the objects involved and the fix.

    Exit 0 when there is none (warnings allowed), 1 when there are violations.

    **Examples**

    ```
    kupgrade skew check cluster.yaml
    kupgrade skew check cluster.yaml --policy k8s-n2 -o json
    kupgrade skew check fleet.yaml --policy gdc --releases release-history.yaml
    kupgrade skew check --kubeconfig ~/.kube/config   # the cluster and this machine's kubectls
    ```
    """
    if (inventory is None) == (kubeconfig is None):
        raise InputError(
            "give an inventory file or --kubeconfig, one of them",
            field="INVENTORY",
            hint="`kupgrade skew reference inventory` shows the file format",
        )
    loaded: Fleet | Inventory
    if kubeconfig is not None:
        from kupgrade.cluster.live import inventory_of, local_kubectls  # noqa: PLC0415 - see above

        loaded = with_apiservers(
            inventory_of(backend(kubeconfig, context), local_kubectls()), "the cluster"
        )
    else:
        loaded = load(inventory, policy, releases)  # type: ignore[arg-type]
    if isinstance(loaded, Fleet):
        rules, everything = "gdc", check_fleet(loaded)
    else:
        rules, everything = resolve_policy(policy, loaded), check(loaded, policy)
    found = [v for v in everything if v.id not in WARNINGS]
    warned = [v for v in everything if v.id in WARNINGS]
    if output.data:
        print_json(
            {
                "policy": rules,
                "violations": [v.to_json() for v in found],
                "warnings": [v.to_json() for v in warned],
            }
        )
    elif not everything:
        say(f"no skew violations ({rules})")  # plain: no console made for one line
    else:
        if not found:
            stdout.print(f"no skew violations ({rules}); warnings:", highlight=False)
        print_findings(everything)
    if found:
        raise typer.Exit(1)


@app.command("check-step")
@user_errors
def check_step_command(
    inventory: Annotated[
        Path, typer.Argument(help="Inventory YAML (apiservers, nodes, ...) or fleet (clusters).")
    ],
    step: Annotated[
        str,
        typer.Option(
            "--step",
            help="COMPONENT[/NAME[,NAME]] -> VERSION; node/NAME is its kubelet; no names: all. "
            "Fleets: cluster/NAME -> VERSION or nodepool/CLUSTER/POOL -> VERSION.",
        ),
    ],
    policy: PolicyOpt = "auto",
    drained: Annotated[
        bool, typer.Option("--drained", help="The step's nodes were drained first.")
    ] = False,
    available: Annotated[
        str | None,
        typer.Option(
            "--available", help="Released versions, comma-separated (the latest patch is picked)."
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="kubeadm policies: skippable findings only warn.")
    ] = False,
    bmctl: BmctlOpt = None,
    leave_pools: Annotated[
        str | None,
        typer.Option("--leave-pools", help="gdc: node pools a cluster step leaves behind."),
    ] = None,
    releases: ReleasesOpt = None,
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
    kupgrade skew check-step fleet.yaml --step 'cluster/admin -> 1.29.100-gke.251'
    kupgrade skew check-step fleet.yaml --step 'cluster/c -> 1.28.100-gke.146' --leave-pools p1
    kupgrade skew check-step fleet.yaml --step 'nodepool/c/p1 -> 1.16.6' --releases order.yaml
    ```
    """
    from kupgrade.skew.step_rules import judge, parse_step  # noqa: PLC0415 - see the imports above

    loaded = load(inventory, policy, releases)
    verdict: Verdict
    if isinstance(loaded, Fleet):
        left = [p.strip() for p in leave_pools.split(",") if p.strip()] if leave_pools else []
        request = parse_request(step, loaded, bmctl=bmctl, leave_pools=left)
        verdict = judge_request(loaded, request)
    else:
        if bmctl or leave_pools:
            raise InputError("--bmctl and --leave-pools apply to fleets", field="--bmctl")
        versions = [v.strip() for v in available.split(",") if v.strip()] if available else []
        step_ = parse_step(step, loaded, drained=drained, available=versions)
        verdict = judge(loaded, step_, policy, force=force)
    if output.data:
        print_json(verdict.to_json())
    else:
        stdout.print(f"{verdict.verdict}: {step}", highlight=False, markup=False)
        for finding in verdict.findings:
            stdout.print(
                f"  {finding.id}  {finding.object}: {finding.message}\n      fix: {finding.fix}",
                highlight=False,
                markup=False,
            )
        explain_hint(verdict.findings)
    if verdict.rules:
        raise typer.Exit(1)
