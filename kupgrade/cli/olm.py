"""`kupgrade olm`: operator catalogs (SPEC F) — validate, heads, render-graph, skiprange
and the subscription resolver."""

from __future__ import annotations

import enum
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from kupgrade.cli.output import (
    Format,
    OutputOpt,
    command_group,
    print_json,
    stderr,
    stdout,
    user_errors,
)
from kupgrade.errors import InputError, KupgradeError, VersionError
from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.load import load_catalog
from kupgrade.olm.next_steps import one_step_findings
from kupgrade.olm.render import RenderOptions, channel_doc, draw, render_dot, render_mermaid
from kupgrade.olm.resolver import POLICIES, resolve_and_walk
from kupgrade.olm.resolver.model import DEFAULT_GLOBAL_NAMESPACE, Installed, Source, Subscription
from kupgrade.olm.validate import Validation, validate_catalog
from kupgrade.release.catalog_image import build_catalog_image, pull_catalog, push_catalog, unpack
from kupgrade.versions import parse_blang, parse_range

app = command_group("Operator catalogs and subscriptions.")

CatalogArg = Annotated[
    Path,
    typer.Argument(
        help="A file-based catalog (file or directory), a package-manifests directory, or a "
        "catalog image (HOST/REPOSITORY:TAG or @sha256:DIGEST)."
    ),
]
# Catalog images pulled by this command, unpacked for as long as it runs.
_PULLED: list[tempfile.TemporaryDirectory[str]] = []


def local_catalog(where: Path) -> Path:
    """A catalog on disk: the path itself, or a catalog image pulled and unpacked (every
    blob checked against its digest)."""
    text = str(where)
    if where.exists() or "/" not in text or not (":" in text or "@" in text):
        return where
    if not _PULLED:
        _PULLED.append(tempfile.TemporaryDirectory(prefix="kupgrade-catalog-"))
    return unpack(pull_catalog(text), Path(_PULLED[0].name))


@app.command("push")
@user_errors
def push_command(
    catalog: Annotated[Path, typer.Argument(help="A file-based catalog (file or directory).")],
    image: Annotated[str, typer.Argument(help="Where to push it: HOST/REPOSITORY:TAG.")],
    output: OutputOpt = Format.text,
) -> None:
    """Build a catalog image of a file-based catalog (under /configs, as opm builds them)
    and push it to a registry; print its pull spec by digest.

    **Examples**

    ```
    kupgrade olm push ./catalog 127.0.0.1:5000/catalogs/community:v1
    kupgrade olm push catalog.json 127.0.0.1:5000/catalogs/etcd:latest -o json
    ```
    """
    spec = push_catalog(build_catalog_image(catalog), image)
    if output.data:
        print_json({"pullSpec": spec})
    else:
        stdout.print(spec, highlight=False, markup=False)


class GraphFormat(enum.StrEnum):
    mermaid = "mermaid"
    dot = "dot"


@app.command("validate")
@user_errors
def validate_command(catalog: CatalogArg, output: OutputOpt = Format.text) -> None:
    """Validate a catalog as `opm validate` does, with opm's messages; also check that every
    installed bundle has exactly one next step (reported as warnings).

    Exit 0 when valid, 1 when not (the message is opm's; the file and blob follow).

    **Examples**

    ```
    kupgrade olm validate ./catalog
    kupgrade olm validate catalog.json -o json
    ```
    """
    try:
        loaded = load_catalog(local_catalog(catalog))
    except InputError as exc:
        result = Validation(False, "load", str(exc), [[str(exc)]])
    else:
        result = validate_catalog(loaded)
        if result.valid:
            result.warnings.extend(f.message for f in one_step_findings(CatalogIndex.build(loaded)))
    if output.data:
        print_json(result.to_json())
    elif result.valid:
        channels = sum(len(c) for c in result.heads.values())
        stdout.print(
            f"{catalog}: valid ({len(result.heads)} packages, {channels} channels)", highlight=False
        )
    else:
        stderr.print(result.error or "", highlight=False, markup=False)
        if result.where:
            stderr.print(f"  at {result.where}", highlight=False, markup=False)
    for warning in result.warnings if output is Format.text else ():
        stderr.print(f"warning: {warning}", highlight=False, markup=False)
    if not result.valid:
        raise typer.Exit(1)


