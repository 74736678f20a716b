"""Release signature verification (SPEC C3) with real GnuPG, real keys and real stores.

The conformance cases use library-go's own signatures and keyrings (including a key that
expired in 2021); the round trips sign with keys generated here.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from kupgrade.errors import InputError
from kupgrade.release.verify import (
    NO_VERIFICATION_WARNING,
    DirectoryStore,
    HttpStore,
    Keyring,
    MemoryStore,
    ReleaseVerifier,
    SignatureRejectedError,
    SignatureStore,
    VerificationError,
    check_signed_content,
    config_from_data,
    config_from_manifests,
    next_signature_path,
    sign,
    signature_document,
)
from tests.support.conformance import conformance_cases, conformance_path, need_case

pytestmark = pytest.mark.skipif(
    shutil.which("gpg") is None,
    reason="GnuPG (Debian's gnupg) is not installed; .ci/run installs it",
)
DIGEST = "sha256:" + "ab" * 32


def _doc() -> dict[str, Any]:
    return yaml.safe_load(conformance_path("cvo", "signatures", "cases.yaml").read_text())


class _StoreHandler(http.server.SimpleHTTPRequestHandler):
    """Files of a signature store; paths in `statuses` answer with that status instead."""

    statuses: ClassVar[dict[str, int]] = {}

    def do_GET(self) -> None:
        status = self.statuses.get(self.path)
        if status is None:
            super().do_GET()
            return
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_a: Any) -> None:
        pass


@contextlib.contextmanager
def _serve(root: Path, statuses: dict[str, int] | None = None) -> Iterator[str]:
    """A real HTTP server on loopback serving `root` as a signature store."""
    handler_class = type("Handler", (_StoreHandler,), {"statuses": dict(statuses or {})})
    handler = functools.partial(handler_class, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _constructed(root: Path, entries: list[dict[str, Any]], target: Path) -> dict[str, int]:
    """Writes the entries' signatures; returns the HTTP statuses some indexes answer with."""
    statuses: ClassVar[dict[str, int]] = {}
    for entry in entries:
        name = f"/{entry['digest_dir']}/signature-{entry['n']}"
        if entry.get("http_status") is not None:
            statuses[name] = int(entry["http_status"])
        if entry.get("from") is None:
            continue
        data = bytearray((root / entry["from"]).read_bytes())
        tamper = entry.get("tamper") or {}
        if "flip_byte" in tamper:
            data[tamper["flip_byte"]] ^= 0xFF
        if "truncate_to" in tamper:
            data = data[: tamper["truncate_to"]]
        directory = target / entry["digest_dir"]
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"signature-{entry['n']}").write_bytes(bytes(data))
    return statuses


@contextlib.contextmanager
def _store(root: Path, spec: dict[str, Any], tmp: Path) -> Iterator[SignatureStore]:
    kind = spec["kind"]
    if kind == "memory":
        yield MemoryStore(
            {k: [(root / f).read_bytes() for f in v] for k, v in spec["signatures"].items()}
        )
        return
    statuses: ClassVar[dict[str, int]] = {}
    if kind.startswith("constructed"):
        statuses = _constructed(root, spec["entries"], tmp)
        directory = tmp
    else:
        directory = root / spec["path"]
    if kind in ("http", "constructed-http"):
        with _serve(directory, statuses) as url:
            yield HttpStore(url)
    else:
        yield DirectoryStore(directory)


SIGNATURES = ("cvo", "signatures", "cases.yaml")


@pytest.mark.parametrize("case", conformance_cases("cases", *SIGNATURES))
def test_signature_case(case: Any, tmp_path: Path) -> None:
    """SPEC C3: verdict and the controller's exact top-level error."""
    root = conformance_path("cvo", "signatures")
    case = need_case(case, *SIGNATURES)
    keyrings = {name: Keyring.read(name, root / file) for name, file in case["keyrings"].items()}
    with (
        _store(root, case["store"], tmp_path) as store,
        ReleaseVerifier(keyrings, store) as verifier,
    ):
        expect = case["expect"]
        digest = case["digest"]
        if "release_pull_spec" in case:  # the release as a user names it: verified by digest
            name, _, digest = case["release_pull_spec"].rpartition("@")
            assert name and digest == case["digest"]
        if expect["verdict"] == "valid":
            assert expect["error"] is None
            assert verifier.verify(digest).digest == case["digest"]
            return
        with pytest.raises(VerificationError) as caught:
            verifier.verify(case["digest"])
        _same_error(caught.value.message, expect["error"], expect.get("error_keyring_list_order"))
        assert expect.get("nested_error_contains", "") in caught.value.detail()


KEYRINGS = " against keyrings: "


