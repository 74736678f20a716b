"""`kupgrade serve`: the Cincinnati-compatible update service."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

from kupgrade.cli.output import Format, user_errors
from kupgrade.updateservice.app import DEFAULT_PREFIX
from kupgrade.updateservice.builder import DEFAULT_KEEP
from kupgrade.updateservice.rebuild import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S
from kupgrade.updateservice.replica import DEFAULT_POLL_S
from kupgrade.updateservice.server import DEFAULT_READ_TIMEOUT_S, ServeConfig, serve

DEFAULT_REFRESH_S = 300.0


class Role(enum.StrEnum):
    all = "all"
    builder = "builder"
    replica = "replica"


@user_errors
def serve_command(
    releases: Annotated[
        Path | None,
        typer.Option(
            "--releases",
            exists=True,
            help="Raw graph JSON, or a directory of release-metadata documents "
            "(--role all and builder).",
        ),
    ] = None,
    graph_data: Annotated[
        Path | None,
        typer.Option(
            "--graph-data",
            exists=True,
            help="graph-data directory or .tar.gz (--role all and builder).",
        ),
    ] = None,
    role: Annotated[
        Role,
        typer.Option(
            "--role",
            help="all: build and serve in one process; builder: build and publish "
            "snapshots to --snapshots; replica: serve the newest snapshot from --snapshots.",
        ),
    ] = Role.all,
    snapshots: Annotated[
        str | None,
        typer.Option(
            "--snapshots",
            help="Where the builder publishes and replicas read: a directory, or a "
            "registry repository HOST[:PORT]/REPO[:TAG] (the tag defaults to latest).",
        ),
    ] = None,
    keep: Annotated[
        int,
        typer.Option("--keep", min=1, help="Snapshots the builder keeps (older ones pruned)."),
    ] = DEFAULT_KEEP,
    plain_http: Annotated[
        bool,
        typer.Option(
            "--plain-http", help="Talk HTTP, not HTTPS, to the registry (loopback always does)."
        ),
    ] = False,
    wait_for_snapshot: Annotated[
        bool,
        typer.Option(
            "--wait-for-snapshot",
            help="Replica: start even when no whole snapshot is there yet, not ready until "
            "one is (for a Deployment started with its builder); without it a replica "
            "with nothing to serve exits with one line naming the source.",
        ),
    ] = False,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")
    ] = 8080,
    path_prefix: Annotated[
        str, typer.Option("--path-prefix", help="Prefix of the API routes.")
    ] = DEFAULT_PREFIX,
    refresh: Annotated[
        float | None,
        typer.Option(
            "--refresh",
            min=0.1,
            help=f"Seconds between checks of the inputs for changes (default "
            f"{DEFAULT_REFRESH_S:g}), or of the snapshot source by a replica (default "
            f"{DEFAULT_POLL_S:g}).",
        ),
    ] = None,
    build_timeout: Annotated[
        float,
        typer.Option(
            "--build-timeout",
            min=1.0,
            help="Seconds one rebuild may take; a slower one is stopped and the last good "
            "graph kept.",
        ),
    ] = DEFAULT_TIMEOUT_S,
    build_memory: Annotated[
        int,
        typer.Option(
            "--build-memory",
            min=64,
            help="MiB of memory one rebuild may use (it runs in a child process).",
        ),
    ] = DEFAULT_MEMORY_MB,
    read_timeout: Annotated[
        float,
        typer.Option(
            "--read-timeout",
            min=0.1,
            help="Seconds a client may take to send its request headers (half-open "
            "connections are closed after this).",
        ),
    ] = DEFAULT_READ_TIMEOUT_S,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=64,
            help="Worker processes answering on the one port (about one per core); "
            "/metrics adds up all of them.",
        ),
    ] = 1,
    output: Annotated[
        Format, typer.Option("-o", "--output", help="Log format: text lines or JSON lines.")
    ] = Format.text,
) -> None:
    """Serve the update graph over Cincinnati's policy-engine API.

    Routes: GET {prefix}/graph and {prefix}/v1/graph (channel required, arch defaults to
    amd64), {prefix}/openapi, {prefix}/graph-data (the graph-data tarball), /metrics,
    /livez, /readyz. The inputs are re-read every --refresh seconds off the request path;
    each rebuild runs in a child process bounded by --build-timeout and --build-memory, and
    a failed rebuild keeps serving the last good graph (see the logs, /metrics and /readyz).

    Past one machine, one builder and many replicas: `--role builder` builds as above and
    publishes each changed graph as an immutable snapshot (the graph, every answer
    rendered, the graph-data tarball; named by its digest) to --snapshots, a directory or
    a registry repository; it is ready once its first snapshot is published. `--role
    replica` reads no inputs: it serves the newest whole snapshot, polls for a newer one
    every --refresh seconds and switches between two requests (each answer names its
    snapshot in a Kupgrade-Snapshot header). A half-written or corrupt snapshot is never
    served; when the source breaks, the replica keeps its last good snapshot and logs
    one line. A replica with no snapshot to serve exits with one line naming the source,
    unless --wait-for-snapshot (then /readyz answers 503 until one arrives).

    **Examples**

    ```
    kupgrade serve --releases raw.json --graph-data cincinnati-graph-data --port 8080
    curl -s 'http://127.0.0.1:8080/api/upgrades_info/graph?channel=stable-4.14&arch=amd64'
    kupgrade serve --releases releases/ --graph-data graph-data.tar.gz --refresh 30 -o json
    kupgrade serve --releases raw.json --graph-data cincinnati-graph-data --workers 2
    kupgrade serve --role builder --releases raw.json --graph-data cincinnati-graph-data \\
      --snapshots snapshots/ --port 8081
    kupgrade serve --role replica --snapshots snapshots/ --port 8080
    kupgrade serve --role builder --releases raw.json --graph-data cincinnati-graph-data \\
      --snapshots 127.0.0.1:5000/kupgrade/update-graph --refresh 60 -o json
    kupgrade serve --role replica --snapshots 127.0.0.1:5000/kupgrade/update-graph --workers 2
    kupgrade serve --role replica --snapshots 127.0.0.1:5000/kupgrade/update-graph \\
      --wait-for-snapshot --refresh 2
    ```
    """
    if refresh is None:
        refresh = DEFAULT_POLL_S if role is Role.replica else DEFAULT_REFRESH_S
    serve(
        ServeConfig(
            releases=str(releases.resolve()) if releases else "",
            graph_data=str(graph_data.resolve()) if graph_data else "",
            role=role.value,
            snapshots=snapshots or "",
            keep=keep,
            plain_http=plain_http,
            host=host,
            port=port,
            path_prefix=path_prefix,
            refresh=refresh,
            log_format=output.value,
            build_timeout=build_timeout,
            build_memory_mb=build_memory,
            read_timeout=read_timeout,
            workers=workers,
        ),
        wait_for_snapshot=wait_for_snapshot,
    )