@app.command("heads")
@user_errors
def heads_command(catalog: CatalogArg, output: OutputOpt = Format.text) -> None:
    """The head of every channel (the entry nothing replaces or skips) and the
    virtual nodes: names replaced or skipped that the channel does not hold.

    JSON is {package: {channel: head}}; a channel without a unique head maps to null and
    the reason goes to stderr with exit 1.

    **Examples**

    ```
    kupgrade olm heads ./catalog
    kupgrade olm heads catalog.json -o json
    kupgrade olm heads 127.0.0.1:5000/catalogs/community:v1
    ```
    """
    index = CatalogIndex.build(load_catalog(local_catalog(catalog)))
    heads: dict[str, dict[str, str | None]] = {}
    problems = []
    for name in sorted(index.packages):
        package = index.packages[name]
        heads[name] = {}
        for channel in sorted(package.channels.values(), key=lambda c: c.name):
            heads[name][channel.name] = channel.head
            if channel.head is None:
                problems.append(f"package {name!r}, channel {channel.name!r}: {channel.head_error}")
            elif output is Format.text:
                virtual = f"  (virtual: {', '.join(channel.virtual)})" if channel.virtual else ""
                stdout.print(
                    f"{name}  {channel.name}  {channel.head}{virtual}",
                    highlight=False,
                    markup=False,
                )
    if output.data:
        print_json(heads)
    for problem in problems:
        stderr.print(f"error: {problem}", highlight=False, markup=False)
    if problems:
        raise typer.Exit(1)


@app.command("render-graph")
@user_errors
def render_graph_command(
    catalog: CatalogArg,
    package: Annotated[str, typer.Option("--package", help="Only this package.")] = "",
    fmt: Annotated[
        GraphFormat, typer.Option("--format", help="mermaid (opm's text) or dot.")
    ] = GraphFormat.mermaid,
    minimum_edge: Annotated[
        str,
        typer.Option("--minimum-edge", help="Drop edges below this bundle (opm's --minimum-edge)."),
    ] = "",
    v0: Annotated[
        bool,
        typer.Option(
            "--draw-v0-semantics/--no-draw-v0-semantics",
            help="Mark skipped bundles and edges into them (opm's flag).",
        ),
    ] = False,
    output: OutputOpt = Format.text,
) -> None:
    """Draw the channel graphs: the same mermaid text as `opm alpha render-graph`, or dot;
    with -o json or yaml, the channels' bundles and edges as data.

    **Examples**

    ```
    kupgrade olm render-graph ./catalog --package etcd
    kupgrade olm render-graph catalog.json --format dot | dot -Tsvg > graph.svg
    kupgrade olm render-graph ./catalog --package etcd -o json
    ```
    """
    loaded = load_catalog(local_catalog(catalog))
    options = RenderOptions(package, minimum_edge, v0)
    if package and not any(c.package == package for c in loaded.channels):
        raise InputError(
            f"package {package!r} has no channels in the catalog",
            file=str(catalog),
            field="--package",
        )

    def warn(warning: str) -> None:
        stderr.print(warning, highlight=False, markup=False)

    if output.data:
        print_json({"channels": [channel_doc(c) for c in draw(loaded, options, warn)]})
        return
    render = render_mermaid if fmt is GraphFormat.mermaid else render_dot
    typer.echo(render(loaded, options, warn), nl=False)


@app.command("skiprange")
@user_errors
def skiprange_command(
    range_text: Annotated[
        str, typer.Argument(metavar="RANGE", help="A blang/semver range, e.g. '>=4.1.0 <4.1.2'.")
    ],
    version: Annotated[str, typer.Argument(help="A strict SemVer version.")],
    output: OutputOpt = Format.text,
) -> None:
    """Does olm.skipRange RANGE contain VERSION? Prints true or false (blang/semver's
    grammar exactly: space is AND, || is OR). Exit 2 with the library's parse error.

    **Examples**

    ```
    kupgrade olm skiprange '>=4.1.0 <4.1.2' 4.1.1
    kupgrade olm skiprange '1.2.x || >=2.0.0 !2.0.3' 1.2.9 -o json
    ```
    """
    try:
        parsed = parse_range(range_text)
        contained = parse_blang(version) in parsed
    except VersionError as exc:
        if output.data:
            print_json({"range": range_text, "version": version, "error": exc.message})
        stderr.print(exc.message, highlight=False, markup=False)
        raise typer.Exit(2) from None
    if output.data:
        print_json({"range": range_text, "version": version, "contains": contained})
    else:
        typer.echo("true" if contained else "false")


def parse_source(text: str) -> tuple[str, Path, str, int]:
    """NAME=CATALOG[,namespace=NS][,priority=N]."""
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest:
        raise InputError(
            f"{text!r} is not NAME=CATALOG[,namespace=NS][,priority=N]", field="--source"
        )
    path, *options = rest.split(",")
    namespace, priority = DEFAULT_GLOBAL_NAMESPACE, 0
    for option in options:
        key, sep, value = option.partition("=")
        if key == "namespace" and sep and value:
            namespace = value
        elif key == "priority" and sep:
            try:
                priority = int(value)
            except ValueError:
                raise InputError(
                    f"priority {value!r} is not an integer", field="--source"
                ) from None
        else:
            raise InputError(
                f"unknown source option {option!r} (namespace=NS or priority=N)", field="--source"
            )
    return name, Path(path), namespace, priority


