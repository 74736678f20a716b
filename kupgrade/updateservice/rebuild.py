"""Graph rebuilds in a child process, bounded in time and memory.

The service must keep answering while its graph-data holds whatever someone committed:
an alias bomb, a FIFO, a file that never ends. The intake guards refuse what they can
see; the child process is the guard for everything else. It reads the inputs, builds the
graph and hands back only what the service serves (the graph document, the graph-data
tarball, the skipped files and every known channel's answer already rendered), as msgpack
on stdout. It runs under an address-space limit (which it sets itself, first thing) and a
wall-clock timeout; the parent's GIL is never held by a build nor by rendering.
"""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from kupgrade.errors import KupgradeError
from kupgrade.graph.codec import graph_from_doc, graph_to_json
from kupgrade.graph.graphdata import Skipped, yaml_extension
from kupgrade.graph.loading import build_from_paths
from kupgrade.graph.model import Graph
from kupgrade.graph.policy import PolicyView
from kupgrade.graph.tree import Tree, pack_tree
from kupgrade.updateservice.rendered import Rendered, render_all

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_MB = 2048


class RebuildError(KupgradeError):
    """A rebuild that produced no graph; `reason` is a metrics label."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """What the service publishes from one build."""

    graph: Graph
    tarball: bytes
    skipped: tuple[Skipped, ...]
    renders: dict[tuple[str, str], Rendered] = field(default_factory=dict)


# One rendered answer: channel, arch, body, etag, gzip body, gzip etag.
RenderRow = tuple[str, str, bytes, str, bytes, str]


class _Envelope(msgspec.Struct):
    graph: dict[str, Any] | None = None
    tarball: bytes = b""
    skipped: list[tuple[str, str]] = []
    blocked: list[tuple[str, str, str]] = []  # Graph.blocked, which the JSON codec leaves out
    renders: list[RenderRow] = []
    error: str | None = None


def graph_data_tarball(tree: Tree) -> bytes:
    """The allow-listed graph-data files the graph was built from (served at /graph-data)."""
    include = ["LICENSE", "version", "raw/metadata.json"]
    for subdir in ("channels", "blocked-edges"):
        for entry in tree.listdir(subdir) or []:
            if entry.data is not None and yaml_extension(entry.name):
                include.append(f"{subdir}/{entry.name}")
    return pack_tree(tree, include)


def render_rows(renders: dict[tuple[str, str], Rendered]) -> list[RenderRow]:
    """Rendered answers as plain rows, sorted (the child's envelope and the snapshots)."""
    return [
        (c, a, r.body, r.etag, r.gzip_body, r.gzip_etag) for (c, a), r in sorted(renders.items())
    ]


def renders_from_rows(rows: list[RenderRow]) -> dict[tuple[str, str], Rendered]:
    return {(c, a): Rendered(body, etag, gz, gz_etag) for c, a, body, etag, gz, gz_etag in rows}


def blocked_rows(graph: Graph) -> list[tuple[str, str, str]]:
    """Graph.blocked as rows: the JSON codec leaves it out, the service's console shows it."""
    return [(a, b, key) for (a, b), key in sorted(graph.blocked.items())]


def restore_graph(doc: Any, blocked: list[tuple[str, str, str]], source: str) -> Graph:
    """The graph of a document and its blocked rows; InputError naming `source`."""
    graph = graph_from_doc(doc, source)
    graph.blocked = {(a, b): key for a, b, key in blocked}
    return graph


def build_here(releases: Path, graph_data: Path) -> Rebuilt:
    """Build in this process (the child's work; also `graph build`'s semantics)."""
    built = build_from_paths(releases, graph_data)
    return Rebuilt(built.graph, graph_data_tarball(built.tree), tuple(built.data.skipped))


def build_isolated(
    releases: Path,
    graph_data: Path,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: int = DEFAULT_MEMORY_MB,
) -> Rebuilt:
    """Build in a child process; RebuildError (with a reason) when it gives no graph."""
    limit = memory_mb * 1024 * 1024
    # The child bounds its own address space before it reads anything (a preexec_fn
    # would do it before exec, but forces a fork() of this whole serving process where
    # subprocess otherwise uses vfork: a fork copies every page table under the GIL and
    # showed in the service's p99 while it rebuilt).
    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__, str(releases), str(graph_data), str(limit)],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RebuildError(
            f"the rebuild took longer than {timeout_s:g}s and was stopped", "timeout"
        ) from None
    except OSError as exc:
        raise RebuildError(f"cannot start the rebuild: {exc.strerror or exc}", "crash") from None
    return _read_answer(done, memory_mb)


def _read_answer(done: subprocess.CompletedProcess[bytes], memory_mb: int) -> Rebuilt:
    try:
        envelope = msgspec.msgpack.decode(done.stdout, type=_Envelope)
    except msgspec.DecodeError:
        envelope = None
    if envelope is not None and envelope.error is not None:
        raise RebuildError(envelope.error, "input")
    if envelope is None or envelope.graph is None or done.returncode != 0:
        raise RebuildError(_death(done, memory_mb), "memory" if _out_of_memory(done) else "crash")
    graph = restore_graph(envelope.graph, envelope.blocked, "rebuild")
    renders = renders_from_rows(envelope.renders)
    skipped = tuple(Skipped(p, r) for p, r in envelope.skipped)
    return Rebuilt(graph, envelope.tarball, skipped, renders)


def _out_of_memory(done: subprocess.CompletedProcess[bytes]) -> bool:
    return b"MemoryError" in done.stderr or done.returncode == -signal.SIGKILL


def _death(done: subprocess.CompletedProcess[bytes], memory_mb: int) -> str:
    if _out_of_memory(done):
        return f"the rebuild needed more than its {memory_mb} MiB of memory and was stopped"
    if done.returncode < 0:
        return f"the rebuild died of signal {signal.Signals(-done.returncode).name}"
    last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
    return f"the rebuild failed (exit {done.returncode}): {last[0][:300]}"


def _child(argv: list[str]) -> int:
    releases, graph_data = Path(argv[0]), Path(argv[1])
    if len(argv) > 2:
        limit = int(argv[2])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        rebuilt = build_here(releases, graph_data)
    except KupgradeError as exc:
        envelope = _Envelope(error=str(exc))
    except RecursionError:
        envelope = _Envelope(error="the graph-data is nested too deeply to read")
    else:
        envelope = _Envelope(
            graph=graph_to_json(rebuilt.graph),
            tarball=rebuilt.tarball,
            skipped=[(s.path, s.reason) for s in rebuilt.skipped],
            blocked=blocked_rows(rebuilt.graph),
            renders=render_rows(render_all(PolicyView(rebuilt.graph))),
        )
    sys.stdout.buffer.write(msgspec.msgpack.encode(envelope))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
