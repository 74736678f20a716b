"""Keyrings: the public keys one verifier trusts, each in a private GnuPG home whose
agent is stopped when the keyring is closed."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import gnupg

from kupgrade import intake
from kupgrade.errors import InputError
from kupgrade.release.verify.documents import SignatureRejectedError

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
        expires = int(valid[0][4]) if len(valid[0]) > 4 and valid[0][4].isdecimal() else 0
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
