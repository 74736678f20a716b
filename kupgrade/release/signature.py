"""Release signatures (SPEC C3): atomic container signatures over the digest, OpenPGP-signed.

A signature store holds `<algo>=<hex>/signature-1 … signature-9` (on disk or over HTTP).
Every configured keyring must be satisfied by at least one signature whose signed JSON
names exactly the digest being verified. OpenPGP itself is GnuPG's job (python-gnupg
drives Debian's gpg, one private home per keyring); what GnuPG cannot know is the
version controller's policy, written here: a valid signature by an *expired* key is
accepted (the controller never checks key expiry), an expired signature is not, the
signed `docker-reference` must be non-empty but is never compared with the pull spec,
and the signed JSON may hold no field beyond the atomic-signature schema.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import gnupg
import httpx

from kupgrade import intake
from kupgrade.errors import InputError, KupgradeError
from kupgrade.intake.http import bounded_get

SIGNATURE_TYPE = "atomic container signature"
MAX_SIGNATURES = 9  # signature-1 … signature-9, as the controller searches
# containers/image's iolimits.MaxSignatureBodySize: a larger signature is refused unread.
MAX_SIGNATURE_BYTES = 4 * 1024 * 1024
CACHE_SIZE = 64
VALID_DIGEST = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$")
VERIFICATION_ANNOTATION = "release.openshift.io/verification-config-map"
Clock = Callable[[], float]

_SCHEMA: dict[str, Any] = {
    "critical": {
        "type": str,
        "image": {"docker-manifest-digest": str},
        "identity": {"docker-reference": str},
    },
    "optional": {"creator": str, "timestamp": int},
}


class VerificationError(KupgradeError):
    """The digest is not verified; `errors` holds why each signature was rejected."""

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message, rule="SPEC C3")
        self.errors = errors or []

    def detail(self) -> str:
        return "; ".join(self.errors)


class SignatureRejectedError(Exception):
    """One signature does not satisfy one keyring."""


# --- the signed JSON --------------------------------------------------------------------------


def signature_document(digest: str, reference: str, creator: str, timestamp: int) -> bytes:
    doc = {
        "critical": {
            "type": SIGNATURE_TYPE,
            "image": {"docker-manifest-digest": digest},
            "identity": {"docker-reference": reference},
        },
        "optional": {"creator": creator, "timestamp": timestamp},
    }
    return json.dumps(doc, indent=2).encode()


def _strict(value: Any, schema: Any, path: str) -> Any:
    """Decode like Go's json with DisallowUnknownFields (keys match case-insensitively)."""
    if value is None:
        return None
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise SignatureRejectedError(
                f"json: cannot unmarshal {_json_type(value)} into Go struct field {path} of type object"
            )
        out: dict[str, Any] = {}
        for key, item in value.items():
            match = (
                key
                if key in schema
                else next((k for k in schema if k.lower() == key.lower()), None)
            )
            if match is None:
                raise SignatureRejectedError(f'json: unknown field "{key}"')
            out[match] = _strict(item, schema[match], f"{path}.{match}" if path else match)
        return out
    if schema is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise SignatureRejectedError(
                f"json: cannot unmarshal {_json_type(value)} into Go struct field {path} of type int64"
            )
        return value
    if not isinstance(value, str):
        raise SignatureRejectedError(
            f"json: cannot unmarshal {_json_type(value)} into Go struct field {path} of type string"
        )
    return value


def _json_type(value: Any) -> str:
    """The JSON type word Go's errors use for a decoded value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dict):
        return "object"
    return "array" if isinstance(value, list) else "string"


def check_signed_content(content: bytes, digest: str) -> None:
    """The atomic container signature rules; raises SignatureRejectedError with the controller's text."""
    try:
        value, _ = json.JSONDecoder().raw_decode(content.decode("utf-8").lstrip())
        intake.check_depth(value, "signature")
        doc = _strict(value, _SCHEMA, "") or {}
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SignatureRejectedError(f"the signature is not valid JSON: {exc}") from None
    except ValueError:
        raise SignatureRejectedError(
            "the signature is not valid JSON: a number has too many digits"
        ) from None
    except (RecursionError, InputError):
        raise SignatureRejectedError(
            "the signature is not valid JSON: it is nested too deeply"
        ) from None
    except SignatureRejectedError as exc:
        raise SignatureRejectedError(f"the signature is not valid JSON: {exc}") from None
    critical = doc.get("critical") or {}
    if critical.get("type") != SIGNATURE_TYPE:
        raise SignatureRejectedError("signature is not the correct type")
    if not (critical.get("identity") or {}).get("docker-reference"):
        raise SignatureRejectedError("signature must have an identity")
    if (critical.get("image") or {}).get("docker-manifest-digest") != digest:
        raise SignatureRejectedError("signature digest does not match")


# --- keyrings ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    fingerprint: str
    uids: tuple[str, ...]


