"""Snapshots of the update service: what the builder publishes and the replicas serve.

A snapshot is one OCI image manifest (an artifact: a config and three layers) whose blobs
hold everything a replica needs to answer exactly as the builder would: the graph (with
its blocked edges and skipped graph-data files), every known (channel, arch) answer
rendered as the service sends it (body, ETag, gzip body and its ETag), and the graph-data
tarball served at /graph-data. Nothing in it depends on time or on the builder's process:
the same graph gives the same bytes, so the digest of the manifest is the snapshot's
content address and the builder publishes only when that digest changes.

The reference service splits the same way: its policy-engine fetches the graph from the
graph-builder (openshift/cincinnati, cincinnati/src/plugins/internal/
cincinnati_graph_fetch.rs) and renders each answer per request; here the builder renders
once and the replicas only load. Unlike that plugin, which fails the request when the
builder cannot be reached, a replica keeps its last good snapshot (replica.py).

Reading trusts nothing: every blob is checked against the digest and size its manifest
declares, and the manifest against the digest the pointer names, before anything is
decoded (`unpack`); any fault is a SnapshotError naming the source.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from kupgrade.errors import InputError, KupgradeError
from kupgrade.graph.codec import graph_to_json
from kupgrade.graph.graphdata import Skipped
from kupgrade.intake import decode_json
from kupgrade.release.oci import MANIFEST_MEDIA, Descriptor, canonical_json, sha256
from kupgrade.updateservice.rebuild import (
    Rebuilt,
    RenderRow,
    blocked_rows,
    render_rows,
    renders_from_rows,
    restore_graph,
)
from kupgrade.updateservice.rendered import Rendered

FORMAT = 1
CONFIG_MEDIA = "application/vnd.kupgrade.snapshot.config.v1+json"
GRAPH_MEDIA = "application/vnd.kupgrade.snapshot.graph.v1+json"
RENDERS_MEDIA = "application/vnd.kupgrade.snapshot.renders.v1+msgpack"
GRAPH_DATA_MEDIA = "application/vnd.kupgrade.snapshot.graph-data.v1.tar+gzip"
LAYERS = (GRAPH_MEDIA, RENDERS_MEDIA, GRAPH_DATA_MEDIA)
# The file each blob is stored as in a directory of snapshots (and its OCI title).
FILES = {
    CONFIG_MEDIA: "config.json",
    GRAPH_MEDIA: "graph.json",
    RENDERS_MEDIA: "renders.msgpack",
    GRAPH_DATA_MEDIA: "graph-data.tar.gz",
}
TITLE = "org.opencontainers.image.title"
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
START_BUILDER = (
    "start the builder (kupgrade serve --role builder --snapshots SRC ...) "
    "or check the --snapshots source"
)


class SnapshotError(InputError):
    """A snapshot source with no whole snapshot to serve.

    `reason` is a metrics label: "source" (the source cannot be read, or holds nothing
    yet) or "integrity" (a snapshot is there but half-written, corrupt or not ours).
    """

    def __init__(self, message: str, *, source: str, reason: str, hint: str | None = None) -> None:
        super().__init__(message, file=source, hint=hint)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A packed snapshot: its manifest and its blobs (the config and the layers)."""

    manifest: bytes
    config: Descriptor
    layers: tuple[Descriptor, ...]
    blobs: dict[str, bytes]  # by digest

    @property
    def digest(self) -> str:
        return sha256(self.manifest)

    @property
    def size(self) -> int:
        return len(self.manifest) + sum(len(b) for b in self.blobs.values())

    def blob(self, descriptor: Descriptor) -> bytes:
        return self.blobs[descriptor.digest]


