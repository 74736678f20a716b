"""`kupgrade graph …`: build, filter, lint and compare update graphs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kupgrade import intake
from kupgrade.cli.output import (
    Format,
    OutputOpt,
    atomic_write,
    command_group,
    print_json,
    progress,
    stderr,
    stdout,
    user_errors,
    write_stdout_bytes,
)
from kupgrade.errors import InputError
from kupgrade.graph.builder import build_graph
from kupgrade.graph.codec import (
    decode_graph,
    decode_json,
    encode_graph,
    encode_json,
    graph_from_doc,
)
from kupgrade.graph.compare import compare_cincinnati, compare_strict
from kupgrade.graph.graphdata import load_graph_data
from kupgrade.graph.lint import lint_tree
from kupgrade.graph.policy import DEFAULT_ARCH, PolicyError, PolicyView
from kupgrade.graph.releases import load_releases
from kupgrade.graph.summary import GraphSummary, summarize
from kupgrade.graph.tree import open_tree

app = command_group("Build, filter, lint and compare Cincinnati update graphs.")

ReleasesOpt = Annotated[
    Path,
    typer.Option(
        "--releases",
        exists=True,
        help="Raw graph JSON as the registry scrape produces it, or a directory of release-metadata documents.",
    ),
]
GraphDataOpt = Annotated[
    Path,
    typer.Option(
        "--graph-data",
        exists=True,
        help="graph-data directory or .tar.gz (channels, blocked-edges, raw).",
    ),
]


def summary_table(summary: GraphSummary, title: str) -> Table:
    table = Table(title=title, show_header=True, header_style="bold")
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("nodes", str(summary.nodes))
    if summary.abstract_nodes:
        table.add_row("  abstract nodes", str(summary.abstract_nodes))
    table.add_row("edges", str(summary.edges))
    table.add_row("conditional edges", str(summary.conditional_edges))
    table.add_row("risks", str(len(summary.risks)))
    if summary.channels:
        table.add_row("channels", str(len(summary.channels)))
    if summary.arches:
        table.add_row("architectures", ", ".join(summary.arches))
    return table


def risk_table(summary: GraphSummary) -> Table:
    table = Table(title="Risks on conditional edges", header_style="bold")
    for column in ("RISK", "EDGES", "RULES", "URL"):
        table.add_column(column, justify="right" if column == "EDGES" else "left")
    for risk in summary.risks:
        table.add_row(risk.name, str(risk.edges), ", ".join(risk.rules), risk.url)
    return table


@app.command("build")
@user_errors
def build_command(
    releases: ReleasesOpt,
    graph_data: GraphDataOpt,
    out: Annotated[
        Path, typer.Option("-o", "--out", help="Where to write the graph JSON ('-' for stdout).")
    ],
) -> None:
    """Build the update graph the way Cincinnati's graph-builder does.

    Applies graph-data to the raw graph: raw metadata, blocked edges, conditional edges
    with their risks, channels, then the edge add/remove step. The output is canonical
    (same input, same bytes); graph-data files the builder had to skip are listed on stderr.

    **Examples**

    ```
    kupgrade graph build --releases raw.json --graph-data cincinnati-graph-data -o graph.json
    kupgrade graph build --releases releases/ --graph-data graph-data.tar.gz -o - | jq .nodes[0]
    ```
    """
    with progress("building", 4) as step:
        step("reading releases")
        raw = load_releases(releases)
        step("reading graph-data")
        data = load_graph_data(open_tree(graph_data))
        step("applying graph-data")
        graph = build_graph(raw, data)
        step("writing")
        body = encode_graph(graph) + b"\n"
        if str(out) == "-":
            write_stdout_bytes(body)
        else:
            atomic_write(out, body)
    for skipped in data.skipped:
        stderr.print(
            f"[yellow]warning:[/] graph-data {skipped.path} skipped: {skipped.reason}",
            highlight=False,
        )
    stderr.print(
        f"built {len(graph.nodes)} nodes, {graph.edge_count} edges, {len(graph.conditional)} conditional edges"
        + (f" -> {out}" if str(out) != "-" else ""),
        highlight=False,
    )


@app.command("filter")
@user_errors
def filter_command(
    graph: Annotated[
        Path,
        typer.Option(
            "--graph", exists=True, dir_okay=False, help="A graph built by `graph build`."
        ),
    ],
    channel: Annotated[str, typer.Option("--channel", help="Channel to keep, e.g. stable-4.14.")],
    arch: Annotated[str, typer.Option("--arch", help="Architecture to keep.")] = DEFAULT_ARCH,
    output: OutputOpt = Format.json,
) -> None:
    """Apply the policy-engine's channel and arch filters, as the update service does.

    Prints `{"version": 1, "nodes", "edges", "conditionalEdges"}`; versions lose their
    +arch suffix. An unknown but well-formed channel gives an empty graph.

    **Examples**

    ```
    kupgrade graph filter --graph graph.json --channel stable-4.14
    kupgrade graph filter --graph graph.json --channel candidate-4.15 --arch multi -o text
    ```
    """
    full = decode_graph(_read(graph), str(graph))
    try:
        doc = PolicyView(full).filter(channel, arch)
    except PolicyError as exc:
        raise InputError(exc.value, field=f"--{exc.param}" if exc.param else None) from None
    if output.data:
        write_stdout_bytes(encode_json(doc) + b"\n")
        return
    summary = summarize(doc)
    stdout.print(summary_table(summary, f"{channel} ({arch})"))
    if summary.risks:
        stdout.print(risk_table(summary))


@app.command("lint")
@user_errors
def lint_command(
    directory: Annotated[
        Path, typer.Argument(exists=True, help="graph-data directory or .tar.gz.")
    ],
    output: OutputOpt = Format.text,
) -> None:
    """Report every problem of a graph-data tree: file, field and reason, one per line.

    Exit 0 when clean, 1 when there are problems. Checks what makes the graph builder skip
    a file (bad YAML, wrong shape, a regex outside RE2) and what it accepts but you rarely
    mean (unknown keys, YAML numbers for versions, risk names, non-https urls, duplicate
    rule types, `Always` with extra keys, risks sharing a name but not a definition,
    file names that do not start with their `to` version).

    **Examples**

    ```
    kupgrade graph lint cincinnati-graph-data
    kupgrade graph lint graph-data.tar.gz -o json | jq '.[] | .file'
    ```
    """
    problems = lint_tree(open_tree(directory))
    if output.data:
        print_json([p.to_json() for p in problems])
    else:
        for problem in problems:
            stdout.print(str(problem), highlight=False, markup=False)
        stderr.print(f"{len(problems)} problem(s)" if problems else "clean", highlight=False)
    if problems:
        raise typer.Exit(1)


@app.command("diff")
@user_errors
def diff_command(
    expected: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="Reference graph JSON.")
    ],
    actual: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="Graph JSON to check.")
    ],
    cincinnati: Annotated[
        bool,
        typer.Option(
            "--cincinnati", help="Cincinnati's own rule only (ignores conditional edges)."
        ),
    ] = False,
    output: OutputOpt = Format.text,
) -> None:
    """Compare two graphs regardless of order; exit 1 when they differ.

    Nodes compare as a multiset, edges by version, conditional edges by (from, to, risk
    names), and each risk's definition; the order-dependent remove keys are ignored.

    **Examples**

    ```
    kupgrade graph diff expected.json graph.json
    kupgrade graph diff a.json b.json --cincinnati -o json
    ```
    """
    want, got = (_read_json(p) for p in (expected, actual))
    problems = compare_cincinnati(want, got) if cincinnati else compare_strict(want, got)
    if output.data:
        print_json({"equal": not problems, "differences": problems})
    else:
        for problem in problems:
            stdout.print(problem, highlight=False, markup=False)
        stderr.print("equal" if not problems else f"{len(problems)} difference(s)", highlight=False)
    if problems:
        raise typer.Exit(1)


def _read(path: Path) -> bytes:
    return intake.read_file(path)


def _read_json(path: Path) -> dict[str, Any]:
    doc = decode_json(_read(path), str(path))
    graph_from_doc(doc, str(path))  # a clear error now rather than a KeyError later
    assert isinstance(doc, dict)
    return doc
