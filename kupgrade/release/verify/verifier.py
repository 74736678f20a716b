"""The release verifier: every keyring must be satisfied by one signature of the digest;
and its configuration from the payload's verification ConfigMap."""

from __future__ import annotations

import json
import re
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kupgrade.errors import InputError
from kupgrade.release.verify.documents import (
    CACHE_SIZE,
    VALID_DIGEST,
    VERIFICATION_ANNOTATION,
    Clock,
    SignatureRejectedError,
    VerificationError,
    check_signed_content,
)
from kupgrade.release.verify.keyrings import Keyring
from kupgrade.release.verify.stores import SignatureStore

# --- the verifier -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Verified:
    digest: str
    signed_by: dict[str, int]  # keyring name -> signature index that satisfied it


class ReleaseVerifier:
    """Every keyring must have signed the digest (SPEC C3); successes are cached (64)."""

    def __init__(
        self,
        keyrings: Mapping[str, Keyring],
        store: SignatureStore | None,
        clock: Clock = time.time,
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


# What the controller logs when no payload ConfigMap configures verification
# (cluster-version-operator pkg/cvo/cvo.go, when verify.NewFromManifests finds none).
NO_VERIFICATION_WARNING = (
    "WARNING: No release authenticity verification is configured, all releases are "
    "considered unverified"
)


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