def pack(built: Rebuilt, renders: dict[tuple[str, str], Rendered]) -> Snapshot:
    """The snapshot of one build and its rendered answers (deterministic bytes)."""
    graph = built.graph
    parts = {
        GRAPH_MEDIA: canonical_json(
            {
                "graph": graph_to_json(graph),
                "blocked": blocked_rows(graph),
                "skipped": [[s.path, s.reason] for s in built.skipped],
            }
        ),
        RENDERS_MEDIA: msgspec.msgpack.encode(render_rows(renders)),
        GRAPH_DATA_MEDIA: built.tarball,
    }
    config_blob = canonical_json(
        {
            "format": FORMAT,
            "nodes": len(graph.nodes),
            "edges": graph.edge_count,
            "conditionalEdges": len(graph.conditional),
            "renders": len(renders),
        }
    )
    config = Descriptor(CONFIG_MEDIA, sha256(config_blob), len(config_blob))
    layers = tuple(
        Descriptor(media, sha256(data), len(data), {TITLE: FILES[media]})
        for media, data in parts.items()
    )
    manifest = canonical_json(
        {
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA,
            "config": config.to_json(),
            "layers": [layer.to_json() for layer in layers],
        }
    )
    blobs = {config.digest: config_blob} | {
        layer.digest: parts[layer.media_type] for layer in layers
    }
    return Snapshot(manifest, config, layers, blobs)


def check_digest(text: str, source: str) -> str:
    """A pointer's content: exactly one sha256 digest."""
    if not DIGEST.fullmatch(text):
        shown = text[:80].encode("unicode_escape").decode()
        raise SnapshotError(
            f"the latest pointer does not name a snapshot digest: {shown!r}",
            source=source,
            reason="integrity",
            hint=START_BUILDER,
        )
    return text


def parse_manifest(data: bytes, digest: str, source: str) -> tuple[Descriptor, list[Descriptor]]:
    """The config and layers of the manifest `digest` names, if `data` is that manifest."""
    if sha256(data) != digest:
        raise _corrupt(f"the manifest of {digest} hashes to {sha256(data)}", source)
    try:
        doc = decode_json(data, source, "a snapshot manifest")
        if not isinstance(doc, dict) or doc.get("schemaVersion") != 2:
            raise _corrupt(f"{digest} is not an OCI image manifest", source)
        config = Descriptor.parse(doc.get("config"), source)
        raw_layers = doc.get("layers")
        if not isinstance(raw_layers, list):
            raise _corrupt(f"{digest} has no list of layers", source)
        layers = [Descriptor.parse(layer, source) for layer in raw_layers]
    except SnapshotError:
        raise
    except InputError as exc:
        raise _corrupt(exc.message, source) from None
    if config.media_type != CONFIG_MEDIA or tuple(d.media_type for d in layers) != LAYERS:
        raise _corrupt(
            f"{digest} is not a kupgrade snapshot (config {config.media_type!r}, "
            f"{len(layers)} layers)",
            source,
        )
    return config, layers


Fetch = Callable[[Descriptor], bytes]


def unpack(manifest: bytes, digest: str, fetch: Fetch, source: str) -> Rebuilt:
    """The build a snapshot holds; `fetch` returns a blob checked against its descriptor.

    Every fault of the content is a SnapshotError ("integrity"), whatever the bytes."""
    config, layers = parse_manifest(manifest, digest, source)
    try:
        settings = decode_json(fetch(config), source, "a snapshot config")
        if not isinstance(settings, dict) or settings.get("format") != FORMAT:
            found = settings.get("format") if isinstance(settings, dict) else None
            raise _corrupt(
                f"snapshot format {found!r} is not the {FORMAT} this kupgrade reads",
                source,
                hint="run the same kupgrade version in the builder and the replicas",
            )
        doc = decode_json(fetch(layers[0]), source, "a snapshot graph")
        if not isinstance(doc, dict):
            raise _corrupt("the snapshot's graph is not an object", source)
        blocked = msgspec.convert(doc.get("blocked"), list[tuple[str, str, str]])
        skipped = msgspec.convert(doc.get("skipped"), list[tuple[str, str]])
        graph = restore_graph(doc.get("graph"), blocked, f"{source} ({digest} graph)")
        rows = msgspec.msgpack.decode(fetch(layers[1]), type=list[RenderRow])
        tarball = fetch(layers[2])
    except SnapshotError:
        raise
    except KupgradeError as exc:
        raise _corrupt(str(exc), source) from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise _corrupt(f"{digest}: {exc}", source) from None
    renders = renders_from_rows(rows)
    if len(renders) != len(rows):
        raise _corrupt(f"{digest} renders one (channel, arch) twice", source)
    return Rebuilt(graph, tarball, tuple(Skipped(p, r) for p, r in skipped), renders)


def _corrupt(message: str, source: str, hint: str | None = None) -> SnapshotError:
    return SnapshotError(message, source=source, reason="integrity", hint=hint)
