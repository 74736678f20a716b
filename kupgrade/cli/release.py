"""`kupgrade release …`: build, inspect, move, verify and order release payloads."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kupgrade import __version__
from kupgrade.cli.output import (
    OUTPUT_HELP,
    Format,
    OutputOpt,
    atomic_write,
    command_group,
    print_json,
    progress,
    stderr,
    stdout,
    user_errors,
)
from kupgrade.errors import InputError
from kupgrade.release.assemble import (
    PINNED,
    ReleaseSpec,
    describe,
    given_release_files,
    merged_spec,
    payload_files,
    read_manifest_dir,
    task_of,
)
from kupgrade.release.inclusion import (
    CLUSTER_DEFAULTS,
    DEFAULT_PROFILE,
    Capabilities,
    Options,
)
from kupgrade.release.listing import manifests_json
from kupgrade.release.oci import (
    PAYLOAD_DIRS,
    build_image,
    layout_files,
    layout_tar,
    open_image,
    read_tree,
)
from kupgrade.release.payload import LoadOptions, PayloadFiles, load_payload
from kupgrade.release.registry import Reference, RegistryClient
from kupgrade.release.sources import Opened, open_payload, open_source, pull_spec, write_tree
from kupgrade.release.staged import TreeWriter
from kupgrade.release.taskgraph import MODES, Mode, build_graph, workers
from kupgrade.release.verify import (
    VALID_DIGEST,
    Keyring,
    ReleaseVerifier,
    SerialStore,
    VerificationError,
    next_signature_path,
    sign,
    store_for,
)

app = command_group("Release payloads: build, inspect, extract, push, sign, verify, order.")

PlainHttpOpt = Annotated[
    bool,
    typer.Option(
        "--plain-http", help="Talk HTTP, not HTTPS, to the registry (loopback always does)."
    ),
]
RefArg = Annotated[
    str,
    typer.Argument(
        metavar="REF", help="OCI layout directory, its tar, or registry/repository@sha256:<hex>."
    ),
]


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"{item!r} must be KEY=VALUE", field=flag)
        if key in out:
            raise InputError(f"{key} is given twice", field=flag)
        out[key] = value
    return out


def _list(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


def _destination(to_file: Path | None, to_dir: Path | None, out: Path | None) -> Path:
    """Exactly one of --to-file, --to-dir and --out (which picks by a .tar suffix)."""
    given = [p for p in (to_file, to_dir, out) if p is not None]
    if len(given) != 1:
        raise InputError(
            "give one of --to-file, --to-dir or --out",
            field="--to-file",
            hint="--to-file release.tar, or --to-dir ./layout",
        )
    if to_file is not None and to_file.suffix != ".tar":
        raise InputError("the file name must end in .tar", field="--to-file")
    return given[0]


@user_errors
def new_command(
    manifests: Annotated[Path, typer.Option("--manifests", help="Directory of manifests.")],
    version: Annotated[str, typer.Option("--version", help="The release version (SemVer).")],
    to_file: Annotated[
        Path | None,
        typer.Option("--to-file", help="Write the image as an OCI layout tar (oc's flag)."),
    ] = None,
    to_dir: Annotated[
        Path | None,
        typer.Option("--to-dir", help="Write the image as an OCI layout in a new directory."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="OUT.tar or a new directory (--to-file or --to-dir)."),
    ] = None,
    previous: Annotated[
        str | None, typer.Option("--previous", help="Versions that update to this one, A,B.")
    ] = None,
    following: Annotated[
        str | None, typer.Option("--next", help="Versions this one updates to, C,D.")
    ] = None,
    metadata: Annotated[
        list[str] | None, typer.Option("--metadata", help="Release metadata KEY=VALUE.")
    ] = None,
    image: Annotated[
        list[str] | None, typer.Option("--image", help="Component image NAME=PULLSPEC@sha256:….")
    ] = None,
    arch: Annotated[str, typer.Option("--arch", help="Image architecture.")] = "amd64",
    output: Annotated[Format, typer.Option("-o", "--output", help=OUTPUT_HELP)] = Format.text,
) -> None:
    """Build a release image from a directory of manifests; print its digest.

    Top-level files of --manifests go to release-manifests/; its manifests/ and
    release-manifests/ subdirectories keep their place. A release-metadata or
    image-references file of the directory is kept: the flags add to it and win where
    they say the same thing, and a version that disagrees with --version is refused. The payload is loaded as a
    cluster would before anything is written, so a broken manifest is refused here.
    The same inputs always give the same digest.

    **Examples**

    ```
    kupgrade release new --manifests ./payload --version 4.16.3 --previous 4.16.2,4.15.20 \\
        --metadata url=https://example.com/errata/4.16.3 \\
        --image cli=quay.io/acme/cli@sha256:<64 hex> --to-file release-4.16.3.tar
    kupgrade release new --manifests ./payload --version 4.16.3 --to-dir ./layout -o json
    ```
    """
    target = _destination(to_file, to_dir, out)
    spec = ReleaseSpec(
        version,
        _list(previous),
        _list(following),
        _pairs(metadata or [], "--metadata"),
        _pairs(image or [], "--image"),
    )
    spec = merged_spec(spec, given_release_files(manifests))
    files = payload_files(read_manifest_dir(manifests), spec)
    payload = load_payload(PayloadFiles(files, origin=str(manifests)))
    built = build_image(files, version, arch)
    layout = layout_files(built)
    if target.suffix == ".tar" and to_dir is None:
        atomic_write(target, layout_tar(layout))
    else:
        write_tree(target, layout)
    if output.data:
        print_json(
            {
                "digest": built.digest,
                "version": version,
                "out": str(target),
                "manifests": payload.total,
            }
        )
    else:
        stdout.print(built.digest, highlight=False)


def _opened(ref: str, plain_http: bool) -> Opened:
    with progress("reading release", 1) as step:
        step(ref)
        return open_payload(ref, plain_http=plain_http)


@user_errors
def info_command(
    ref: RefArg, plain_http: PlainHttpOpt = False, output: OutputOpt = Format.text
) -> None:
    """Version, digest, previous/next, metadata, manifest counts and versionHash.

    **Examples**

    ```
    kupgrade release info release-4.16.3.tar
    kupgrade release info 127.0.0.1:5000/ocp/release@sha256:<64 hex> -o json
    ```
    """
    opened = _opened(ref, plain_http)
    payload = load_payload(opened.files, LoadOptions(opened.pull_spec or ""))
    doc = describe(payload, opened.files, opened.identity())
    if output.data:
        print_json(doc)
        return
    for key in (
        "version",
        "digest",
        "pullSpec",
        "previous",
        "next",
        "channels",
        "architecture",
        "images",
        "versionHash",
    ):
        if key in doc:
            value = doc[key]
            stdout.print(
                f"{key}: {', '.join(value) if isinstance(value, list) else value}", highlight=False
            )
    for key, value in sorted(doc["metadata"].items()):
        stdout.print(f"metadata.{key}: {value}", highlight=False)
    counts = doc["manifests"]
    stdout.print(
        f"manifests: {counts['included']} included, {counts['excluded']} excluded", highlight=False
    )
    table = Table(header_style="bold")
    table.add_column("RUNLEVEL")
    table.add_column("MANIFESTS", justify="right")
    for runlevel, count in counts["by_runlevel"].items():
        table.add_row(runlevel, str(count))
    stdout.print(table)


@user_errors
def extract_command(
    ref: RefArg,
    to: Annotated[Path, typer.Option("--to", help="A new (or empty) directory to write into.")],
    plain_http: PlainHttpOpt = False,
    output: OutputOpt = Format.text,
) -> None:
    """Write release-manifests/ and manifests/ of an image, checking every blob first.

    The image is untrusted: every blob must match its digest, entries that would land
    outside the target (absolute, .., links pointing out, devices) are refused, and sizes
    are bounded. Nothing is written unless everything passes.

    **Examples**

    ```
    kupgrade release extract release-4.16.3.tar --to ./payload-4.16.3
    kupgrade release extract 127.0.0.1:5000/ocp/release@sha256:<64 hex> --to ./p -o json
    ```
    """
    source = open_source(ref, plain_http=plain_http)
    with progress("extracting", 3) as step:
        step("manifest")
        image = open_image(source)
        step("layers")
        # Files are written as the layers are read, into a directory renamed into place
        # only once every check passed (SPEC B2): nothing is written otherwise.
        with TreeWriter(to, PAYLOAD_DIRS) as out:
            tree = read_tree(image, sink=out)
            step("writing")
    if output.data:
        print_json(
            {"digest": image.digest, "to": str(to), "files": len(tree.files), "bytes": tree.total}
        )
    else:
        stdout.print(
            f"extracted {len(tree.files)} files ({tree.total} bytes) of {image.digest} to {to}",
            highlight=False,
        )


@user_errors
def push_command(
    ref: RefArg,
    destination: Annotated[
        str, typer.Argument(metavar="REGISTRY/REPO[:TAG]", help="Where to push.")
    ],
    plain_http: PlainHttpOpt = False,
    output: OutputOpt = Format.text,
) -> None:
    """Push an image to an OCI registry; print the pull spec by digest.

    **Examples**

    ```
    kupgrade release push release-4.16.3.tar 127.0.0.1:5000/ocp/release:4.16.3
    kupgrade release push ./layout registry.example.com/acme/release -o json
    ```
    """
    target = Reference.parse(destination)
    if target is None or target.digest:
        raise InputError(f"{destination!r} is not registry/repository[:tag]", field="REGISTRY/REPO")
    source = open_source(ref, plain_http=plain_http)
    image = open_image(source)
    registry = RegistryClient(target.registry, plain_http=plain_http)
    descriptors = [*image.layers, image.config_descriptor]
    with progress("pushing", len(descriptors) + 1) as step:
        for descriptor in descriptors:
            step(descriptor.digest[:19])
            registry.push_blob(target.repository, source.blob(descriptor))
        step("manifest")
        digest = registry.push_manifest(
            target.repository, target.tag or image.digest, image.raw_manifest, image.media_type
        )
    pinned = target.pinned(digest)
    if output.data:
        print_json({"digest": digest, "pullSpec": pinned, "tag": target.tag})
    else:
        stdout.print(pinned, highlight=False)


def _inclusion(
    exclude: str | None,
    profile: str,
    feature_set: str,
    feature_gates: str | None,
    capabilities: str | None,
) -> Options:
    caps = None
    if capabilities is not None:
        enabled = _list(capabilities)
        caps = Capabilities(enabled, enabled)
    return Options(
        exclude=exclude,
        required_feature_set="" if feature_set == "Default" else feature_set,
        profile=profile,
        capabilities=caps,
        enabled_feature_gates=frozenset(_list(feature_gates)),
        allow_unknown_capabilities=capabilities is not None,
    )


@user_errors
def manifests_command(
    directory: Annotated[
        str, typer.Argument(metavar="DIR", help="Extracted payload (or any REF).")
    ],
    exclude: Annotated[
        str | None, typer.Option("--exclude", help="The cluster's exclude id.")
    ] = None,
    profile: Annotated[str, typer.Option("--profile", help="Cluster profile.")] = DEFAULT_PROFILE,
    feature_set: Annotated[
        str, typer.Option("--feature-set", help="Cluster feature set.")
    ] = "Default",
    feature_gates: Annotated[
        str | None, typer.Option("--feature-gates", help="Enabled feature gates A,B.")
    ] = None,
    capabilities: Annotated[
        str | None,
        typer.Option("--capabilities", help="Enabled capabilities A,B (others are left out)."),
    ] = None,
    release_image: Annotated[
        str, typer.Option("--release-image", help="Pull spec for templates.")
    ] = "",
    raw: Annotated[
        bool, typer.Option("--raw", help="Include the hashed bytes of each manifest.")
    ] = False,
    plain_http: PlainHttpOpt = False,
    output: OutputOpt = Format.text,
) -> None:
    """Load a payload as a cluster would: what is applied, what is left out and why.

    Manifests are read from manifests/ then release-manifests/, in file-name order; the
    inclusion annotations are checked in the version controller's order. Without
    --capabilities the capability filter is off and versionHash equals the controller's.

    **Examples**

    ```
    kupgrade release manifests ./payload-4.16.3 -o json
    kupgrade release manifests ./payload --profile single-node-developer --exclude hypershift
    kupgrade release manifests ./payload --feature-set TechPreviewNoUpgrade \\
        --capabilities Console,Insights
    ```
    """
    opened = _opened(directory, plain_http)
    options = LoadOptions(
        release_image or opened.pull_spec or "",
        _inclusion(exclude, profile, feature_set, feature_gates, capabilities),
    )
    doc = manifests_json(load_payload(opened.files, options), raw)
    if output.data:
        print_json(doc)
        return
    table = Table(header_style="bold")
    for column in ("#", "FILE", "KIND", "NAMESPACE/NAME", "ACTION"):
        table.add_column(column)
    for row in doc["included"]:
        name = f"{row['namespace']}/{row['name']}" if row["namespace"] else row["name"]
        table.add_row(str(row["index"]), row["file"], row["kind"], name, row["action"])
    stdout.print(table)
    for row in doc["excluded"]:
        stdout.print(
            f"excluded {row['file']} {row['kind']}/{row['name']}: {row['reason']}",
            highlight=False,
            markup=False,
        )
    for row in doc["skipped_files"]:
        stdout.print(
            f"skipped {row['file']}: {row['reason']} ({row['detail']})",
            highlight=False,
            markup=False,
        )
    stdout.print(f"{doc['total']} manifests, versionHash {doc['versionHash']}", highlight=False)


@user_errors
def graph_command(
    ref: Annotated[str, typer.Argument(metavar="DIR|REF", help="Extracted payload or image REF.")],
    mode: Annotated[str, typer.Option("--mode", help="update, install or reconcile.")] = "update",
    attempt: Annotated[
        int, typer.Option("--attempt", min=0, help="Reconcile attempt (rotates the order).")
    ] = 0,
    plain_http: PlainHttpOpt = False,
    output: OutputOpt = Format.text,
) -> None:
    """The task graph the version controller runs, node by node.

    Node indexes are the controller's own. Text output lists the steps: every node of a
    step may run in parallel; a step starts when the one before it has finished.

    **Examples**

    ```
    kupgrade release graph ./payload-4.16.3 --mode update
    kupgrade release graph release-4.16.3.tar --mode reconcile --attempt 3 -o json
    ```
    """
    if mode not in MODES:
        raise InputError(f"{mode!r} is not one of {', '.join(MODES)}", field="--mode")
    run_mode: Mode = mode
    opened = _opened(ref, plain_http)
    payload = load_payload(opened.files, LoadOptions(opened.pull_spec or "", CLUSTER_DEFAULTS))
    graph = build_graph(
        [task_of(m, i + 1, payload.total) for i, m in enumerate(payload.included)],
        run_mode,
        attempt,
    )
    if payload.excluded:
        stderr.print(
            f"note: {len(payload.excluded)} manifests are left out by the inclusion rules "
            "(default profile, Default feature set); `release manifests` says why",
            highlight=False,
        )
    if output.data:
        print_json(
            {
                **graph.to_json(),
                "mode": mode,
                "workers": workers(run_mode, graph),
                "total": graph.task_count,
            }
        )
        return
    for number, layer in enumerate(graph.steps(), start=1):
        stdout.print(f"step {number}: {len(layer)} node(s) in parallel", highlight=False)
        for index in layer:
            files = [t.file for t in graph.nodes[index].tasks]
            stdout.print(f"  node {index}: {', '.join(files)}", highlight=False, markup=False)
    stdout.print(
        f"{graph.task_count} manifests, {workers(run_mode, graph)} workers ({mode})",
        highlight=False,
    )


def _digest_of(ref: str, plain_http: bool) -> tuple[str, str | None]:
    """The digest to verify or sign, and the pull spec when the REF is a registry one.

    A pull spec pinned by digest already says everything a signature is about, so it is
    never looked up: verifying `REGISTRY/REPO@sha256:…` works offline, as on a cluster."""
    if VALID_DIGEST.match(ref) and ref.startswith("sha256:"):
        return ref, None
    if PINNED.match(ref) and not Path(ref).exists():
        return ref.rpartition("@")[2], ref
    source = open_source(ref, plain_http=plain_http)
    image = open_image(source)
    return image.digest, pull_spec(source, image.digest)


@user_errors
def sign_command(
    ref: RefArg,
    key: Annotated[str, typer.Option("--key", help="GnuPG key id or fingerprint to sign with.")],
    store: Annotated[Path, typer.Option("--store", help="Signature store directory.")],
    reference: Annotated[
        str | None, typer.Option("--reference", help="docker-reference to sign.")
    ] = None,
    gnupghome: Annotated[
        str | None, typer.Option("--gnupghome", help="GnuPG home with the secret key.")
    ] = None,
    expires: Annotated[
        int | None,
        typer.Option("--expires", min=1, help="Signature lifetime in seconds (default: none)."),
    ] = None,
    plain_http: PlainHttpOpt = False,
    output: OutputOpt = Format.text,
) -> None:
    """Sign a release digest (atomic container signature) into a store.

    **Examples**

    ```
    kupgrade release sign release-4.16.3.tar --key release@example.com --store ./signatures
    kupgrade release sign sha256:<64 hex> --key release@example.com --store ./sigs \\
        --reference quay.io/acme/release:4.16.3
    ```
    """
    digest, pinned = _digest_of(ref, plain_http)
    identity = reference or pinned or f"kupgrade.local/release@{digest}"
    data = sign(
        digest,
        identity,
        key,
        creator=f"kupgrade {__version__}",
        gnupghome=gnupghome,
        expires_in=expires,
    )
    path = next_signature_path(store, digest)
    atomic_write(path, data)
    if output.data:
        print_json({"digest": digest, "signature": str(path), "reference": identity})
    else:
        stdout.print(f"signed {digest}: {path}", highlight=False)


@user_errors
def verify_command(
    ref: Annotated[str, typer.Argument(metavar="REF", help="Image REF or sha256:<hex> digest.")],
    store: Annotated[
        list[str], typer.Option("--store", help="Signature store: directory or http(s) URL.")
    ],
    keyring: Annotated[
        list[Path], typer.Option("--keyring", help="Keyring file; each must have signed.")
    ],
    plain_http: PlainHttpOpt = False,
    output: OutputOpt = Format.text,
) -> None:
    """Check that every keyring signed the release digest; exit 1 with the reason if not.

    A signature by an expired key is accepted, as the version controller accepts it; a
    signature for another digest, by another key, or altered is not.

    **Examples**

    ```
    kupgrade release verify release-4.16.3.tar --store ./signatures --keyring release.asc
    kupgrade release verify 127.0.0.1:5000/ocp/release@sha256:<64 hex> \\
        --store https://mirror.example.com/signatures \\
        --keyring redhat.txt --keyring acme.asc -o json
    ```
    """
    digest, _ = _digest_of(ref, plain_http)
    names: dict[str, Keyring] = {}
    try:
        for path in keyring:
            name = path.stem if path.stem not in names else str(path)
            names[name] = Keyring.read(name, path)
        stores = [store_for(s) for s in store]
        with ReleaseVerifier(
            names, stores[0] if len(stores) == 1 else SerialStore(stores)
        ) as verifier:
            try:
                verified = verifier.verify(digest)
            except VerificationError as error:
                if output.data:
                    print_json(
                        {
                            "digest": digest,
                            "verified": False,
                            "error": error.message,
                            "details": error.errors,
                        }
                    )
                else:
                    stdout.print(f"NOT verified: {error.message}", highlight=False, markup=False)
                    for line in error.errors:
                        stdout.print(f"  {line}", highlight=False, markup=False)
                raise typer.Exit(1) from None
    finally:
        for ring in names.values():
            ring.close()
    if output.data:
        print_json({"digest": digest, "verified": True, "signedBy": verified.signed_by})
    else:
        by = ", ".join(f"{k} (signature-{v})" for k, v in sorted(verified.signed_by.items()))
        stdout.print(f"verified {digest}: signed by {by}", highlight=False)


app.command("new")(new_command)
app.command("info")(info_command)
app.command("extract")(extract_command)
app.command("push")(push_command)
app.command("manifests")(manifests_command)
app.command("graph")(graph_command)
app.command("sign")(sign_command)
app.command("verify")(verify_command)