def _same_error(got: str, want: str, order: Any) -> None:
    """The exact error; where the case says the keyring list's order is not fixed
    (library-go joins the unsatisfied verifiers of a map), those names as a set."""
    if order in (None, "", "exact", "fixed", "as_given", True) or KEYRINGS not in want:
        assert got == want
        return
    head, _, names = want.partition(KEYRINGS)
    got_head, _, got_names = got.partition(KEYRINGS)
    assert got_head == head
    assert sorted(got_names.split(", ")) == sorted(names.split(", "))


@pytest.mark.parametrize("case", conformance_cases("config_cases", *SIGNATURES))
def test_verifier_configuration_case(case: Any) -> None:
    root = conformance_path("cvo", "signatures")
    case = need_case(case, *SIGNATURES)
    expect = case["expect"]
    if "data" in case:
        data = {
            k: (root / v[len("<contents of ") : -1]).read_text()
            if v.startswith("<contents of ")
            else v
            for k, v in case["data"].items()
        }
        attempts = [
            lambda: config_from_data(
                "the config map openshift-config-managed/release-verification", data
            )
        ]
    else:
        groups = (
            [[f] for f in case["manifests_each"]]
            if "manifests_each" in case
            else [case.get("manifests", [case.get("manifest")])]
        )
        attempts = [
            functools.partial(
                config_from_manifests, [yaml.safe_load((root / f).read_text()) for f in group if f]
            )
            for group in groups
        ]
    for attempt in attempts:
        if "error" in expect:
            with pytest.raises(InputError) as caught:
                attempt()
            assert caught.value.message == expect["error"]
        elif expect.get("verifier", "") is None:
            assert attempt() is None
            if "log" in expect:  # what the controller says when nothing is configured
                assert expect["log"] == NO_VERIFICATION_WARNING
        else:
            config = attempt()
            assert config is not None
            assert sorted(config.keyrings) == expect["verifiers"]
            assert config.stores == expect["stores"]


@pytest.mark.parametrize("case", conformance_cases("string_cases", *SIGNATURES))
def test_verifier_description(case: Any) -> None:
    root = conformance_path("cvo", "signatures")
    case = need_case(case, *SIGNATURES)
    keyrings = {name: Keyring.read(name, root / file) for name, file in case["verifiers"].items()}
    spec = case["store"] or ""
    store: SignatureStore | None = None
    if spec.startswith("file store "):
        store = DirectoryStore(spec.removeprefix("file store "))
    elif spec.startswith("http store "):
        store = HttpStore(spec.removeprefix("http store "))
    with ReleaseVerifier(keyrings, store) as verifier:
        assert str(verifier) == case["expect"]


# --- signing with keys made here ------------------------------------------------------------


def _signed_store(
    tmp: Path, home: str, who: str, digest: str = DIGEST, **kw: Any
) -> DirectoryStore:
    data = sign(
        digest, "example.com/release:1", f"{who}@example.com", creator="test", gnupghome=home, **kw
    )
    path = next_signature_path(tmp, digest)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return DirectoryStore(tmp)


def test_round_trip_with_a_fresh_key(
    tmp_path: Path, gnupg_home: tuple[str, dict[str, Path]]
) -> None:
    home, keys = gnupg_home
    store = _signed_store(tmp_path, home, "release")
    with ReleaseVerifier({"release": Keyring.read("release", keys["release"])}, store) as verifier:
        assert verifier.verify(DIGEST).signed_by == {"release": 1}


def test_another_key_and_another_digest_are_refused(
    tmp_path: Path, gnupg_home: tuple[str, dict[str, Path]]
) -> None:
    home, keys = gnupg_home
    store = _signed_store(tmp_path, home, "other")
    ring = {"release": Keyring.read("release", keys["release"])}
    with (
        ReleaseVerifier(ring, store) as verifier,
        pytest.raises(VerificationError, match="against keyrings: release"),
    ):
        verifier.verify(DIGEST)
    # a genuine signature copied under another digest's directory
    other = "sha256:" + "cd" * 32
    replay = tmp_path / "replay"
    target = next_signature_path(replay, other)
    target.parent.mkdir(parents=True)
    target.write_bytes(
        next(iter(_signed_store(tmp_path / "s2", home, "release").signatures(DIGEST)))
    )  # type: ignore[arg-type]
    with ReleaseVerifier(
        {"release": Keyring.read("release", keys["release"])}, DirectoryStore(replay)
    ) as verifier:
        with pytest.raises(VerificationError) as caught:
            verifier.verify(other)
        assert "signature digest does not match" in caught.value.detail()


