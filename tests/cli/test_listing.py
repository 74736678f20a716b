"""`kupgrade --help` drawn by cli/listing.py: byte for byte what Typer draws, and the
Markdown it takes upon itself rendered as rich's Markdown renders it."""

from __future__ import annotations

import inspect
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.emoji import Emoji
from rich.markdown import Markdown

from kupgrade.cli import listing

TYPERS = """
import sys, typer
from typer import rich_utils
from kupgrade.cli.main import app
group = typer.main.get_command(app)
ctx = group.make_context("kupgrade", [], resilient_parsing=True)
rich_utils.rich_format_help(obj=group, ctx=ctx, markup_mode="markdown")
print()  # click then echoes the formatter's text, empty when rich printed the help
assert "markdown_it" in sys.modules  # Typer's own way, with its Markdown
"""
OURS = """
import sys
from kupgrade.cli.main import run
sys.argv = ["kupgrade", "--help"]
try:
    run()
except SystemExit as exc:
    assert not exc.code
assert "markdown_it" not in sys.modules and "typer.rich_utils" not in sys.modules
"""


def _drawn(code: str, env: dict[str, str]) -> bytes:
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    return done.stdout


@pytest.mark.parametrize(
    "knobs",
    [
        {"COLUMNS": "80"},
        {"COLUMNS": "41", "FORCE_COLOR": "1"},
        {"COLUMNS": "132", "FORCE_COLOR": "1"},
        {"TERMINAL_WIDTH": "60", "PY_COLORS": "1"},
        {"COLUMNS": "200", "NO_COLOR": "1", "FORCE_COLOR": "1"},
    ],
)
def test_top_level_help_is_typers_byte_for_byte(knobs: dict[str, str]) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("FORCE_COLOR", "NO_COLOR", "PY_COLORS", "TERMINAL_WIDTH", "COLUMNS")
    }
    env.update(knobs)
    theirs, ours = _drawn(TYPERS, env), _drawn(OURS, env)
    assert b"Commands" in ours and b"install" in ours
    assert ours == theirs


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("Serve the update graph.", True),
        ("Print objects as `oc get` does, or their full YAML/JSON.", True),
        ("Fewest hops from --from to --to, minor by minor.", True),
        ("**bold** words", False),
        ("an _emphasis_", False),
        ("a [link](http://x)", False),
        ("- a list item", False),
        ("1. an ordered item", False),
        ("1.30 is a version", True),
        ("# a heading", False),
        ("> a quote", False),
        ("an \\* escape", False),
        ("an &amp; entity", False),
        ("``double`` ticks", False),
        ("an odd ` tick", False),
        ("` padded` span", False),
        ("two\n\nparagraphs", False),
        ("", False),
    ],
)
def test_which_markdown_the_listing_draws_itself(text: str, plain: bool) -> None:
    assert listing.plain_markdown(text) is plain


ANY = st.text(alphabet="abcXYZ019 .,:;-+=()/'\"`*_#>!?&~|\\[]<>\n\t", max_size=60)
PROSE = st.text(alphabet="abcXYZ019 .,:;-+=()/'\"", min_size=1, max_size=12)
CODE = st.text(alphabet="abc -.:/", min_size=1, max_size=8).map(lambda s: f"`{s}`")
WORDS = st.one_of(ANY, st.lists(st.one_of(PROSE, CODE), max_size=8).map("".join))


@settings(max_examples=300, deadline=None)
@given(text=WORDS, width=st.integers(min_value=8, max_value=120), color=st.booleans())
def test_a_paragraph_it_takes_renders_as_rich_markdown_does(
    text: str, width: int, color: bool
) -> None:
    """Whatever `plain_markdown` accepts, `_Paragraph` draws exactly as rich's Markdown."""
    if not listing.plain_markdown(text):
        return

    def rendered(renderable: object) -> str:
        out = io.StringIO()
        console = Console(file=out, width=width, force_terminal=color, color_system="truecolor")
        console.print(renderable)
        return out.getvalue()

    # typer.rich_utils._make_rich_text: the stripped text, dedented, emoji codes replaced
    source = Emoji.replace(inspect.cleandoc(text.strip()))
    assert rendered(listing._Paragraph(text.strip())) == rendered(Markdown(source, style=""))


def _group(
    help_: str = "A tool, run as `prog`.", epilog: str | None = None, panel: str | None = None
) -> tuple[Any, Any]:
    """A group with a callback's options of every kind the options panel shows."""
    app = typer.Typer(rich_markup_mode="markdown", help=help_, epilog=epilog)

    @app.callback()
    def main(  # the old style of options: their defaults are built here, with `panel`
        name: str = typer.Option(
            "a",
            help="The `name` used.",
            envvar="PROG_NAME",
            show_envvar=True,
            rich_help_panel=panel,
        ),
        count: int = typer.Option(1, "--count", "-c", min=0, max=5),
        level: float = typer.Option(0.5, help="How much.", show_default="some"),
        token: str = typer.Option(..., help="Required."),
        verbose: bool = typer.Option(False, "--verbose/--quiet"),
    ) -> None:
        """Unused: the Typer's help is the group's."""

    @app.command()
    def first() -> None:
        """Do the `first` thing."""

    @app.command(hidden=True)
    def hidden() -> None:
        """Not listed."""

    @app.command()
    def second() -> None:
        """The second one, with a long line that wraps in a narrow terminal when listed.

        More text that the listing leaves out."""

    group = typer.main.get_command(app)
    return group, group.make_context("prog", ["--token", "t"], resilient_parsing=True)


@pytest.mark.parametrize(("width", "color"), [(50, False), (100, False), (77, True)])
def test_any_plain_group_is_drawn_as_typer_draws_it(
    width: int, color: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from typer import rich_utils  # noqa: PLC0415 - the reference drawing

    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1" if color else "")
    group, ctx = _group()
    assert listing.drawable(group, ctx)
    rich_utils.rich_format_help(obj=group, ctx=ctx, markup_mode="markdown")
    theirs = capsys.readouterr().out
    listing.draw(group, ctx)
    ours = capsys.readouterr().out
    seen = re.sub(r"\x1b\[[0-9;]*m", "", ours)
    assert "(some)" in seen and "--quiet" in seen and "*" in seen and "float" in seen
    assert ("\x1b[" in ours) is color
    assert "hidden" not in seen and "second" in seen
    assert ours == theirs


@pytest.mark.parametrize(
    "kwargs",
    [
        {"help_": "A **bold** tool."},
        {"epilog": "After the panels."},
        {"panel": "Naming"},
        {"help_": "Two\n\nparagraphs."},
    ],
)
def test_what_it_cannot_draw_is_left_to_typer(kwargs: dict[str, str]) -> None:
    group, ctx = _group(**kwargs)
    assert not listing.drawable(group, ctx)