class Keyring:
    """One verifier: the public keys of one keyring file, in a private GnuPG home."""

    def __init__(self, name: str, text: str | bytes, origin: str = "") -> None:
        self.name = name
        self._home = tempfile.mkdtemp(prefix="kupgrade-gpg-")
        try:
            self._load(text, origin)
        except BaseException:
            self.close()
            raise

    def _load(self, text: str | bytes, origin: str) -> None:
        name = self.name
        self._gpg = gnupg.GPG(gnupghome=self._home)
        # Bytes go to gpg as they are: armored or binary (dearmored) keyrings alike; a str
        # would be encoded with python-gnupg's latin-1 and fail on anything else.
        data = text.encode("utf-8") if isinstance(text, str) else text
        result = self._gpg.import_keys(data)
        if not result.fingerprints:
            self.close()
            raise InputError(
                f"{name} has no OpenPGP public key (armored or binary)",
                file=origin or None,
                rule="SPEC C3",
            )
        self.keys = tuple(
            Key(k["fingerprint"], tuple(k.get("uids", ()))) for k in self._gpg.list_keys()
        )

    @staticmethod
    def read(name: str, path: Path) -> Keyring:
        return Keyring(name, intake.read_file(path, "keyring"), str(path))

    def describe(self) -> str:
        return ", ".join(f"{k.fingerprint}: {', '.join(k.uids)}" for k in self.keys)

    def open(self, signature: bytes, now: float) -> bytes:
        """The signed content if a key of this ring made a valid, unexpired signature."""
        result = self._gpg.decrypt(signature)
        status = _status_lines(result.stderr or "")
        words = {line[0] for line in status}
        if "NODATA" in words or ("NEWSIG" not in words and "VALIDSIG" not in words):
            raise SignatureRejectedError("could not read the message: openpgp: invalid data")
        for bad, text in (
            ("NO_PUBKEY", "signature made by a key not in the keyring"),
            ("ERRSIG", "signature made by a key not in the keyring"),
            ("BADSIG", "signature error: openpgp: invalid signature: hash tag doesn't match"),
            ("EXPSIG", "signature expired"),
            ("REVKEYSIG", "signature made by a revoked key"),
        ):
            if bad in words:
                raise SignatureRejectedError(text)
        valid = [line for line in status if line[0] == "VALIDSIG"]
        if len(valid) != 1:
            raise SignatureRejectedError("invalid signature")
        expires = int(valid[0][4]) if len(valid[0]) > 4 and valid[0][4].isdigit() else 0
        if expires and now > expires:
            raise SignatureRejectedError(
                f"signature expired on {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(expires))}"
            )
        return bytes(result.data)

    def close(self) -> None:
        """Stop the home's gpg-agent (gpg starts one per home) and remove the home."""
        if os.path.isdir(self._home):
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(
                    ["gpgconf", "--homedir", self._home, "--kill", "all"],
                    capture_output=True,
                    timeout=10,
                    check=False,
                )
        shutil.rmtree(self._home, ignore_errors=True)


def _status_lines(stderr: str) -> list[list[str]]:
    prefix = "[GNUPG:] "
    return [line[len(prefix) :].split() for line in stderr.splitlines() if line.startswith(prefix)]


# --- stores -----------------------------------------------------------------------------------


class Store(Protocol):
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
        base = f"{self.base}/{digest_path(digest)}"
        for index in range(1, MAX_SIGNATURES + 1):
            url = f"{base}/signature-{index}"
            try:
                response, body = bounded_get(self.client, url, max_bytes=MAX_SIGNATURE_BYTES)
            except httpx.HTTPError as exc:
                yield RuntimeError(f"{url}: {exc}")
                continue
            if response.status_code == 404:
                return
            if response.status_code != 200:
                yield RuntimeError(f"{url}: HTTP {response.status_code}")
                continue
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

    def __init__(self, stores: list[Store]) -> None:
        self.stores = stores

    def __str__(self) -> str:
        return ", ".join(str(s) for s in self.stores)

    def signatures(self, digest: str) -> Iterator[bytes | Exception]:
        for store in self.stores:
            yield from store.signatures(digest)


def store_for(location: str, client: httpx.Client | None = None) -> Store:
    """A store from a directory path, file:// URL or http(s):// URL."""
    if location.startswith(("http://", "https://")):
        return HttpStore(location, client)
    return DirectoryStore(location.removeprefix("file://"))


# --- the verifier -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Verified:
    digest: str
    signed_by: dict[str, int]  # keyring name -> signature index that satisfied it