@app.command("resolve")
@user_errors
def resolve_command(
    source: Annotated[
        list[str],
        typer.Option(
            "--source", help="NAME=CATALOG[,namespace=NS][,priority=N]; repeat for several."
        ),
    ],
    package: Annotated[str, typer.Option("--package", help="The subscribed package.")],
    from_source: Annotated[
        str,
        typer.Option(
            "--from-source",
            help="The subscription's own source: a --source NAME, or NAMESPACE/NAME when "
            "sources of that name live in several namespaces (spec.sourceNamespace).",
        ),
    ],
    channel: Annotated[
        str, typer.Option("--channel", help="The subscribed channel (empty: the default channel).")
    ] = "",
    installed: Annotated[str, typer.Option("--installed", help="The installed CSV's name.")] = "",
    installed_version: Annotated[
        str, typer.Option("--installed-version", help="The installed CSV's version.")
    ] = "",
    starting_csv: Annotated[
        str, typer.Option("--starting-csv", help="What a new subscription installs first.")
    ] = "",
    policy: Annotated[
        str,
        typer.Option(
            "--policy",
            help="documented (OLM's documented rule, the default), olm-v0 (today's OLM), "
            "semver (OLM v1).",
        ),
    ] = "documented",
    approval: Annotated[
        str, typer.Option("--approval", help="Automatic or Manual install plans.")
    ] = "Automatic",
    namespace: Annotated[
        str,
        typer.Option("--namespace", help="The subscription's namespace (default: its source's)."),
    ] = "",
    global_namespace: Annotated[
        str, typer.Option("--global-namespace", help="The global catalog namespace.")
    ] = DEFAULT_GLOBAL_NAMESPACE,
    output: OutputOpt = Format.text,
) -> None:
    """What a subscription installs next, the whole walk to the channel head one CSV at a
    time, and why: the rule that picked it and every candidate passed over.

    **Examples**

    ```
    kupgrade olm resolve --source community=./catalog --package etcd --channel alpha \\
      --from-source community --installed etcdoperator.v0.9.0 --installed-version 0.9.0
    kupgrade olm resolve --source a=cat-a,priority=10 --source b=cat-b,namespace=operators \\
      --package app --channel stable --from-source b --policy semver -o json
    ```
    """
    if policy not in POLICIES:
        raise InputError(
            f"unknown policy {policy!r} (one of {', '.join(POLICIES)})", field="--policy"
        )
    if approval not in ("Automatic", "Manual"):
        raise InputError("approval must be Automatic or Manual", field="--approval")
    if bool(installed) != bool(installed_version):
        raise InputError("give --installed and --installed-version together", field="--installed")
    sources = _sources(source)
    wanted_namespace, _, from_name = from_source.rpartition("/")
    own = next(
        (s for s in sources if s.name == from_name and wanted_namespace in ("", s.namespace)),
        None,
    )
    own_namespace = wanted_namespace or (own.namespace if own else DEFAULT_GLOBAL_NAMESPACE)
    sub = Subscription(
        package,
        channel,
        from_name,
        own_namespace,
        namespace or own_namespace,
        approval,
        starting_csv,
    )
    current = Installed(installed, parse_blang(installed_version)) if installed else None
    outcome = resolve_and_walk(sources, sub, current, policy, global_namespace)
    doc = outcome.to_json(approval)
    if output.data:
        print_json(doc)
    else:
        _print_resolution(doc)
    if outcome.error is not None:
        raise typer.Exit(1)


def _sources(specs: list[str]) -> list[Source]:
    sources: list[Source] = []
    indexes: dict[Path, CatalogIndex] = {}
    for spec in specs:
        name, path, namespace, priority = parse_source(spec)
        if any(s.name == name and s.namespace == namespace for s in sources):
            raise InputError(f"source {namespace}/{name} is given twice", field="--source")
        if path not in indexes:
            indexes[path] = CatalogIndex.build(load_catalog(local_catalog(path)))
        sources.append(Source(name, namespace, priority, indexes[path]))
    return sources


def _print_resolution(doc: dict[str, object]) -> None:
    if doc.get("error"):
        raise KupgradeError(str(doc["error"]), rule=str(doc.get("error_class")))
    if doc["next"]:
        stdout.print(
            f"next: {doc['next']} from {doc['source']} ({doc['state']})",
            highlight=False,
            markup=False,
        )
        stdout.print(f"walk: {' -> '.join(doc['walk'])}", highlight=False, markup=False)  # type: ignore[arg-type]
    else:
        stdout.print(f"next: none ({doc['state']})", highlight=False, markup=False)
    stdout.print(f"why: {doc['reason']}", highlight=False, markup=False)
    for item in doc.get("considered") or []:  # type: ignore[attr-defined]
        mark = "taken" if item["taken"] else "passed"
        stdout.print(
            f"  {mark}: {item['candidate'] or '-'} in {item['source']} ({item['rule']}): {item['why']}",
            highlight=False,
            markup=False,
        )
    if doc.get("walk_error"):
        stderr.print(f"warning: {doc['walk_error']}", highlight=False, markup=False)
