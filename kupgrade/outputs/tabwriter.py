"""Go's text/tabwriter, byte for byte: the tables of oc, opm and kubeadm are written with
it, and users compare our tables with theirs.

No Python library reproduces its column blocks: a column's width is set by the run of
consecutive lines that have a cell in that column, so a line with fewer cells (a
multi-line message's continuation, a blank line) ends the block and the lines after it are
aligned afresh (text/tabwriter tabwriter.go, Writer.format and Writer.writeLines). A
cell is tab-terminated; a line's last cell is not in any column and is never padded.
Widths count runes, as utf8.RuneCountInString does. Flags other than the default
(AlignRight, DiscardEmptyColumns, TabIndent, Debug) are not used by the tools we mirror.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def tabwrite(text: str, minwidth: int = 0, padding: int = 1, padchar: str = " ") -> str:
    """What a text/tabwriter.Writer (minwidth, tabwidth irrelevant for ' ', padding,
    padchar ' ', flags 0) writes for `text` once flushed."""
    lines = [line.split("\t") for line in text.split("\n")]
    if len(lines[-1]) > 1 and not lines[-1][-1]:
        lines[-1].pop()  # Flush terminates an unfinished last cell only when it holds text
    writer = _Writer(lines, minwidth, padding, padchar)
    writer.format(0, len(lines), [])
    return "\n".join(writer.out)


def table(
    rows: Iterable[Sequence[str]], minwidth: int = 0, padding: int = 1, padchar: str = " "
) -> list[str]:
    """Rows written as `fmt.Fprintf(w, "%s\\t%s\\n", …)` writes them (a cell may hold
    newlines, as oc's messages do), as lines without their newline."""
    text = "".join("\t".join(row) + "\n" for row in rows)
    return tabwrite(text, minwidth, padding, padchar).split("\n")[:-1]


class _Writer:
    def __init__(self, lines: list[list[str]], minwidth: int, padding: int, padchar: str):
        self.lines, self.minwidth, self.padding, self.padchar = lines, minwidth, padding, padchar
        self.out: list[str] = []

    def format(self, line0: int, line1: int, widths: list[int]) -> None:
        """Writer.format: find the blocks of the next column, fix each block's width and
        format the columns right of it within the block."""
        lines, column, this = self.lines, len(widths), line0
        while this < line1:
            if column >= len(lines[this]) - 1:
                this += 1
                continue
            self.write(line0, this, widths)
            line0 = this
            width = self.minwidth
            while this < line1 and column < len(lines[this]) - 1:
                width = max(width, len(lines[this][column]) + self.padding)
                this += 1
            self.format(line0, this, [*widths, width])
            line0 = this
        self.write(line0, line1, widths)

    def write(self, line0: int, line1: int, widths: list[int]) -> None:
        """Writer.writeLines: a cell in a known column padded to its width, the rest as is."""
        pad = self.padchar
        for cells in self.lines[line0:line1]:
            self.out.append(
                "".join(
                    cell + pad * (widths[j] - len(cell)) if j < len(widths) else cell
                    for j, cell in enumerate(cells)
                )
            )
