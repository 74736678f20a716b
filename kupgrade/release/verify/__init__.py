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

from kupgrade.release.verify.documents import (
    MAX_SIGNATURES,
    VALID_DIGEST,
    SignatureRejectedError,
    VerificationError,
    check_signed_content,
    signature_document,
)
from kupgrade.release.verify.keyrings import Key, Keyring
from kupgrade.release.verify.signing import next_signature_path, sign
from kupgrade.release.verify.stores import (
    DirectoryStore,
    HttpStore,
    MemoryStore,
    SerialStore,
    SignatureStore,
    digest_path,
    store_for,
)
from kupgrade.release.verify.verifier import (
    NO_VERIFICATION_WARNING,
    ReleaseVerifier,
    Verified,
    VerifierConfig,
    config_from_data,
    config_from_manifests,
)

__all__ = [
    "MAX_SIGNATURES",
    "NO_VERIFICATION_WARNING",
    "VALID_DIGEST",
    "DirectoryStore",
    "HttpStore",
    "Key",
    "Keyring",
    "MemoryStore",
    "ReleaseVerifier",
    "SerialStore",
    "SignatureRejectedError",
    "SignatureStore",
    "VerificationError",
    "Verified",
    "VerifierConfig",
    "check_signed_content",
    "config_from_data",
    "config_from_manifests",
    "digest_path",
    "next_signature_path",
    "sign",
    "signature_document",
    "store_for",
]
