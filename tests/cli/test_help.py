"""Every command's --help, as a new user reads it in a 100-column terminal: no rule ids
they cannot look up, and examples that are not wrapped mid-line (so they copy-paste)."""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from kupgrade.cli import lazy
from kupgrade.cli.lazy import LAZY, loaded
from kupgrade.cli.main import app
from kupgrade.errors import InputError

SKEW_EXAMPLES = Path(__file__).resolve().parents[2] / "kupgrade" / "skew" / "examples"

WIDTH = 100
RULE_ID = re.compile(r"\bSPEC\b|\[SPEC|\bSPEC [A-HX]\d")


Command = Any  # typer's own vendored click Command


def _group(command: Command) -> bool:
    return isinstance(getattr(command, "commands", None), dict)


def _commands() -> Iterator[tuple[list[str], Command]]:
    def walk(path: list[str], command: Command) -> Iterator[tuple[list[str], Command]]:
        yield path, command
        if _group(command):
            for name, sub in sorted(command.commands.items()):
                yield from walk([*path, name], sub)

    yield from walk([], loaded(app))


COMMANDS = list(_commands())


def _examples(command: Command) -> list[str]:
    """The example lines of a command's docstring (its ``` block)."""
    callback = getattr(command, "callback", None)
    doc = (callback.__doc__ if callback is not None else None) or ""
    blocks = re.findall(r"```\n(.*?)```", doc, re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("path", "command"), [pytest.param(p, c, id=" ".join(p) or "kupgrade") for p, c in COMMANDS]
)
def test_help_speaks_the_users_language(path: list[str], command: Command) -> None:
    shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)})
    assert shown.exit_code == 0, shown.output
    assert not RULE_ID.search(shown.output), f"a rule id in the help of {path}"
    # Markdown rendered, as the top-level commands' help is: no raw fences or emphasis.
    assert "```" not in shown.output and "**Examples**" not in shown.output, path
    jargon = re.search(r"seed's|the seeds?\b|\bSPEC\b", shown.output)
    assert not jargon, f"{jargon.group(0) if jargon else ''} in the help of {path}"
    for line in shown.output.splitlines():
        assert len(line) <= WIDTH, line
    for example in _examples(command):
        assert len(example) <= WIDTH - 6, f"example too wide for {WIDTH} columns: {example}"
        assert example.split("#")[0].strip() in shown.output, f"example wrapped: {example}"


def test_every_command_has_examples() -> None:
    leaves = [(p, c) for p, c in COMMANDS if not _group(c)]
    missing = [" ".join(p) for p, c in leaves if not _examples(c)]
    assert not missing, missing


def test_errors_keep_rule_ids_out_of_the_users_line() -> None:
    """Rule ids of kupgrade's own specification are not shipped, so a user cannot look
    them up: the one-line error leaves them out, the JSON form keeps them for scripts."""
    for rule in ("SPEC C5", "F4", "SPEC D1-D3"):
        error = InputError("bad value", file="f.yaml", field="x", rule=rule, hint="fix it")
        assert str(error) == "f.yaml: x: bad value; fix it"
        assert error.to_dict()["rule"] == rule
    assert str(InputError("bad", rule="opm load")) == "bad [opm load]"


def test_every_command_that_prints_data_prints_json_and_yaml() -> None:
    """`-o json|yaml` on every leaf command (`graph build -o` names the file it writes,
    which is the data itself)."""
    for path, command in COMMANDS:
        if _group(command) or path == ["graph", "build"]:
            continue
        shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"}).output
        found = re.search(r"-o\s+<([^>]*)>", shown)
        assert found, f"{' '.join(path)} has no -o"
        assert {"json", "yaml"} <= set(found.group(1).split("|")), " ".join(path)


def test_yaml_is_the_same_document_as_json() -> None:
    for args in (["olm", "skiprange", ">=4.1.0 <4.1.2", "4.1.1"], ["cluster", "profile"]):
        as_json = CliRunner().invoke(app, [*args, "-o", "json"])
        as_yaml = CliRunner().invoke(app, [*args, "-o", "yaml"])
        assert as_json.exit_code == as_yaml.exit_code == 0
        assert yaml.safe_load(as_yaml.stdout) == json.loads(as_json.stdout)
        assert not as_yaml.stdout.lstrip().startswith("{")


def test_the_listing_says_what_each_lazy_command_says_of_itself() -> None:
    """`kupgrade --help` lists each command from cli/lazy.py without importing it: the
    line it shows is the loaded command's own first paragraph, and every command is in
    the table."""
    listing = typer.main.get_command(app)
    real = loaded(app)
    assert set(real.commands) == set(LAZY)
    for name, command in real.commands.items():
        first = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
        assert LAZY[name].help == " ".join(first.split()), name
    fresh = typer.main.get_command(app)  # a new group: nothing loaded yet
    stub = fresh.get_command(None, "get")
    assert stub is not None and stub.help == LAZY["get"].help and not stub.params
    assert listing is not None


def test_help_imports_no_command() -> None:
    """`kupgrade --help` in a fresh interpreter leaves the commands' modules unimported
    (what makes it quick), while running a command imports its own."""
    code = (
        "import sys\nfrom typer.testing import CliRunner\nfrom kupgrade.cli.main import app\n"
        "CliRunner().invoke(app, {args})\n"
        "print(sorted(m for m in sys.modules if m.startswith(('kupgrade.', 'lightkube'))))"
    )

    def modules(args: list[str]) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", code.format(args=args)],
            capture_output=True,
            text=True,
            check=True,
        )
        return list(json.loads(done.stdout.strip().replace("'", '"')))

    helped = modules(["--help"])
    assert not {f"kupgrade.cli.{m}" for m in ("cluster", "fleet", "graph", "serve")} & set(helped)
    assert "kupgrade.sim.loop" not in helped and "lightkube" not in helped
    assert "kupgrade.cli.skew" in modules(["skew", "--help"])


