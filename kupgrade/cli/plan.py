"""`kupgrade plan`: the ordered steps that take a fleet or a cluster to a target with every
intermediate state legal (SPEC X1), or the step no plan gets past and why (X4)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kupgrade.cli.live import ContextOpt, KubeconfigOpt, backend
from kupgrade.cli.output import Format, OutputOpt, print_json, stdout, user_errors
from kupgrade.cluster.live import inventory_doc
from kupgrade.errors import InputError
from kupgrade.plan.engines import rollout
from kupgrade.plan.request import PlanRequest, plan_document
from kupgrade.plan.steps import Plan
from kupgrade.skew.fleet import load_history
from kupgrade.skew.inventory import read_yaml


class PlanFormat(enum.StrEnum):
    text = "text"
    json = "json"
    yaml = "yaml"
    mermaid = "mermaid"
    dot = "dot"


def _label(step: dict[str, Any]) -> str:
    left = f" (leaves {', '.join(step['leave_pools'])})" if step.get("leave_pools") else ""
    return f"{step['id']}: {step['object']}<br/>{step['from']} → {step['to']}{left}"


def mermaid(plan: Plan) -> str:
    """A flowchart whose arrows are the `after` lists; unlinked steps may run in parallel."""
    lines = ["flowchart LR"]
    for step in plan.steps:
        lines.append(f'  {step.id}["{_label(step.to_json())}"]')
    for step in plan.steps:
        lines += [f"  {a} --> {step.id}" for a in step.after]
    return "\n".join(lines) + "\n"


def dot(plan: Plan) -> str:
    lines = ["digraph plan {", "  rankdir=LR;", "  node [shape=box];"]
    for step in plan.steps:
        label = _label(step.to_json()).replace("<br/>", "\\n").replace('"', '\\"')
        lines.append(f'  {step.id} [label="{label}"];')
    for step in plan.steps:
        lines += [f"  {a} -> {step.id};" for a in step.after]
    return "\n".join(lines) + "\n}\n"


def _text(plan: Plan) -> None:
    if plan.refused is not None:
        r = plan.refused
        head = f"no plan: {r.object} {r.frm} -> {r.to} is refused" if r.object else "no plan"
        stdout.print(
            f"{head} ({', '.join(r.rules)})\n  {r.message}\n  fix: {r.fix}",
            highlight=False,
            markup=False,
        )
        return
    table = Table("STEP", "OBJECT", "FROM", "TO", "AFTER", "LEAVES POOLS", box=None)
    for s in plan.steps:
        table.add_row(s.id, s.object, s.frm, s.to, ", ".join(s.after), ", ".join(s.leave_pools))
    stdout.print(table)
    stdout.print(
        f"{len(plan.steps)} steps, {plan.pool_rollouts} node-pool rollouts, "
        f"{plan.states_checked} states checked (every order the AFTER column allows)",
        highlight=False,
    )


def _stages_text(doc: dict[str, Any]) -> None:
    table = Table("STAGE", "AFTER", "UPGRADES", "DOWNTIME", box=None)
    for s in doc["stages"]:
        table.add_row(s["id"], ", ".join(s["after"]), s["upgrades"], s["downtime"])
    stdout.print(table)
    fields = " then ".join(" + ".join(group) for group in doc["status_fields_in_order"])
    stdout.print(f"status fields: {fields}", highlight=False, markup=False)
    drain = doc["drain"]
    stdout.print(
        f"drain: {drain['pods_evicted_via']}, budgets honoured: {drain['pdb_honoured']}, "
        f"the upgrade goes on after {drain['gives_up_after_minutes']} minutes",
        highlight=False,
    )


@user_errors
def plan_command(
    inventory: Annotated[
        Path | None,
        typer.Argument(help="A fleet (clusters), a cluster ({cp, pools} or a skew inventory)."),
    ] = None,
    to: Annotated[
        str | None, typer.Option("--to", help="Target version (default: the file's target).")
    ] = None,
    policy: Annotated[
        str | None,
        typer.Option(
            "--policy", help="k8s-n2, k8s-n3, auto or gdc (default: the file's, or auto)."
        ),
    ] = None,
    available: Annotated[
        str | None,
        typer.Option("--available", help="Releases steps may land on, comma-separated."),
    ] = None,
    releases: Annotated[
        Path | None,
        typer.Option("--releases", help="gdc: release history YAML (release_order or releases)."),
    ] = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: Annotated[
        PlanFormat, typer.Option("-o", "--output", help="text, json, yaml, mermaid or dot.")
    ] = PlanFormat.text,
) -> None:
    """Plan an upgrade whose every intermediate state keeps every skew rule.

    Control planes move one minor at a time (newest patch first), user clusters before
    their management cluster when they must, node pools only when skew requires it.
    Exit 0 with a plan, 1 when no plan exists (the refusal names the first blocking step,
    its rules and the fix).

    **Examples**

    ```
    kupgrade plan fleet.yaml --to 1.29.100-gke.251 --available 1.28.500-gke.120
    kupgrade plan cluster.yaml --to 1.32.3 --available 1.30.9,1.31.6,1.32.3 --policy k8s-n3
    kupgrade plan fleet.yaml --to 1.29.100-gke.251 -o mermaid > plan.mmd
    kupgrade plan cluster-shape.yaml --to 1.29.100-gke.251 -o json   # stages
    kupgrade plan --kubeconfig ~/.kube/config --to 1.28.9 --available 1.27.16,1.28.9
    ```
    """
    if (inventory is None) == (kubeconfig is None):
        raise InputError("give a plan input file or --kubeconfig, one of them", field="INVENTORY")
    if kubeconfig is not None:  # the cluster as it runs now (its kubectls are not planned)
        data, where = inventory_doc(backend(kubeconfig, context), []), str(kubeconfig)
    else:
        data, where = read_yaml(inventory, "plan input"), str(inventory)  # type: ignore[arg-type]
    versions = [v.strip() for v in available.split(",") if v.strip()] if available else None
    history = load_history(releases) if releases else None
    result = plan_document(data, where, PlanRequest(to, versions, policy, history))
    if isinstance(result, dict):
        if output in (PlanFormat.json, PlanFormat.yaml):
            print_json(result)
        else:
            _stages_text(result)
        return
    if output in (PlanFormat.json, PlanFormat.yaml):
        print_json(result.to_json())
    elif output is PlanFormat.mermaid and result.refused is None:
        stdout.out(mermaid(result), end="", highlight=False)
    elif output is PlanFormat.dot and result.refused is None:
        stdout.out(dot(result), end="", highlight=False)
    else:
        _text(result)
    if result.refused is not None:
        raise typer.Exit(1)


@user_errors
def rollout_command(
    engine: Annotated[
        str, typer.Argument(help="capi-machinedeployment, capi-kcp, suc, gdc-parallel or aks.")
    ],
    settings: Annotated[
        Path, typer.Argument(help="YAML or JSON with the engine's settings for one pool.")
    ],
    output: OutputOpt = Format.text,
) -> None:
    """How another rollout engine would size one step of a pool, to compare with ours.

    Cluster API MachineDeployments round surge up and unavailability down, KubeadmControlPlane
    needs three replicas to scale in, the system-upgrade-controller counts the nodes
    already applying a plan, distributed-cloud parallel upgrades and AKS surge upgrades
    round their own ways; machine-config pools round maxUnavailable down but never below 1.

    **Examples**

    ```
    echo '{replicas: 10, maxSurge: 25%, maxUnavailable: 25%}' > md.yaml
    kupgrade rollout capi-machinedeployment md.yaml
    kupgrade rollout aks pool.yaml -o json
    ```
    """
    answer = rollout(engine, read_yaml(settings, "rollout settings"), str(settings))
    if output.data:
        print_json(answer)
        return
    for key, value in answer.items():
        stdout.print(f"{key}: {value}", highlight=False, markup=False)
