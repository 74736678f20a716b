"""`kupgrade olm`: operator catalogs (SPEC F) — validate, heads, render-graph, skiprange
and the subscription resolver."""

from __future__ import annotations

import enum
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

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
from kupgrade.olm.bundle_dir import image_from_template, is_bundle_dir
from kupgrade.olm.declcfg_write import DeclConfig, write_json, write_yaml
from kupgrade.olm.index import CatalogIndex
from kupgrade.olm.listing import (
    bundles_table,
    catalog_model,
    channels_table,
    list_bundles,
    list_channels,
    list_packages,
    packages_table,
    rows_json,
)
from kupgrade.olm.load import load_catalog
from kupgrade.olm.next_steps import one_step_findings
from kupgrade.olm.render import RenderOptions, channel_doc, draw, render_dot, render_mermaid
from kupgrade.olm.rendering import render_path
from kupgrade.olm.resolver import POLICIES, resolve_and_walk
from kupgrade.olm.resolver.model import DEFAULT_GLOBAL_NAMESPACE, Installed, Source, Subscription
from kupgrade.olm.templates import (
    BundleSource,
    parse_semver,
    read_template,
    render_basic,
    render_semver,
)
from kupgrade.olm.validate import MPackage, Validation, validate_catalog
from kupgrade.release.catalog_image import build_catalog_image, pull_catalog, push_catalog, unpack
from kupgrade.versions import go_quote, parse_blang, parse_range

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
def heads_command(
    catalog: CatalogArg,
    only: Annotated[
        str, typer.Option("--package", help="Only this package (refused when unknown).")
    ] = "",
    output: OutputOpt = Format.text,
) -> None:
    """The head of every channel (the entry nothing replaces or skips) and the
    virtual nodes: names replaced or skipped that the channel does not hold.

    JSON is {package: {channel: head}}; a channel without a unique head maps to null and
    the reason goes to stderr with exit 1.

    **Examples**

    ```
    kupgrade olm heads ./catalog
    kupgrade olm heads catalog.json -o json
    kupgrade olm heads ./catalog --package etcd
    kupgrade olm heads 127.0.0.1:5000/catalogs/community:v1
    ```
    """
    index = CatalogIndex.build(load_catalog(local_catalog(catalog)))
    if only and only not in index.packages:
        # opm's getPackages (alpha/action/list.go) for a package the catalog lacks
        raise InputError(f"package {go_quote(only)} not found", file=str(catalog))
    heads: dict[str, dict[str, str | None]] = {}
    problems = []
    for name in [only] if only else sorted(index.packages):
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


list_app = command_group(
    "List a catalog's packages, channels or bundles as `opm alpha list` prints them."
)
app.add_typer(list_app, name="list")
PackageArg = Annotated[
    str, typer.Argument(help="Only this package (refused when the catalog lacks it).")
]


def _listed_model(catalog: Path) -> dict[str, MPackage]:
    """The catalog as opm's model; a bundle directory is refused as opm refuses it."""
    if is_bundle_dir(catalog):
        raise InputError(f"cannot list non-index {go_quote(str(catalog))}")
    return catalog_model(load_catalog(local_catalog(catalog)))


def _print_rows(text: str, rows: list[Any], output: Format) -> None:
    if output.data:
        print_json(rows_json(rows))
    else:
        typer.echo(text, nl=False)


@list_app.command("packages")
@user_errors
def list_packages_command(catalog: CatalogArg, output: OutputOpt = Format.text) -> None:
    """Every package: its name, the display name of its default channel head's CSV and its
    default channel, in opm's columns (NAME, DISPLAY NAME, DEFAULT CHANNEL), by name.

    **Examples**

    ```
    kupgrade olm list packages ./catalog
    kupgrade olm list packages catalog.json -o json
    ```
    """
    rows = list_packages(_listed_model(catalog))
    _print_rows(packages_table(rows), rows, output)


@list_app.command("channels")
@user_errors
def list_channels_command(
    catalog: CatalogArg, package: PackageArg = "", output: OutputOpt = Format.text
) -> None:
    """Every channel and its head (PACKAGE, CHANNEL, HEAD), by package then channel.

    **Examples**

    ```
    kupgrade olm list channels ./catalog
    kupgrade olm list channels ./catalog etcd -o json
    ```
    """
    rows = list_channels(_listed_model(catalog), package)
    _print_rows(channels_table(rows), rows, output)


@list_app.command("bundles")
@user_errors
def list_bundles_command(
    catalog: CatalogArg, package: PackageArg = "", output: OutputOpt = Format.text
) -> None:
    """Every bundle of every channel (a bundle in several channels is listed once per
    channel): PACKAGE, CHANNEL, BUNDLE, REPLACES, SKIPS, SKIP RANGE, IMAGE.

    **Examples**

    ```
    kupgrade olm list bundles ./catalog
    kupgrade olm list bundles ./catalog etcd -o json
    ```
    """
    rows = list_bundles(_listed_model(catalog), package)
    _print_rows(bundles_table(rows), rows, output)


