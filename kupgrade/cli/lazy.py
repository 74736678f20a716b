"""The top-level command group, each of its commands imported only when it is run.

Building every command at start-up imports every room of the package (the simulator,
the controllers, the update service, lightkube...), about a second, for a command that
needs one of them. Click lets a group load its commands on demand (its documented
"lazily loading subcommands" pattern); Typer builds the group, and this subclass keeps
what Typer made for each command a name in `LAZY` until the command is resolved. For the
listing of `kupgrade --help` a command is a stub carrying its one-line help, which
`tests/cli/test_help.py` holds equal to the real command's.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any

import typer
import typer._click as click  # Typer's own click (its classes are not the click package's)
from typer.core import HAS_RICH, TyperCommand, TyperGroup

if TYPE_CHECKING:  # what `load` imports by name, said where type checkers and tools see it
    from kupgrade.cli import (  # noqa: F401
        cluster,
        controller,
        demo,
        fleet,
        get,
        graph,
        olm_cluster,
        path,
        plan,
        promql,
        rehearse,
        release,
        serve,
        skew,
        updates,
        upgrade,
    )


@dataclass(frozen=True)
class Entry:
    module: str
    attr: str  # a Typer (a group of commands) or a command function
    help: str  # the first line of its help, as `kupgrade --help` lists it


# name -> where the command lives, in `kupgrade --help`'s order (commands, then groups).
LAZY: dict[str, Entry] = {
    "upgrade": Entry(
        "kupgrade.cli.upgrade",
        "upgrade_command",
        "Show the cluster's update status like `oc adm upgrade`, or request an "
        "update; `upgrade status` shows its progress like `oc adm upgrade status`.",
    ),
    "get": Entry(
        "kupgrade.cli.get",
        "get_command",
        "Print objects as `oc get` does, or their full YAML/JSON.",
    ),
    "serve": Entry(
        "kupgrade.cli.serve",
        "serve_command",
        "Serve the update graph over Cincinnati's policy-engine API.",
    ),
    "demo": Entry(
        "kupgrade.cli.demo",
        "demo_command",
        "Run the update service on the sample data, query it, then rehearse an upgrade.",
    ),
    "updates": Entry(
        "kupgrade.cli.updates",
        "updates_command",
        "Show the updates of this cluster's channel as `oc adm upgrade` would.",
    ),
    "path": Entry(
        "kupgrade.cli.path",
        "path_command",
        "Fewest hops from --from to --to, switching channels of one family minor by minor.",
    ),
    "plan": Entry(
        "kupgrade.cli.plan",
        "plan_command",
        "Plan an upgrade whose every intermediate state keeps every skew rule.",
    ),
    "rollout": Entry(
        "kupgrade.cli.plan",
        "rollout_command",
        "How another rollout engine would size one step of a pool, to compare with ours.",
    ),
    "explain": Entry(
        "kupgrade.cli.skew",
        "explain_command",
        "What a rule id in a skew finding or refusal means, and where the rule comes "
        "from; without an id, every rule.",
    ),
    "graph": Entry(
        "kupgrade.cli.graph", "app", "Build, filter, lint and compare Cincinnati update graphs."
    ),
    "sample": Entry(
        "kupgrade.cli.demo",
        "sample_app",
        "The sample dataset kupgrade ships (an OpenShift-like 4.12-4.15 line).",
    ),
    "promql": Entry(
        "kupgrade.cli.promql",
        "app",
        "Evaluate PromQL over a metrics snapshot, as Prometheus would.",
    ),
    "release": Entry(
        "kupgrade.cli.release",
        "app",
        "Release payloads: build, inspect, extract, push, sign, verify, order.",
    ),
    "cluster": Entry(
        "kupgrade.cli.cluster",
        "cluster_app",
        "Create, import, list and delete simulated clusters.",
    ),
    "controller": Entry(
        "kupgrade.cli.controller", "controller_app", "Run the controllers of a cluster."
    ),
    "skew": Entry(
        "kupgrade.cli.skew",
        "app",
        "Version-skew rules of Kubernetes, kubeadm and distributed cloud.",
    ),
    "fleet": Entry(
        "kupgrade.cli.fleet",
        "app",
        "Fleets of simulated clusters: create, rehearse a plan, roll out, status.",
    ),
    "olm": Entry("kupgrade.cli.olm_cluster", "app", "Operator catalogs and subscriptions."),
    "rehearse": Entry(
        "kupgrade.cli.rehearse",
        "app",
        "Rehearse one cluster's upgrade over many settings and seeds.",
    ),
}


def load(name: str) -> click.Command:
    """The real command `name`, as Typer builds it (imports its module)."""
    entry = LAZY[name]
    found = getattr(importlib.import_module(entry.module), entry.attr)
    if isinstance(found, typer.Typer):
        group = typer.main.get_group(found)
        group.name = name
        return group
    single = typer.Typer(rich_markup_mode="markdown")
    single.command(name)(found)
    command = typer.main.get_command(single)
    command.name = name
    return command


class LazyGroup(TyperGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.commands, *(n for n in LAZY if n not in self.commands)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command if it was loaded; else a stub with its help, for a listing."""
        found = self.commands.get(cmd_name)
        if found is not None or cmd_name not in LAZY:
            return found
        return TyperCommand(name=cmd_name, help=LAZY[cmd_name].help)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """Running a command (or asking for its own help) loads it for real; a typo is
        answered with the names it is close to, loaded or not."""
        name = str(args[0]) if args else ""
        if name in LAZY and name not in self.commands:
            self.commands[name] = load(name)
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.UsageError as exc:
            matches = get_close_matches(name, self.list_commands(ctx))
            if matches and "Did you mean" not in exc.message:
                said = ", ".join(repr(m) for m in matches)
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {said}?"
            raise

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing as Typer draws it, without importing Typer's help module when
        cli/listing.py can draw it the same (imported here: rich's tables and panels are
        for a listing, not for every command's start)."""
        from kupgrade.cli.listing import draw, drawable  # noqa: PLC0415

        if HAS_RICH and self.rich_markup_mode == "markdown" and drawable(self, ctx):
            draw(self, ctx)
            return
        super().format_help(ctx, formatter)

    def load_all(self) -> None:
        """Every command loaded (what tests walk to see them all)."""
        for name in LAZY:
            if name not in self.commands:
                self.commands[name] = load(name)


def loaded(app: Any) -> click.Command:
    """The app's click command with every lazy command loaded."""
    command = typer.main.get_command(app)
    if isinstance(command, LazyGroup):
        command.load_all()
    return command