def test_every_keyring_must_sign_and_signatures_are_searched_in_order(
    tmp_path: Path, gnupg_home: tuple[str, dict[str, Path]]
) -> None:
    home, keys = gnupg_home
    _signed_store(tmp_path, home, "other")
    store = _signed_store(tmp_path, home, "release")  # signature-2
    rings = {name: Keyring.read(name, keys[name]) for name in ("release", "other")}
    with ReleaseVerifier(rings, store) as verifier:
        assert verifier.verify(DIGEST).signed_by == {"other": 1, "release": 2}


def test_an_expired_signature_is_refused(
    tmp_path: Path, gnupg_home: tuple[str, dict[str, Path]]
) -> None:
    """Key expiry is ignored (SPEC C3 as the controller), signature expiry is not."""
    home, keys = gnupg_home
    store = _signed_store(tmp_path, home, "release", expires_in=86400)
    ring = {"release": Keyring.read("release", keys["release"])}
    with ReleaseVerifier(ring, store) as verifier:
        verifier.verify(DIGEST)
    with ReleaseVerifier(
        {"release": Keyring.read("release", keys["release"])},
        store,
        lambda: time.time() + 3 * 86400,
    ) as later:
        with pytest.raises(VerificationError) as caught:
            later.verify(DIGEST)
        assert "signature expired" in caught.value.detail()


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (
            b'{"critical": {"type": "atomic container signature", "image": {"docker-manifest-digest": "%s"}, '
            b'"identity": {"docker-reference": "x"}, "extra": 1}}',
            "unknown field",
        ),
        (
            b'{"critical": {"type": "cosign", "image": {"docker-manifest-digest": "%s"}, '
            b'"identity": {"docker-reference": "x"}}}',
            "signature is not the correct type",
        ),
        (
            b'{"critical": {"type": "atomic container signature", "image": {"docker-manifest-digest": "%s"}, '
            b'"identity": {"docker-reference": ""}}}',
            "signature must have an identity",
        ),
        (
            b'{"critical": {"type": "atomic container signature", "image": {"docker-manifest-digest": "%s"}, '
            b'"identity": {"docker-reference": "x"}}, "optional": {"timestamp": "soon"}}',
            "not valid JSON",
        ),
        (b"not json %s", "not valid JSON"),
    ],
)
def test_signed_content_rules(content: bytes, error: str) -> None:
    with pytest.raises(SignatureRejectedError, match=error):
        check_signed_content(content.replace(b"%s", DIGEST.encode()), DIGEST)


def test_signed_content_of_our_own_documents_passes() -> None:
    check_signed_content(signature_document(DIGEST, "example.com/r:1", "kupgrade", 1), DIGEST)
    with pytest.raises(SignatureRejectedError, match="digest does not match"):
        check_signed_content(signature_document("sha256:" + "00" * 32, "r", "kupgrade", 1), DIGEST)


def test_a_store_holds_at_most_nine_signatures(tmp_path: Path) -> None:
    directory = tmp_path / ("sha256=" + "ab" * 32)
    directory.mkdir()
    for index in range(1, 10):
        (directory / f"signature-{index}").write_bytes(b"x")
    with pytest.raises(InputError, match="already holds 9 signatures"):
        next_signature_path(tmp_path, DIGEST)


def test_an_invalid_keyring_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.asc"
    bad.write_text("not a key")
    with pytest.raises(InputError, match="bad has no OpenPGP public key"):
        Keyring.read("bad", bad)


RH = "sha256:e3f12513a4b22a2d7c0e7c9207f52128113758d9d68c7d06b11a0ac7672966f7"


@pytest.mark.parametrize(
    ("statuses", "verdict", "nested"),
    [
        ({1: 500}, "valid", ""),  # recorded, and the next index is tried
        ({1: 404}, "invalid", "no more signatures to check"),  # 404 ends the search
        ({1: 204}, "valid", ""),  # an empty 2xx body is skipped
    ],
)
def test_http_store_statuses(
    tmp_path: Path, statuses: dict[int, int], verdict: str, nested: str
) -> None:
    """library-go sigstore checkHTTPSignatures for every status branch, on a real server."""
    root = conformance_path("cvo", "signatures")
    folder = f"sha256={RH.removeprefix('sha256:')}"
    entries = [
        {"digest_dir": folder, "n": n, "http_status": status} for n, status in statuses.items()
    ] + [{"digest_dir": folder, "n": 2, "from": f"signatures/{folder}/signature-1"}]
    keyrings = {"redhat": Keyring.read("redhat", root / "keyrings" / "redhat.txt")}
    spec = {"kind": "constructed-http", "entries": entries}
    with _store(root, spec, tmp_path) as store, ReleaseVerifier(keyrings, store) as verifier:
        if verdict == "valid":
            assert verifier.verify(RH).digest == RH
            return
        with pytest.raises(VerificationError) as caught:
            verifier.verify(RH)
        assert nested in caught.value.detail()
