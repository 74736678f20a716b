"""One policy-engine answer as the service sends it: bytes, validators, a gzip variant.

Rendered in the rebuild's child process for every known (channel, arch), so that the
serving process only swaps them in, and in the serving process for what the child could
not know (an arch no node has, asked for by a client).
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass, field

from kupgrade.graph.codec import encode_json
from kupgrade.graph.policy import PolicyError, PolicyView

EMPTY_GRAPH = {"version": 1, "nodes": [], "edges": [], "conditionalEdges": []}


@dataclass(frozen=True, slots=True)
class Rendered:
    """One policy-engine answer as bytes, with its validators, gzip variant and headers."""

    body: bytes
    etag: str
    gzip_body: bytes
    gzip_etag: str
    _headers: dict[tuple[str, bool], list[tuple[bytes, bytes]]] = field(default_factory=dict)

    @staticmethod
    def of(doc: object) -> Rendered:
        body = encode_json(doc)
        tag = hashlib.sha256(body).hexdigest()[:32]
        return Rendered(
            body, f'"{tag}"', gzip.compress(body, compresslevel=6, mtime=0), f'"{tag}-gzip"'
        )

    def headers(self, media_type: str, use_gzip: bool) -> list[tuple[bytes, bytes]]:
        """Response headers (without Vary/CORS), built once per media type and encoding."""
        key = (media_type, use_gzip)
        found = self._headers.get(key)
        if found is None:
            body, etag = (self.gzip_body, self.gzip_etag) if use_gzip else (self.body, self.etag)
            found = [
                (b"content-type", media_type.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"etag", etag.encode()),
            ]
            if use_gzip:
                found.append((b"content-encoding", b"gzip"))
            self._headers[key] = found
        return found


EMPTY_RENDERED = Rendered.of(EMPTY_GRAPH)


def render_all(view: PolicyView) -> dict[tuple[str, str], Rendered]:
    """Every known channel's answer for every known arch (what the service warms)."""
    out = {}
    for channel in sorted(view.known_channels()):
        for arch in sorted(view.known_arches()):
            try:
                out[channel, arch] = Rendered.of(view.filter(channel, arch))
            except PolicyError:
                continue  # e.g. a channel name the request regex can never match
    return out
