"""`--from PATH... [--now TIME]`: a command reads a dump (a must-gather, an Insights
archive, List files, manifests) the way it reads a live cluster, offline (SPEC X7), as a
support engineer reads a customer's must-gather with oc's mock mode."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kupgrade.cluster.fake import MemoryBackend
from kupgrade.errors import InputError
from kupgrade.versions.times import parse_time

FromOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--from",
        help="Read a dump instead of a cluster: a must-gather directory or .tar.gz, an "
        "Insights archive, `kubectl get -o yaml|json` files or manifests (repeatable).",
    ),
]
NowOpt = Annotated[
    str | None,
    typer.Option(
        "--now",
        help="--from: the time to read the dump at (RFC 3339); default: its newest timestamp.",
    ),
]


def captured(paths: list[Path], now: str | None, *, mock: bool = False) -> MemoryBackend:
    """The dump's objects behind the Backend every reading command takes; its clock at
    `now`, else at the dump's newest timestamp (`mock`: oc's mock mode's, the newest
    ClusterVersion or ClusterOperator condition)."""
    # Imported here: YAML and the readers are not what `get nodes` should load.
    from kupgrade.cli.output import stderr  # noqa: PLC0415
    from kupgrade.twin.dump import read_dumps  # noqa: PLC0415
    from kupgrade.twin.importer import captured_at  # noqa: PLC0415
    from kupgrade.views.status_capture import mock_clock  # noqa: PLC0415

    at = parse_time(now) if now is not None else 0.0
    if now is not None and at <= 0:
        raise InputError(
            f"{now!r} is not an RFC 3339 time", field="--now", hint="e.g. 2024-05-04T10:00:00Z"
        )
    dump = read_dumps(paths)
    for note in dump.notes():
        stderr.print(f"[yellow]note:[/] {note}", highlight=False)
    objects = list(dump.objects.values())
    if now is None:
        at = (mock_clock(objects) if mock else 0.0) or captured_at(objects)
    # Lists in the dump's own order, as oc's mock mode reads a capture's files.
    api = MemoryBackend(objects, at, as_given=True)
    api.alerts = dump.alerts
    return api


def refuse_with_kubeconfig(paths: list[Path] | None, live: bool) -> None:
    if paths and live:
        raise InputError("give --from or --kubeconfig, not both", field="--from")