def _imported_by(argv: list[str], env: dict[str, str], code: int = 0) -> tuple[str, set[str]]:
    """Run `kupgrade ARGV` in a fresh interpreter: (its stdout, every module it imported)."""
    script = (
        "import sys\nfrom kupgrade.cli.main import run\n"
        f"sys.argv = {['kupgrade', *argv]!r}\n"
        f"try:\n    run()\nexcept SystemExit as exc:\n    assert exc.code == {code}, exc.code\n"
        "print(sorted(sys.modules), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout, set(json.loads(done.stderr.strip().splitlines()[-1].replace("'", '"')))


def test_get_nodes_imports_only_what_it_prints(tmp_path: Path) -> None:
    """`kupgrade get nodes` on a simulated cluster, in a fresh interpreter, imports neither
    the YAML reader, rich's console (it prints plain text), the progress bar, pydantic (Typer 0.29 coerces options through it:
    pinned at 0.28), Zstandard nor the controllers: each cost its start tens of milliseconds
    (bench/cli_start.py)."""
    env = {**os.environ, "KUPGRADE_HOME": str(tmp_path)}
    kupgrade = str(Path(sys.executable).parent / "kupgrade")
    subprocess.run(
        [
            kupgrade,
            "cluster",
            "create",
            "small",
            "--platform",
            "kubernetes",
            "--version",
            "v1.30.4",
            "--control-planes",
            "1",
            "--workers",
            "2",
        ],
        env=env,
        capture_output=True,
        check=True,
    )
    out, imported = _imported_by(["get", "nodes", "--cluster", "small"], env)
    assert out.startswith("NAME") and len(out.splitlines()) == 4, out
    assert "kupgrade.cli.get" in imported  # the command did run
    unwanted = {
        "yaml",
        "pydantic",
        "rich.progress",
        "rich.console",
        "kupgrade.controllers.version.status",
        "kupgrade.controllers.nodes.pool",
        "kupgrade.intake.yamldoc",
        "zstandard",  # a small cluster's objects are not packed (kupgrade/sim/packing.py)
    }
    assert not unwanted & imported, unwanted & imported


def test_simulated_clusters_are_listed_and_run_without_a_kubernetes_client(
    tmp_path: Path,
) -> None:
    """`cluster list` and `controller run` on a simulated cluster in this process import
    neither lightkube (its client, 0.2 s) nor the API server's modules: only a command
    that reaches a server (`--kubeconfig`) or serves one (`serve-api`) does."""
    env = {**os.environ, "KUPGRADE_HOME": str(tmp_path)}
    kupgrade = str(Path(sys.executable).parent / "kupgrade")
    subprocess.run(
        [kupgrade, "cluster", "create", "small", "--workers", "1"],
        env=env,
        capture_output=True,
        check=True,
    )
    unwanted = {"lightkube", "kupgrade.cluster.kube", "kupgrade.apiserver.server"}
    out, imported = _imported_by(["cluster", "list"], env)
    assert "small" in out and "kupgrade.cli.cluster" in imported
    assert not unwanted & imported, unwanted & imported
    out, imported = _imported_by(["controller", "run", "--until", "idle", "-o", "json"], env)
    assert json.loads(out)["outcome"] and "kupgrade.sim.loop" in imported
    assert not unwanted & imported, unwanted & imported


def test_skew_check_imports_what_its_case_needs(tmp_path: Path) -> None:
    """`kupgrade skew check` on a clean inventory imports neither the findings table, the
    step judge, the rules' texts, the file formats nor a live cluster's reader (SPEC H1);
    an inventory with findings does import the table it prints them in."""
    env = {**os.environ, "KUPGRADE_HOME": str(tmp_path)}
    out, imported = _imported_by(["skew", "check", str(SKEW_EXAMPLES / "inventory.yaml")], env)
    assert out.startswith("no skew violations"), out
    assert "kupgrade.skew.k8s" in imported  # the check did run
    unwanted = {
        "rich.table",
        "rich.console",
        "kupgrade.skew.step_rules",
        "kupgrade.skew.explain",
        "kupgrade.skew.reference",
        "kupgrade.cluster.live",
        "kupgrade.cluster.kubeadm",
    }
    assert not unwanted & imported, unwanted & imported
    behind = tmp_path / "behind.yaml"
    behind.write_text(
        'apiservers: [{name: a1, version: "1.30.4"}]\nnodes: [{name: w1, kubelet: "1.26.0"}]\n'
    )
    out, imported = _imported_by(["skew", "check", str(behind), "--policy", "k8s-n2"], env, 1)
    assert "w1" in out and "rich.table" in imported, out


def test_every_lazy_module_is_declared_where_tools_see_it() -> None:
    """cli/lazy.py imports its command modules by name; its TYPE_CHECKING import names the
    same modules, so mypy and the import graph (unreached.py) see them."""
    tree = ast.parse(Path(lazy.__file__).read_text())
    declared = {
        f"kupgrade.cli.{a.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "kupgrade.cli"
        for a in node.names
    }
    assert declared == {entry.module for entry in LAZY.values()}
