"""`--kubeconfig` and `--context`: commands pointed at a real cluster (or a simulated one's
API), read and written through its API server as kubectl would, and the kubectl clients
on this machine, whose skew against that cluster matters too (SPEC H5)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from kupgrade.cluster.kube import KubeBackend

KubeconfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--kubeconfig",
        help="Act on the cluster this kubeconfig reaches (a real one, or a simulated "
        "cluster's API), as kubectl does.",
    ),
]
ContextOpt = Annotated[
    str | None, typer.Option("--context", help="The kubeconfig context (default: its current one).")
]
ConsoleOpt = Annotated[
    bool,
    typer.Option(
        "--console", help="Serve a web page on loopback that shows the run live; prints its URL."
    ),
]
ConsolePortOpt = Annotated[
    int,
    typer.Option(
        "--console-port",
        min=0,
        max=65535,
        help="--console: the port on 127.0.0.1 (0: any free one).",
    ),
]


def backend(kubeconfig: Path | None, context: str | None) -> KubeBackend:
    """The cluster a kubeconfig reaches. lightkube is imported here, when a command is
    pointed at a cluster: it takes a fifth of a second, which no other use should pay."""
    from kupgrade.cluster.kube import KubeBackend  # noqa: PLC0415 - see the docstring

    return KubeBackend(kubeconfig, context)
