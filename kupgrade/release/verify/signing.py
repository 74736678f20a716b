"""Signing a release digest into a store, as `release sign` does."""

from __future__ import annotations

import time
from pathlib import Path

import gnupg

from kupgrade.errors import InputError, KupgradeError
from kupgrade.release.verify.documents import (
    MAX_SIGNATURES,
    VALID_DIGEST,
    Clock,
    signature_document,
)
from kupgrade.release.verify.stores import digest_path

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
