"""Conventions every command shares: `-o text|json`, errors without tracebacks, atomic writes.

Data goes to stdout, messages and progress to stderr, so `-o json` output pipes cleanly.
"""

from __future__ import annotations

import enum
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar, cast

import typer

from kupgrade.errors import KupgradeError

if TYPE_CHECKING:
    from rich.console import Console

# YAML, the progress bar, the atomic writer and rich's console are imported where they are
# used: every command imports this module, and they cost a command that needs none of them
# ~45 ms of its start (bench/cli_start.py).


class LazyConsole:
    """A rich Console made when it is first used. `get`, `-o json` and one-line answers
    print plain text; rich's console module is ~15 ms of a command's start."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    @property
    def real(self) -> Console:
        if self._console is None:
            from rich.console import Console  # noqa: PLC0415 - see the imports above

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


# Off a terminal Rich assumes 80 columns and truncates table cells; piped output and logs
# should keep whole risk names and URLs.
PIPE_WIDTH = 200
# No emoji codes: names, messages and risk texts are printed as they are ("x:fire:y" is
# not a flame), and rich's table of codes is not imported by every command that prints.
stdout = cast(
    "Console",
    LazyConsole(soft_wrap=True, emoji=False, width=None if sys.stdout.isatty() else PIPE_WIDTH),
)
stderr = cast(
    "Console",
    LazyConsole(
        stderr=True, soft_wrap=True, emoji=False, width=None if sys.stderr.isatty() else PIPE_WIDTH
    ),
)


def say(line: str) -> None:
    """One line of plain text on stdout, as `stdout.print(line, markup=False,
    highlight=False)` prints it, without making the console."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


P = ParamSpec("P")
R = TypeVar("R")


class Format(enum.StrEnum):
    text = "text"
    json = "json"
    yaml = "yaml"

    @property
    def data(self) -> bool:
        """json or yaml: the data itself rather than text for people."""
        return self is not Format.text


# The format the running command was asked for (set by `user_errors`), so that data is
# printed as JSON or YAML by one function wherever a command prints it.
_ASKED: ContextVar[Format] = ContextVar("kupgrade_output", default=Format.json)

OUTPUT_HELP = "Output format: text for people, json or yaml for programs."
# The `-o text|json` option every command takes.
OutputOpt = Annotated[Format, typer.Option("-o", "--output", help=OUTPUT_HELP)]


# The `--cluster NAME` option of the commands that act on a simulated cluster.
def command_group(help: str) -> typer.Typer:
    """A group of commands whose help renders Markdown as the top-level commands' does
    (its examples as code blocks, not as raw fences)."""
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode="markdown")


EngineOpt = Annotated[
    str,
    typer.Option(
        "--engine",
        help="Where independent rehearsals run: local (this process) or ray "
        "(Ray tasks; pip install 'kupgrade[ray]').",
    ),
]
AddressOpt = Annotated[
    str | None,
    typer.Option(
        "--address",
        help="--engine ray: the Ray cluster's head (HOST:PORT or ray://HOST:PORT; "
        "default: a Ray instance on this machine).",
    ),
]
ClusterOpt = Annotated[
    str | None, typer.Option("--cluster", help="Cluster name; default: the only cluster there is.")
]


def print_json(doc: Any) -> None:
    """Data as the command was asked for it: JSON, or YAML for `-o yaml` (the same
    document: it goes through JSON first, so tuples and the like come out as lists)."""
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    if _ASKED.get() is Format.yaml:
        import yaml  # noqa: PLC0415 - see the imports above

        text = yaml.safe_dump(json.loads(text), sort_keys=False, allow_unicode=True).rstrip("\n")
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def write_stdout_bytes(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def atomic_write(path: Path, data: bytes) -> None:
    """Never half-written, never replacing a device or FIFO, created with the umask."""
    from kupgrade.outputs import write_output  # noqa: PLC0415 - see the imports above

    write_output(path, data)


def report_error(error: KupgradeError, fmt: Format = Format.text) -> None:
    if fmt.data:
        print_json(error.to_dict())
    from rich.text import Text  # noqa: PLC0415 - see the imports above

    # The message is the user's text (file names, fields like `nodes[a1]`): never markup.
    # One line, whatever a library put in the message (tarfile's ReadError lists methods).
    line = " ".join(str(error).split())
    stderr.print(Text("error: ", style="bold red") + Text(line), highlight=False)


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn KupgradeError into a one-line message and exit code 1 (never a traceback)."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        fmt = kwargs.get("output", kwargs.get("fmt"))
        value = fmt.value if isinstance(fmt, enum.Enum) else None
        asked = Format(value) if value in ("json", "yaml") else Format.text
        token = _ASKED.set(asked if asked.data else Format.json)
        try:
            return func(*args, **kwargs)
        except KupgradeError as error:
            report_error(error, asked)
            raise typer.Exit(1) from None
        finally:
            _ASKED.reset(token)

    return wrapper


def real(console: Console) -> Console:
    """The console itself, for rich objects that keep one (a progress bar, a live view)."""
    return console.real if isinstance(console, LazyConsole) else console


@contextmanager
def progress(description: str, steps: int) -> Iterator[Callable[[str], None]]:
    """A bar over a known number of steps on stderr (silent when stderr is not a terminal).

    Call the yielded function with the name of each step as it starts.
    """
    from rich.progress import (  # noqa: PLC0415 - see the imports above
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=real(stderr),
        transient=True,
        disable=not stderr.is_terminal,
    ) as bar:
        task = bar.add_task(description, total=steps)
        started = False

        def step(text: str) -> None:
            nonlocal started
            bar.update(task, description=f"{description}: {text}", advance=1 if started else 0)
            started = True

        yield step
        bar.update(task, completed=steps)
