"""The `kupgrade` command."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from kupgrade import __version__
from kupgrade.cli.guard import guarded
from kupgrade.cli.lazy import LazyGroup

# Each command is imported when it runs (cli/lazy.py): `kupgrade --help` or `kupgrade get`
# does not pay for the update service, the simulator and every client at once.
app = typer.Typer(
    name="kupgrade",
    cls=LazyGroup,
    help="Serve, plan and carry out upgrades of Kubernetes-based clusters.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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
