"""An OCI distribution registry over HTTP: push a release, pull it by digest (SPEC B, C2).

Only what a release needs: blobs (HEAD, then a monolithic POST+PUT upload) and image
manifests by tag or digest, with anonymous bearer tokens when the registry asks for
them. Everything read is checked against its digest; a tag is resolved once to the
digest and the digest is what is used from then on.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx

from kupgrade.errors import InputError, KupgradeError
from kupgrade.intake import decode_json
from kupgrade.intake.http import BodyTooLarge, bounded_get
from kupgrade.release.oci import (
    MANIFEST_MEDIA,
    MANIFEST_TYPES,
    Descriptor,
    IntegrityError,
    check_blob,
    check_declared_size,
    sha256,
)

_REFERENCE = re.compile(
    r"^(?P<registry>[a-zA-Z0-9.-]+(?::[0-9]+)?|\[[0-9a-fA-F:]+\](?::[0-9]+)?)/"
    r"(?P<repository>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64}))?$"
)
ACCEPT = ", ".join(MANIFEST_TYPES)
# containers/image's iolimits.MaxManifestBodySize.
MAX_MANIFEST_BYTES = 4 * 1024 * 1024


class RegistryError(KupgradeError):
    """The registry refused or failed a request."""


@dataclass(frozen=True)
class Reference:
    """registry/repository[:tag][@sha256:…]; the registry part must look like a host."""

    registry: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @staticmethod
    def parse(text: str) -> Reference | None:
        match = _REFERENCE.match(text)
        if match is None:
            return None
        host = match.group("registry")
        if "." not in host and ":" not in host and host != "localhost":
            return None
        return Reference(host, match.group("repository"), match.group("tag"), match.group("digest"))

    @property
    def name(self) -> str:
        return f"{self.registry}/{self.repository}"

    def pinned(self, digest: str) -> str:
        """The pull spec everything downstream uses: registry/repository@sha256:…"""
        return f"{self.name}@{digest}"

    def __str__(self) -> str:
        text = self.name + (f":{self.tag}" if self.tag else "")
        return text + (f"@{self.digest}" if self.digest else "")


def _loopback(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host[1 : host.index("]")]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class RegistryClient:
    """A client for one registry; plain HTTP for loopback hosts or when asked, else HTTPS."""

    def __init__(
        self, host: str, *, plain_http: bool = False, client: httpx.Client | None = None
    ) -> None:
        scheme = "http" if plain_http or _loopback(host) else "https"
        self.base = f"{scheme}://{host}"
        self.host = host
        self.client = client or httpx.Client(timeout=300.0, follow_redirects=True)
        self._tokens: dict[str, str] = {}

    def _request(self, method: str, url: str, scope: str, **kw: object) -> httpx.Response:
        headers = dict(kw.pop("headers", {}) or {})  # type: ignore[call-overload]
        if scope in self._tokens:
            headers["Authorization"] = f"Bearer {self._tokens[scope]}"
        try:
            response = self.client.request(method, url, headers=headers, **kw)  # type: ignore[arg-type]
            if response.status_code == 401 and self._authorize(response, scope):
                headers["Authorization"] = f"Bearer {self._tokens[scope]}"
                response = self.client.request(method, url, headers=headers, **kw)  # type: ignore[arg-type]
        except httpx.HTTPError as exc:
            raise RegistryError(
                f"{self.host}: {exc}", hint="is the registry running and reachable?"
            ) from None
        return response

    def _authorize(self, response: httpx.Response, scope: str) -> bool:
        challenge = response.headers.get("WWW-Authenticate", "")
        if not challenge.lower().startswith("bearer "):
            return False
        params = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
        if "realm" not in params:
            return False
        query = {"scope": scope, **({"service": params["service"]} if "service" in params else {})}
        try:
            _, body = bounded_get(self.client, params["realm"], max_bytes=1 << 20, params=query)
            doc = decode_json(body, params["realm"])
            token = doc.get("token") or doc.get("access_token") if isinstance(doc, dict) else None
        except (httpx.HTTPError, InputError):
            return False
        if not token:
            return False
        self._tokens[scope] = str(token)
        return True

    @staticmethod
    def _scope(repository: str, push: bool) -> str:
        return f"repository:{repository}:{'pull,push' if push else 'pull'}"

    def _fail(
        self, response: httpx.Response, what: str, body: bytes | None = None
    ) -> RegistryError:
        text = body.decode("utf-8", "replace") if body is not None else response.text
        detail = " ".join(text.split())[:300]
        return RegistryError(f"{self.host}: {what}: HTTP {response.status_code} {detail}")

    def has_blob(self, repository: str, digest: str) -> bool:
        url = f"{self.base}/v2/{repository}/blobs/{digest}"
        return self._request("HEAD", url, self._scope(repository, True)).status_code == 200

    def push_blob(self, repository: str, data: bytes) -> str:
        digest = sha256(data)
        if self.has_blob(repository, digest):
            return digest
        scope = self._scope(repository, True)
        started = self._request("POST", f"{self.base}/v2/{repository}/blobs/uploads/", scope)
        if started.status_code != 202 or "Location" not in started.headers:
            raise self._fail(started, f"cannot start an upload to {repository}")
        location = urljoin(self.base + "/", started.headers["Location"])
        separator = "&" if "?" in location else "?"
        done = self._request(
            "PUT",
            f"{location}{separator}digest={digest}",
            scope,
            content=data,
            headers={"Content-Type": "application/octet-stream"},
        )
        if done.status_code != 201:
            raise self._fail(done, f"upload of {digest} refused")
        return digest

    def push_manifest(
        self, repository: str, reference: str, data: bytes, media_type: str = MANIFEST_MEDIA
    ) -> str:
        url = f"{self.base}/v2/{repository}/manifests/{reference}"
        response = self._request(
            "PUT",
            url,
            self._scope(repository, True),
            content=data,
            headers={"Content-Type": media_type},
        )
        if response.status_code != 201:
            raise self._fail(response, f"manifest {reference} refused")
        digest = sha256(data)
        echoed = response.headers.get("Docker-Content-Digest")
        if echoed and echoed != digest:
            raise RegistryError(f"{self.host}: stored the manifest as {echoed}, expected {digest}")
        return digest

    def manifest(self, repository: str, reference: str) -> tuple[Descriptor, bytes]:
        """The manifest by tag or digest, with its digest checked (a tag is resolved here)."""
        url = f"{self.base}/v2/{repository}/manifests/{reference}"
        response, data = self._get(
            url, self._scope(repository, False), MAX_MANIFEST_BYTES, {"Accept": ACCEPT}
        )
        if response.status_code == 404:
            raise InputError(f"{self.host}/{repository}:{reference} does not exist", field="REF")
        if response.status_code != 200:
            raise self._fail(response, f"cannot read manifest {reference}", data)
        digest = reference if reference.startswith("sha256:") else sha256(data)
        media = response.headers.get("Content-Type", MANIFEST_MEDIA).split(";")[0].strip()
        descriptor = Descriptor(media, digest, len(data))
        return descriptor, check_blob(data, descriptor, f"{self.host}/{repository}")

    def blob(self, repository: str, descriptor: Descriptor) -> bytes:
        url = f"{self.base}/v2/{repository}/blobs/{descriptor.digest}"
        where = f"{self.host}/{repository}"
        # One byte past the declared size is enough to see a mismatch.
        limit = check_declared_size(descriptor, where) + 1
        response, data = self._get(url, self._scope(repository, False), limit)
        if response.status_code != 200:
            raise self._fail(response, f"cannot read blob {descriptor.digest}", data)
        return check_blob(data, descriptor, where)

    def _get(
        self, url: str, scope: str, limit: int, headers: dict[str, str] | None = None
    ) -> tuple[httpx.Response, bytes]:
        """GET with the scope's token (fetched on a 401), reading at most `limit` bytes."""
        for attempt in range(2):
            sent = dict(headers or {})
            if scope in self._tokens:
                sent["Authorization"] = f"Bearer {self._tokens[scope]}"
            try:
                response, data = bounded_get(self.client, url, max_bytes=limit, headers=sent)
            except BodyTooLarge:
                # A blob longer than its descriptor: read no further, the digest cannot match.
                raise IntegrityError(
                    f"{url}: the answer is longer than the {limit - 1:,} bytes expected",
                    file=f"{self.host}",
                ) from None
            except httpx.HTTPError as exc:
                raise RegistryError(
                    f"{self.host}: {exc}", hint="is the registry running and reachable?"
                ) from None
            if response.status_code == 401 and attempt == 0 and self._authorize(response, scope):
                continue
            return response, data
        return response, data


class RegistrySource:
    """An image in a registry, read by digest (a tag is resolved to one first)."""

    def __init__(self, reference: Reference, registry: RegistryClient | None = None) -> None:
        self.reference = reference
        self.registry = registry or RegistryClient(reference.registry)
        self.name = str(reference)

    def manifest(self) -> tuple[Descriptor, bytes]:
        ref = self.reference.digest or self.reference.tag or "latest"
        return self.registry.manifest(self.reference.repository, ref)

    def blob(self, descriptor: Descriptor) -> bytes:
        return self.registry.blob(self.reference.repository, descriptor)
