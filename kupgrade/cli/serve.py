"""`kupgrade serve`: the Cincinnati-compatible update service."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kupgrade.cli.output import Format, user_errors
from kupgrade.updateservice.app import DEFAULT_PREFIX
from kupgrade.updateservice.rebuild import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S
from kupgrade.updateservice.server import DEFAULT_READ_TIMEOUT_S, ServeConfig, serve


@user_errors
def serve_command(
    releases: Annotated[
        Path,
        typer.Option(
            "--releases",
            exists=True,
            help="Raw graph JSON, or a directory of release-metadata documents.",
        ),
    ],
    graph_data: Annotated[
        Path, typer.Option("--graph-data", exists=True, help="graph-data directory or .tar.gz.")
    ],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")
    ] = 8080,
    path_prefix: Annotated[
        str, typer.Option("--path-prefix", help="Prefix of the API routes.")
    ] = DEFAULT_PREFIX,
    refresh: Annotated[
        float,
        typer.Option(
            "--refresh", min=0.1, help="Seconds between checks of the inputs for changes."
        ),
    ] = 300.0,
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

    **Examples**

    ```
    kupgrade serve --releases raw.json --graph-data cincinnati-graph-data --port 8080
    curl -s 'http://127.0.0.1:8080/api/upgrades_info/graph?channel=stable-4.14&arch=amd64'
    kupgrade serve --releases releases/ --graph-data graph-data.tar.gz --refresh 30 -o json
    kupgrade serve --releases raw.json --graph-data cincinnati-graph-data --workers 2
    ```
    """
    serve(
        ServeConfig(
            releases=str(releases.resolve()),
            graph_data=str(graph_data.resolve()),
            host=host,
            port=port,
            path_prefix=path_prefix,
            refresh=refresh,
            log_format=output.value,
            build_timeout=build_timeout,
            build_memory_mb=build_memory,
            read_timeout=read_timeout,
            workers=workers,
        )
    )
