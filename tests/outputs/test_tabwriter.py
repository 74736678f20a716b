"""Go's text/tabwriter reproduced (kupgrade/outputs/tabwriter.py): the cases of Go's own
tabwriter_test.go that use no flags, and the column blocks a multi-line cell breaks.

The cases below are transcribed as data from golang/go src/text/tabwriter/tabwriter_test.go
(the `tests` table, entries whose flags are 0: their names, minwidth, padding, padchar,
source and expected text). Go is Copyright The Go Authors, BSD-style licence
(https://go.dev/LICENSE)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kupgrade.outputs.tabwriter import table, tabwrite

GO_CASES = [
    ("1a", 8, 1, ".", "", ""),
    ("2", 8, 1, ".", "\n\n\n", "\n\n\n"),
    ("3", 8, 1, ".", "a\nb\nc", "a\nb\nc"),
    ("4a", 8, 1, ".", "\t", ""),
    ("5", 8, 1, ".", "*\t*", "*.......*"),
    ("5b", 8, 1, ".", "*\t*\n", "*.......*\n"),
    ("5c", 8, 1, ".", "*\t*\t", "*.......*"),
    ("6", 8, 1, ".", "\t\n", "........\n"),
    ("7a", 8, 1, ".", "a) foo", "a) foo"),
    ("7b", 8, 1, " ", "b) foo\tbar", "b) foo  bar"),
    ("7c", 8, 1, ".", "c) foo\tbar\t", "c) foo..bar"),
    ("7d", 8, 1, ".", "d) foo\tbar\n", "d) foo..bar\n"),
    ("7e", 8, 1, ".", "e) foo\tbar\t\n", "e) foo..bar.....\n"),
    ("8", 8, 1, "*", "Hello, world!\n", "Hello, world!\n"),
    ("9a", 1, 0, ".", "1\t2\t3\t4\n11\t222\t3333\t44444\n", "1.2..3...4\n11222333344444\n"),
    ("10a", 5, 0, ".", "1\t2\t3\t4\n", "1....2....3....4\n"),
    ("10b", 5, 0, ".", "1\t2\t3\t4\t\n", "1....2....3....4....\n"),
    (
        "11",
        8,
        1,
        ".",
        "本\tb\tc\naa\t\u672c\u672c\u672c\tcccc\tddddd\naaa\tbbbb\n",
        "本.......b.......c\naa......本本本.....cccc....ddddd\naaa.....bbbb\n",
    ),
    ("12b", 2, 0, " ", "a\tb\tc\naa\tbbb\tcccc\naaa\tbbbb\n", "a  b  c\naa bbbcccc\naaabbbb\n"),
    (
        "12c",
        8,
        1,
        "_",
        "a\tb\tc\naa\tbbb\tcccc\naaa\tbbbb\n",
        "a_______b_______c\naa______bbb_____cccc\naaa_____bbbb\n",
    ),
    (
        "13a",
        4,
        1,
        "-",
        "4444\t日本語\t22\t1\t333\n999999999\t22\n7\t22\n\t\t\t88888888\n\n"
        "666666\t666666\t666666\t4444\n1\t1\t999999999\t0000000000\n",
        "4444------日本語-22--1---333\n999999999-22\n7---------22\n------------------88888888\n\n"
        "666666-666666-666666----4444\n1------1------999999999-0000000000\n",
    ),
    (
        "13b",
        4,
        3,
        ".",
        "4444\t333\t22\t1\t333\n999999999\t22\n7\t22\n\t\t\t88888888\n\n"
        "666666\t666666\t666666\t4444\n1\t1\t999999999\t0000000000\n",
        "4444........333...22...1...333\n999999999...22\n7...........22\n"
        "....................88888888\n\n666666...666666...666666......4444\n"
        "1........1........999999999...0000000000\n",
    ),
    ("15a", 4, 0, ".", "a\t\tb", "a.......b"),
]


@pytest.mark.parametrize(
    ("name", "minwidth", "padding", "padchar", "source", "expected"),
    GO_CASES,
    ids=[c[0] for c in GO_CASES],
)
def test_go_s_own_cases(
    name: str, minwidth: int, padding: int, padchar: str, source: str, expected: str
) -> None:
    assert tabwrite(source, minwidth, padding, padchar) == expected


def test_a_multi_line_cell_ends_the_column_blocks_and_the_rows_after_it_realign() -> None:
    """As oc's nodes table after a message of several lines (ocpbugs-60768's capture)."""
    rows = [["NAME", "ASSESSMENT", "MSG"], ["a", "Degraded", "one\ntwo"], ["bb", "Done", ""]]
    assert table(rows, padding=3) == [
        "NAME   ASSESSMENT   MSG",
        "a      Degraded     one",
        "two",
        "bb   Done   ",
    ]


cells = st.text(alphabet="ab本 ", max_size=5)


@given(st.lists(st.lists(cells, min_size=2, max_size=4), min_size=1, max_size=6))
def test_rows_of_one_length_share_every_column_width(rows: list[list[str]]) -> None:
    """With no row shorter than another, every column is one block: each cell but a
    row's last is padded to the column's widest cell plus the padding."""
    size = min(len(r) for r in rows)
    rows = [r[:size] for r in rows]
    widths = [max(len(r[i]) for r in rows) + 3 for i in range(size - 1)]
    expected = ["".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + r[-1] for r in rows]
    assert table(rows, padding=3) == expected


@given(st.lists(st.lists(cells, min_size=1, max_size=4), min_size=1, max_size=6))
def test_a_cell_starts_where_the_cells_before_it_end(rows: list[list[str]]) -> None:
    for row, line in zip(rows, table(rows, padding=2), strict=True):
        assert line.startswith(row[0])
        assert line.endswith(row[-1])
        assert len(line) >= sum(len(c) for c in row) + 2 * (len(row) - 1)
