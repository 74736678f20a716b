"""How a simulated cluster's version controller reaches its releases: the payloads
directory in its home, the simulated registry, and signature verification when the
profile asks for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kupgrade.controllers.version.controller import Wiring
from kupgrade.release.verify import Keyring, ReleaseVerifier, store_for
from kupgrade.sim.openshift.releases import release_source
from kupgrade.sim.profile import Spec


def wiring_for(root: Path, spec: Spec) -> Wiring:
    """Where the cluster's controllers keep payloads and read releases from (its home:
    the simulated registry), and how they verify them."""
    verify = None
    if spec.verification is not None:
        verify = _verifier(spec)
    return Wiring(
        root / "payloads", lambda image, version: release_source(spec, root, image, version), verify
    )


def _verifier(spec: Spec) -> Any:

    assert spec.verification is not None
    keyring_path = Path(spec.verification.keyring)
    signatures = spec.verification.store

    def verify(digest: str) -> None:
        with ReleaseVerifier(
            {keyring_path.stem: Keyring.read(keyring_path.stem, keyring_path)},
            store_for(signatures),
        ) as verifier:
            verifier.verify(digest)

    return verify