class ReleaseVerifier:
    """Every keyring must have signed the digest (SPEC C3); successes are cached (64)."""

    def __init__(
        self, keyrings: Mapping[str, Keyring], store: Store | None, clock: Clock = time.time
    ) -> None:
        self.keyrings = dict(keyrings)
        self.store = store
        self.clock = clock
        self._cache: OrderedDict[str, Verified] = OrderedDict()

    def __enter__(self) -> ReleaseVerifier:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        for keyring in self.keyrings.values():
            keyring.close()

    def __str__(self) -> str:
        text = "All release image digests must have GPG signatures from"
        if not self.keyrings:
            text += " <ERROR: no verifiers>"
        for name in sorted(self.keyrings):
            text += f" {name} ({self.keyrings[name].describe()})"
        text += " - will check for signatures in containers/image format at"
        return text + (" <ERROR: no store>" if self.store is None else f" {self.store}")

    def verify(self, digest: str) -> Verified:
        if not self.keyrings or self.store is None:
            raise VerificationError(
                "the release verifier is incorrectly configured, unable to verify digests"
            )
        if not digest:
            raise VerificationError(
                "release images that are not accessed via digest cannot be verified"
            )
        if not VALID_DIGEST.match(digest):
            raise VerificationError(
                f"the provided release image digest has an invalid format: {json.dumps(digest)}"
            )
        if digest in self._cache:
            self._cache.move_to_end(digest)
            return self._cache[digest]
        remaining = dict(self.keyrings)
        signed_by: dict[str, int] = {}
        errors: list[str] = []
        for index, item in enumerate(self.store.signatures(digest), start=1):
            if isinstance(item, Exception):
                errors.append(f"signature-{index}: {item}")
                continue
            for name in sorted(remaining):
                try:
                    content = remaining[name].open(item, self.clock())
                    check_signed_content(content, digest)
                except SignatureRejectedError as exc:
                    errors.append(f"signature-{index} for keyring {name}: {exc}")
                    continue
                del remaining[name]
                signed_by[name] = index
            if not remaining:
                break
        if remaining:
            raise VerificationError(
                f"unable to verify {digest} against keyrings: {', '.join(sorted(remaining))}",
                errors,
            )
        verified = Verified(digest, signed_by)
        self._cache[digest] = verified
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return verified


# --- verifier configuration from the payload ------------------------------------------------


@dataclass(frozen=True)
class VerifierConfig:
    """What a verification ConfigMap asks for: keyring texts by name and store URLs."""

    keyrings: dict[str, str]
    stores: list[str]


def config_from_data(source: str, data: Mapping[str, Any]) -> VerifierConfig:
    """Read `verifier-public-key-*` and `store-*` keys (library-go NewFromConfigMapData)."""
    keyrings: dict[str, str] = {}
    stores: list[str] = []
    for key in sorted(data):
        value = str(data[key])
        if key.startswith("verifier-public-key-"):
            keyrings[key] = value
        elif key.startswith("store-"):
            url = value.strip()
            if not re.match(r"^(file|https?)://", url):
                raise InputError(
                    f'{source} has an invalid key "{key}": must be a valid URL with scheme file://, http://, or https://',
                    rule="SPEC C3",
                )
            stores.append(url)
    if not stores:
        raise InputError(
            f"{source} did not provide any signature stores to read from and cannot be used",
            rule="SPEC C3",
        )
    if not keyrings:
        raise InputError(
            f"{source} did not provide any GPG public keys to verify signatures from and cannot be used",
            rule="SPEC C3",
        )
    return VerifierConfig(keyrings, stores)


def config_from_manifests(objects: list[dict[str, Any]]) -> VerifierConfig | None:
    """The first ConfigMap annotated for verification decides, even when unusable."""
    for obj in objects:
        metadata = obj.get("metadata") or {}
        annotations = metadata.get("annotations") or {}
        if obj.get("kind") != "ConfigMap" or VERIFICATION_ANNOTATION not in annotations:
            continue
        source = f"the config map {metadata.get('namespace', '')}/{metadata.get('name', '')}"
        data = obj.get("data")
        return config_from_data(source, data if isinstance(data, dict) else {})
    return None


# --- signing ----------------------------------------------------------------------------------


def sign(
    digest: str,
    reference: str,
    key: str,
    *,
    creator: str,
    clock: Clock = time.time,
    gnupghome: str | None = None,
    expires_in: int | None = None,
) -> bytes:
    """An OpenPGP-signed atomic container signature for `digest`, made with a local key.

    `expires_in` (seconds) gives the signature a lifetime; verifiers refuse it afterwards.
    """
    if not VALID_DIGEST.match(digest):
        raise InputError(f"{digest!r} is not a digest (sha256:<hex>)", rule="SPEC C3")
    gpg = gnupg.GPG(gnupghome=gnupghome) if gnupghome else gnupg.GPG()
    document = signature_document(digest, reference, creator, int(clock()))
    extra = ["--default-sig-expire", f"seconds={expires_in}"] if expires_in else []
    result = gpg.sign(document, keyid=key, binary=True, extra_args=extra)
    if not result.data:
        raise KupgradeError(
            f"gpg could not sign with key {key}: {result.status or 'no secret key'}",
            field="--key",
            hint="list secret keys with `gpg --list-secret-keys`",
        )
    return bytes(result.data)


def next_signature_path(root: Path, digest: str) -> Path:
    """The first free signature-N of the digest's directory in a store."""
    directory = root / digest_path(digest)
    for index in range(1, MAX_SIGNATURES + 1):
        path = directory / f"signature-{index}"
        if not path.exists():
            return path
    raise InputError(f"already holds {MAX_SIGNATURES} signatures for {digest}", file=str(directory))
