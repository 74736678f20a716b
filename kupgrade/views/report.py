"""A rehearsal's report as people read it: how it ended and took how long, the timeline of
what took how long and what held things up, and a distributed-cloud run's status fields,
component downtime and slow drains (the report itself: each platform's report.py)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def print_report(summary: dict[str, Any], started: float, stdout: Console) -> None:
    """How the run ended and its timeline; a distributed-cloud run's own sections."""
    stdout.print(
        f"{summary['outcome']}: {summary['simulatedSeconds'] / 60:.1f} simulated minutes "
        f"in {summary['wallSeconds']:.2f}s ({summary['steps']} steps)",
        highlight=False,
    )
    table = Table("WHAT", "FROM", "TOOK", "NOTE", box=None)
    for row in summary["timeline"]:
        end = row["to"]
        took = (
            f"{(end - row['from']) / 60:.1f} min" if end is not None and end > row["from"] else ""
        )
        table.add_row(
            row["object"], f"+{(row['from'] - started) / 60:.1f} min", took, row.get("note", "")
        )
    stdout.print(table)
    if "downtime" in summary:
        print_gdc_sections(summary, started, stdout)


def print_gdc_sections(summary: dict[str, Any], started: float, stdout: Console) -> None:
    """Distributed cloud: status fields as filled, downtime vs the seed's table, drains."""
    fields = Table("STATUS FIELD", "FILLED AT", "VALUE", box=None)
    for row in summary["statusFields"]:
        fields.add_row(row["field"], f"+{(row['at'] - started) / 60:.1f} min", row["value"])
    stdout.print(fields)
    down = Table("COMPONENT", "DOWN", "EXPECTED", "WHEN", box=None)
    for row in summary["downtime"]:
        mark = "" if row["within"] is not False else ", more than expected"
        down.add_row(
            row["component"],
            f"{row['measuredMinutes']:.1f} min{mark}",
            row["expected"],
            row["when"],
        )
    stdout.print(down)
    if summary["drains"]:
        slow = Table("SLOW DRAIN", "TOOK", "WHY", box=None)
        for row in summary["drains"]:
            took = "still draining" if row["minutes"] is None else f"{row['minutes']:.1f} min"
            slow.add_row(row["node"], took, "; ".join(row["why"]))
        stdout.print(slow)
