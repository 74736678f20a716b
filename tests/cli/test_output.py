"""The consoles every command shares are made when first used, and print as rich does."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import pytest

from kupgrade.cli.output import LazyConsole, real, say

if TYPE_CHECKING:
    from rich.console import Console


def test_the_console_is_made_when_first_used(capsys: pytest.CaptureFixture[str]) -> None:
    lazy = LazyConsole(soft_wrap=True, emoji=False, width=200)
    assert lazy._console is None
    lazy.print("a [bold]b[/bold] w:smile:1", highlight=False)
    assert lazy._console is not None
    assert capsys.readouterr().out == "a b w:smile:1\n"
    assert real(cast("Console", lazy)) is lazy._console  # what a progress bar is given


def test_say_prints_a_line_as_the_console_prints_plain_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = "no skew violations (k8s-n3) [not markup] w:smile:1"
    LazyConsole(soft_wrap=True, emoji=False, width=200).print(line, markup=False, highlight=False)
    printed = capsys.readouterr().out
    say(line)
    assert capsys.readouterr().out == printed == line + "\n"
