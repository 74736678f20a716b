"""`kupgrade --help` (and `kupgrade` alone) drawn as Typer draws it, without its import.

Typer draws every help screen with `typer.rich_utils`, and importing that module imports
rich's Markdown (markdown-it, Pygments) and rich's Traceback: ~50 ms, a third of
`kupgrade --help`'s start (bench/cli_start.py). The top level's help is a usage line, a
sentence, four flags and a list of commands whose one-line helps use no Markdown but
`code` spans. For such a group this module draws the same panels with rich's tables:
what Markdown makes of a paragraph of plain text and code spans is a left-justified Text
with the paragraph's and the code's styles (rich/markdown.py, `Paragraph` and
`MarkdownContext`). Any other text (emphasis, links, lists, escapes, a second
paragraph, an epilog, an argument, a custom panel) is left to Typer, as is every
command's own help. tests/cli/test_listing.py holds the output byte for byte equal to
Typer's, in colour and without, at several widths, so a Typer that draws otherwise fails it.

The layout and styles follow typer/rich_utils.py (Typer 0.28.0, pinned): `rich_format_help`,
`_print_options_panel`, `_get_parameter_help`, `_print_commands_panel`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Iterator
from os import getenv
from typing import TYPE_CHECKING

import typer._click as click
from rich.align import Align
from rich.columns import Columns
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.emoji import Emoji
from rich.highlighter import RegexHighlighter
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.theme import Theme
from typer.core import TyperOption

if TYPE_CHECKING:
    from typer.core import TyperGroup

# Markdown of one paragraph that is plain text and single-backtick code spans: none of
# the characters of emphasis, links, HTML, entities, escapes, tables or strikethrough,
# and no line that starts a list, a heading, a quote or a code block.
_PLAIN = re.compile(r"[^*_\[\]<>&\\|~#\n]*")
_BLOCK_START = re.compile(r"(?:\d{1,9}[.)]|[-+*=]|\s)(?:\s|$)")
_CODE = re.compile(r"`([^`]+)`")


class _OptionHighlighter(RegexHighlighter):
    highlights = [  # noqa: RUF012 - rich's own declaration style
        r"(^|\W)(?P<switch>\-\w+)(?![a-zA-Z0-9])",
        r"(^|\W)(?P<option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
        r"(?P<types>\<[^\>]+\>)",
        r"(?P<usage>Usage: )",
    ]


class _NegativeHighlighter(RegexHighlighter):
    highlights = [  # noqa: RUF012
        r"(^|\W)(?P<negative_switch>\-\w+)(?![a-zA-Z0-9])",
        r"(^|\W)(?P<negative_option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
    ]


class _TypesHighlighter(RegexHighlighter):
    highlights = [  # noqa: RUF012
        r"^(?P<types_sep>(\[|<))",
        r"(?P<types_sep>\|)",
        r"(?P<types_sep>(\]|>))(\.\.\.)?$",
    ]


_HIGHLIGHT = _OptionHighlighter()
_NEGATIVE = _NegativeHighlighter()
_TYPES = _TypesHighlighter()
_THEME = {
    "option": "bold cyan",
    "switch": "bold green",
    "negative_option": "bold magenta",
    "negative_switch": "bold red",
    "types": "bold yellow",
    "types_sep": "dim",
    "usage": "yellow",
}


def plain_markdown(text: str) -> bool:
    """Whether Markdown makes of `text` one paragraph of plain text and code spans."""
    text = inspect.cleandoc(text)
    if not text or not _PLAIN.fullmatch(text) or _BLOCK_START.match(text):
        return False
    if "``" in text or text.count("`") % 2:
        return False
    return all(span.strip() and span[0] != " " and span[-1] != " " for span in _CODE.findall(text))


class _Paragraph:
    """What rich's Markdown renders for a paragraph of text and code spans. It has no
    `__rich_measure__`, as Markdown has none: a table sizes its column the same way."""

    def __init__(self, text: str, style: str = "") -> None:
        self.text = Emoji.replace(inspect.cleandoc(text))
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        base = console.get_style(self.style, default="none")
        paragraph = base + console.get_style("markdown.paragraph", default="none")
        code = paragraph + console.get_style("markdown.code", default="none")
        text = Text(justify="left")
        for i, piece in enumerate(self.text.split("`")):
            if piece:
                text.append(piece, code if i % 2 else paragraph)
        yield text


def drawable(group: TyperGroup, ctx: click.Context) -> bool:
    """Whether this module draws `group`'s help exactly as Typer would."""
    if group.deprecated or group.epilog or not plain_markdown(group.help or ""):
        return False
    for param in group.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        if not isinstance(param, TyperOption) or getattr(param, "rich_help_panel", None):
            return False
        if param.help and not plain_markdown(param.help):
            return False
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        if command.deprecated or getattr(command, "rich_help_panel", None):
            return False
        first = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
        if first.startswith("\b") or (first and not plain_markdown(first.replace("\n", " "))):
            return False
    return True


