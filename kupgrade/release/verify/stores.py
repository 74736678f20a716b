"""Signature stores: `<algo>=<hex>/signature-1 … signature-9` in a directory, over HTTP,
in memory, or several searched in order; every read bounded."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol

import httpx

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.intake.http import bounded_get
from kupgrade.release.verify.documents import MAX_SIGNATURE_BYTES, MAX_SIGNATURES, VerificationError

# --- stores -----------------------------------------------------------------------------------


class SignatureStore(Protocol):
    """Where signatures for a digest are found, signature-1 first."""

    def signatures(self, digest: str) -> Iterator[bytes | Exception]: ...


def digest_path(digest: str) -> str:
    algo, sep, value = digest.partition(":")
    if not sep or not algo or not value or ":" in value:
        raise VerificationError("the provided digest must be of the form ALGO:HASH")
    return f"{algo}={value}"


class DirectoryStore:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.text = str(root)

    def __str__(self) -> str:
        return f"file://{self.text}"

    def signatures(self, digest: str) -> Iterator[bytes | Exception]:
        base = self.root / digest_path(digest)
        for index in range(1, MAX_SIGNATURES + 1):
            try:
                yield intake.read_file(
                    base / f"signature-{index}", "signature", MAX_SIGNATURE_BYTES
                )
            except InputError as exc:
                if not (base / f"signature-{index}").exists():
                    return
                yield exc


class HttpStore:
    def __init__(self, base: str, client: httpx.Client | None = None) -> None:
        self.base = base.rstrip("/")
        self.client = client or httpx.Client(timeout=30.0, follow_redirects=True)

    def __str__(self) -> str:
        return f"containers/image signature store under {self.base}"

    def signatures(self, digest: str) -> Iterator[bytes | Exception]:
        """library-go pkg/verify/store/sigstore checkHTTPSignatures: 404 ends the search
        (recorded as "no more signatures to check"), another non-2xx status is recorded and
        the next index tried, an empty 2xx body is skipped."""
        base = f"{self.base}/{digest_path(digest)}"
        for index in range(1, MAX_SIGNATURES + 1):
            url = f"{base}/signature-{index}"
            try:
                response, body = bounded_get(self.client, url, max_bytes=MAX_SIGNATURE_BYTES)
            except httpx.HTTPError as exc:
                yield RuntimeError(f"{url}: {exc}")
                continue
            if response.status_code == 404:
                yield RuntimeError(
                    f"unable to retrieve signature from {url}: no more signatures to check"
                )
                return
            if not 200 <= response.status_code < 300:
                yield RuntimeError(
                    f"unable to retrieve signature from {url}: response status "
                    f"{response.status_code}"
                )
                continue
            if body:
                yield body


class MemoryStore:
    def __init__(self, signatures: Mapping[str, list[bytes]]) -> None:
        self.data = signatures

    def __str__(self) -> str:
        return "in-memory signature store"

    def signatures(self, digest: str) -> Iterator[bytes | Exception]:
        yield from self.data.get(digest, [])[:MAX_SIGNATURES]


class SerialStore:
    """Several stores searched in order, as the controller chains them."""

    def __init__(self, stores: list[SignatureStore]) -> None:
        self.stores = stores

    def __str__(self) -> str:
        return ", ".join(str(s) for s in self.stores)

    def signatures(self, digest: str) -> Iterator[bytes | Exception]:
        for store in self.stores:
            yield from store.signatures(digest)


def store_for(location: str, client: httpx.Client | None = None) -> SignatureStore:
    """A store from a directory path, file:// URL or http(s):// URL."""
    if location.startswith(("http://", "https://")):
        return HttpStore(location, client)
    return DirectoryStore(location.removeprefix("file://"))
