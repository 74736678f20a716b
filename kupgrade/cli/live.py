"""`--kubeconfig` and `--context`: commands pointed at a real cluster (or a simulated one's
API), read and written through its API server as kubectl would, and the kubectl clients
on this machine, whose skew against that cluster matters too (SPEC H5)."""

from __future__ import annotations

import json
import os
import subprocess
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
    typer.Option("--console-port", min=0, max=65535,
                 help="--console: the port on 127.0.0.1 (0: any free one)."),
]  # fmt: skip
CLOUD_SDK_BIN = Path("/usr/lib/google-cloud-sdk/bin")


def backend(kubeconfig: Path | None, context: str | None) -> KubeBackend:
    """The cluster a kubeconfig reaches. lightkube is imported here, when a command is
    pointed at a cluster: it takes a fifth of a second, which no other use should pay."""
    from kupgrade.cluster.kube import KubeBackend  # noqa: PLC0415 - see the docstring

    return KubeBackend(kubeconfig, context)


def local_kubectls() -> list[tuple[str, str]]:
    """(path, version) of every kubectl on PATH and in the Cloud SDK's bin directory."""
    found: set[str] = set()
    for directory in [*os.environ.get("PATH", "").split(os.pathsep), str(CLOUD_SDK_BIN)]:
        folder = Path(directory or ".")
        if not folder.is_dir():
            continue
        found |= {
            str(p.resolve())  # one entry per binary, however many links name it
            for p in folder.glob("kubectl*")
            if p.name == "kubectl" or p.name.startswith("kubectl.1.")
        }
    out = []
    for path in sorted(found):
        try:
            done = subprocess.run([path, "version", "--client", "-o", "json"], capture_output=True,
                                  text=True, timeout=20, check=False)  # fmt: skip
            git = json.loads(done.stdout)["clientVersion"]["gitVersion"]
        except (OSError, subprocess.TimeoutExpired, ValueError, KeyError):
            continue
        out.append((path, str(git).lstrip("v").split("-")[0]))
    return out