def _console() -> Console:
    """The console of typer.rich_utils._get_rich_console, its environment read the same way."""
    width = getenv("TERMINAL_WIDTH")
    force = (
        True if getenv("GITHUB_ACTIONS") or getenv("FORCE_COLOR") or getenv("PY_COLORS") else None
    )
    if getenv("_TYPER_FORCE_DISABLE_TERMINAL"):
        force = False
    return Console(
        theme=Theme(_THEME),
        highlighter=_HIGHLIGHT,
        color_system="auto",
        force_terminal=force,
        width=int(width) if width else None,
    )


def draw(group: TyperGroup, ctx: click.Context) -> None:
    """Print the group's help (the caller has checked `drawable`)."""
    console = _console()
    console.print(Padding(_HIGHLIGHT(group.get_usage(ctx)), 1), style="bold")
    if group.help:
        body = Group(_Paragraph(inspect.cleandoc(group.help).partition("\f")[0].strip()))
        console.print(Padding(Align(body, pad=False), (0, 1, 1, 1)))
    options = [
        p
        for p in group.get_params(ctx)
        if isinstance(p, TyperOption) and not getattr(p, "hidden", False)
    ]
    _panel(console, "Options", _option_table(options, ctx))
    commands = [
        c
        for c in (group.get_command(ctx, n) for n in group.list_commands(ctx))
        if c is not None and not c.hidden
    ]
    _panel(console, "Commands", _command_table(commands))


def _panel(console: Console, title: str, table: Table) -> None:
    if table.row_count:
        console.print(Panel(table, border_style="dim", title=title, title_align="left"))


def _table(highlight: bool) -> Table:
    return Table(
        highlight=highlight,
        show_header=False,
        expand=True,
        box=None,
        show_lines=False,
        leading=0,
        border_style=None,
        row_styles=None,
        pad_edge=False,
        padding=(0, 1),
    )


def _option_table(options: list[TyperOption], ctx: click.Context) -> Table:
    rows: list[list[RenderableType]] = []
    required: list[str | Text] = []
    for param in options:
        longs = [o for o in param.opts if "--" in o]
        shorts = [o for o in param.opts if "--" not in o]
        second_longs = [o for o in param.secondary_opts if "--" in o]
        second_shorts = [o for o in param.secondary_opts if "--" not in o]
        types = Text(style="bold yellow", overflow="fold")
        metavar = param.make_metavar(ctx=ctx)
        if metavar and "bool" not in metavar.lower():
            types.append(metavar)
        if isinstance(param.type, click.types._NumberRangeBase) and not (
            param.count and param.type.min == 0 and param.type.max is None
        ):
            described = param.type._describe_range()
            if described:
                types.append(f" [{described}]")
        required.append(Text("*", style="red") if param.required else "")
        rows.append(
            [
                _HIGHLIGHT(",".join(longs)),
                _HIGHLIGHT(",".join(shorts)),
                _NEGATIVE(",".join(second_longs)),
                _NEGATIVE(",".join(second_shorts)),
                _TYPES(types),
                Columns(list(_option_help(param, ctx))),
            ]
        )
    table = _table(highlight=True)
    for needed, row in zip(required, rows, strict=True):
        table.add_row(*([needed, *row] if any(required) else row))
    return table


def _option_help(param: TyperOption, ctx: click.Context) -> Iterator[RenderableType]:
    """The help column of an option: its text, env var, default and [required]."""
    envvar = param.envvar
    if envvar is None and param.allow_from_autoenv and ctx.auto_envvar_prefix is not None:
        envvar = f"{ctx.auto_envvar_prefix}_{(param.name or '').upper()}"
    if param.help:
        yield _Paragraph("\n".join(param.help.split("\n\n")).strip())
    if envvar and param.show_envvar:
        shown = envvar if isinstance(envvar, str) else ", ".join(str(d) for d in envvar)
        yield Text(f"[env var: {shown}]", style="dim yellow")
    default = param._extract_default_help_str(ctx=ctx)
    as_text = isinstance(param.show_default, str)
    if as_text or (default is not None and (param.show_default or ctx.show_default)):
        shown = param._get_default_string(
            ctx=ctx, show_default_is_str=as_text, default_value=default
        )
        if shown:
            yield Text(f"[default: {shown}]", style="dim")
    if param.required:
        yield Text("[required]", style="dim red")


def _command_table(commands: Iterable[click.Command]) -> Table:
    listed = list(commands)
    table = _table(highlight=False)
    width = max((len(c.name or "") for c in listed), default=0)
    table.add_column(style="bold cyan", no_wrap=True, width=width)
    table.add_column("Description", justify="left", no_wrap=False, ratio=10)
    for command in listed:
        first = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
        table.add_row(Text(command.name or ""), _Paragraph(first.replace("\n", " ").strip()))
    return table
