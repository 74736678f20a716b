"""Kubernetes protobuf request bodies (kubectl 1.33's typed creates): read into the JSON
the server takes, exactly, and anything else refused with a 4xx, never a 500."""

from __future__ import annotations

import base64

import pytest

from kupgrade.apiserver import protobuf
from kupgrade.apiserver.protobuf import field as _f
from tests.support.fuzzkit import fuzz, mutated


def _entry(number: int, key: str, value: bytes | str) -> bytes:
    return _f(number, _f(1, key) + _f(2, value))


def _framed(kind: str, raw: bytes) -> bytes:
    unknown = (
        _f(1, _f(1, "v1") + _f(2, kind)) + _f(2, raw) + _f(4, "application/vnd.kubernetes.protobuf")
    )
    return protobuf.PREFIX + unknown


META = (
    _f(1, "settings")
    + _f(3, "shop")
    + _entry(11, "app", "web")
    + _entry(12, "note", "x")
    + _f(8, _f(1, 1714816800))
    + _f(14, "kubernetes")
)
CONFIGMAP = _framed(
    "ConfigMap",
    _f(1, META) + _entry(2, "a", "b") + _entry(3, "blob", b"\x00\xff") + _f(4, 1) + _f(99, "skip"),
)
SECRET = _framed("Secret", _f(1, _f(1, "pw")) + _entry(2, "pw", b"hunter2") + _f(3, "Opaque"))


def test_a_configmap_reads_as_its_json() -> None:
    assert protobuf.decoded(CONFIGMAP) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "settings",
            "namespace": "shop",
            "labels": {"app": "web"},
            "annotations": {"note": "x"},
            "creationTimestamp": "2024-05-04T10:00:00Z",
            "finalizers": ["kubernetes"],
        },
        "data": {"a": "b"},
        "binaryData": {"blob": base64.b64encode(b"\x00\xff").decode()},
        "immutable": True,
    }


def test_a_secret_keeps_its_bytes_as_base64() -> None:
    doc = protobuf.decoded(SECRET)
    assert doc["data"] == {"pw": "aHVudGVyMg=="} and doc["type"] == "Opaque"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"{}", "prefix"),
        (protobuf.PREFIX + b"\x0a", "past the end"),
        (_framed("Deployment", b""), "a Deployment in protobuf is not read here"),
        (protobuf.PREFIX + b"\x0b", "wire type 3"),
        (_framed("ConfigMap", _f(1, _f(1, b"\xff\xfe"))), "not UTF-8"),
    ],
)
def test_what_cannot_be_read_is_named(body: bytes, said: str) -> None:
    with pytest.raises(protobuf.ProtobufError, match=said):
        protobuf.decoded(body)


def test_fuzz_protobuf_bodies() -> None:
    fuzz(
        "protobuf-bodies",
        mutated([CONFIGMAP, SECRET, _framed("Namespace", _f(1, _f(1, "team")))]),
        protobuf.decoded,
        (protobuf.ProtobufError,),
        0.02,
    )
