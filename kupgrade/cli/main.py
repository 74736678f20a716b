"""The `kupgrade` command."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from kupgrade import __version__
from kupgrade.cli import fleet, graph, olm, olm_cluster, promql, release, skew
from kupgrade.cli.cluster import cluster_app, controller_app, get_command, upgrade_command
from kupgrade.cli.demo import demo_command, sample_app
from kupgrade.cli.guard import guarded
from kupgrade.cli.path import path_command
from kupgrade.cli.plan import plan_command, rollout_command
from kupgrade.cli.serve import serve_command
from kupgrade.cli.updates import updates_command

app = typer.Typer(
    name="kupgrade",
    help="Serve, plan and carry out upgrades of Kubernetes-based clusters.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(graph.app, name="graph")
app.add_typer(sample_app, name="sample")
app.add_typer(promql.app, name="promql")
app.add_typer(release.app, name="release")
app.add_typer(cluster_app, name="cluster")
app.add_typer(controller_app, name="controller")
app.add_typer(skew.app, name="skew")
app.add_typer(fleet.app, name="fleet")
app.add_typer(olm.app, name="olm")  # olm_cluster adds subscribe and approve to it
_ = olm_cluster
app.command("upgrade")(upgrade_command)
app.command("get")(get_command)
app.command("serve")(serve_command)
app.command("demo")(demo_command)
app.command("updates")(updates_command)
app.command("path")(path_command)
app.command("plan")(plan_command)
app.command("rollout")(rollout_command)
app.command("explain")(skew.explain_command)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kupgrade {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Serve, plan and carry out upgrades of Kubernetes-based clusters."""


def run() -> None:
    """The console script: every way out is an exit code and at most one line on stderr."""
    sys.exit(guarded(app))