ImageRefTemplateOpt = Annotated[
    str,
    typer.Option(
        "--image-ref-template",
        help="A bundle directory's image, from {{.Package}}, {{.Name}} and {{.Version}} "
        "(opm's --alpha-image-ref-template); default: none.",
    ),
]


def _write_config(cfg: DeclConfig, output: Format) -> None:
    """opm's writers: a JSON stream (text and json), or YAML documents (yaml)."""
    text = write_yaml(cfg) if output is Format.yaml else write_json(cfg)
    sys.stdout.write(text)
    sys.stdout.flush()


@app.command("render")
@user_errors
def render_command(
    refs: Annotated[
        list[str],
        typer.Argument(
            metavar="REF...",
            help="File-based catalogs (directory or file), bundle directories (manifests/ "
            "and metadata/) or catalog images (HOST/REPOSITORY:TAG).",
        ),
    ],
    image_ref_template: ImageRefTemplateOpt = "",
    output: OutputOpt = Format.text,
) -> None:
    """Render catalogs and bundles to one stream of file-based catalog blobs, as
    `opm render` writes them: grouped by package, channels and bundles by name, bundle
    objects last in each bundle's properties. Text and -o json write opm's JSON stream,
    -o yaml its YAML documents.

    **Examples**

    ```
    kupgrade olm render ./catalog
    kupgrade olm render ./etcd-bundle ./catalog -o yaml
    kupgrade olm render ./etcd-bundle \\
      --image-ref-template 'quay.io/example/{{.Package}}-bundle:v{{.Version}}'
    ```
    """
    image_from_template(image_ref_template, "", "", "")  # refuse a bad template up front
    cfg = DeclConfig()
    for ref in refs:
        path = local_catalog(Path(ref))
        try:
            cfg.merge(render_path(path, image_ref_template))
        except KupgradeError as exc:
            raise InputError(f"render reference {go_quote(ref)}: {exc}") from None
    _write_config(cfg, output)


class TemplateType(enum.StrEnum):
    basic = "basic"
    semver = "semver"


@app.command("render-template")
@user_errors
def render_template_command(
    kind: Annotated[
        TemplateType, typer.Argument(metavar="TYPE", help="basic or semver (opm's types).")
    ],
    template: Annotated[Path, typer.Argument(metavar="FILE", help="The template (YAML or JSON).")],
    bundles: Annotated[
        list[Path] | None,
        typer.Option(
            "--bundles",
            help="A catalog (directory or file) of rendered olm.bundle blobs: a bundle image "
            "the template names is taken from the blob with that image. Repeatable.",
        ),
    ] = None,
    image_ref_template: ImageRefTemplateOpt = "",
    output: OutputOpt = Format.text,
) -> None:
    """Render a catalog template as `opm alpha render-template` does. basic: the entries as
    written, each {schema: olm.bundle, image} replaced by the rendered bundle. semver:
    candidate/fast/stable channels per major or minor version (generateMajorChannels,
    generateMinorChannels), linked by replaces and skips, the default channel chosen by
    defaultChannelTypePreference.

    A bundle reference is a local bundle directory, or an image whose rendered olm.bundle
    blob --bundles holds; any other image is refused (nothing is pulled). Written as
    `olm render` writes (-o yaml for YAML).

    **Examples**

    ```
    kupgrade olm render-template semver semver.yaml --bundles catalog.json
    kupgrade olm render-template basic basic.yaml --bundles ./catalog -o yaml
    kupgrade olm render-template semver semver-dirs.yaml \\
      --image-ref-template 'quay.io/example/{{.Package}}-bundle:v{{.Version}}'
    ```
    """
    image_from_template(image_ref_template, "", "", "")  # refuse a bad template up front
    source = BundleSource(image_template=image_ref_template)
    for pool in bundles or []:
        source.add_rendered(render_path(local_catalog(pool)))
    doc = read_template(template)
    basic = kind is TemplateType.basic
    cfg = (
        render_basic(doc, source.render)
        if basic
        else render_semver(parse_semver(doc), source.render)
    )
    _write_config(cfg, output)


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
    name: Annotated[
        str,
        typer.Option(
            "--name",
            help="The Subscription's own name (metadata.name), which OLM's messages name "
            "(default: the package).",
        ),
    ] = "",
    output: OutputOpt = Format.text,
) -> None:
    """What a subscription installs next, the whole walk to the channel head one CSV at a
    time, and why: the rule that picked it and every candidate passed over.

    **Examples**

    ```
    kupgrade olm resolve --source community=./catalog --package etcd --channel alpha \\
      --from-source community --installed etcdoperator.v0.9.0 --installed-version 0.9.0
    kupgrade olm resolve --source community=./catalog --package etcd --channel alpha \\
      --from-source community --name etcd-alpha --policy olm-v0
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
        name,
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
