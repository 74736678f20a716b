"""Kubernetes' protobuf: request bodies (application/vnd.kubernetes.protobuf), for the
kinds kubectl's typed `create` commands send that way: kubectl 1.33 creates a ConfigMap,
Secret, Namespace or ServiceAccount in protobuf and does not fall back to JSON when the
server answers 415.

The wire format is apimachinery's (pkg/runtime/serializer/protobuf/protobuf.go): the
4-byte prefix "k8s\\x00", then a runtime.Unknown whose typeMeta names the kind and whose
raw bytes are the object's message (k8s.io/api core/v1 generated.proto). The protobuf
wire format takes a few lines; the field numbers below are those .proto files' (cited
per message; kubernetes/kubernetes staging/src/k8s.io/api/core/v1/generated.proto at
0032f46b, apimachinery pkg/runtime/generated.proto at 203d8ac8, and meta/v1 types.go's
protobuf tags at 007b1173), read here into the JSON the rest of the server takes. No library decodes
these messages without their generated Go (or a protoc build of the .proto files).
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Iterator
from typing import Any

PREFIX = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAX_DEPTH = 32  # nesting a body may have (these messages nest four deep)

Kind = Any  # "string" | "bytes" | "bool" | "int" | ("message", name) | ("map", k, v)
# | ("repeated", kind)

# name -> {field number: (JSON name, kind)}
MESSAGES: dict[str, dict[int, tuple[str, Kind]]] = {
    # apimachinery pkg/runtime/generated.proto
    "Unknown": {
        1: ("typeMeta", ("message", "TypeMeta")),
        2: ("raw", "raw"),
        3: ("contentEncoding", "string"),
        4: ("contentType", "string"),
    },
    "TypeMeta": {1: ("apiVersion", "string"), 2: ("kind", "string")},
    # apimachinery pkg/apis/meta/v1/generated.proto
    "Time": {1: ("seconds", "int"), 2: ("nanos", "int")},
    "ObjectMeta": {
        1: ("name", "string"),
        2: ("generateName", "string"),
        3: ("namespace", "string"),
        4: ("selfLink", "string"),
        5: ("uid", "string"),
        6: ("resourceVersion", "string"),
        7: ("generation", "int"),
        8: ("creationTimestamp", ("message", "Time")),
        9: ("deletionTimestamp", ("message", "Time")),
        10: ("deletionGracePeriodSeconds", "int"),
        11: ("labels", ("map", "string", "string")),
        12: ("annotations", ("map", "string", "string")),
        13: ("ownerReferences", ("repeated", ("message", "OwnerReference"))),
        14: ("finalizers", ("repeated", "string")),
    },
    "OwnerReference": {
        1: ("kind", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
        5: ("apiVersion", "string"),
        6: ("controller", "bool"),
        7: ("blockOwnerDeletion", "bool"),
    },
    # k8s.io/api core/v1/generated.proto
    "ConfigMap": {
        1: ("metadata", ("message", "ObjectMeta")),
        2: ("data", ("map", "string", "string")),
        3: ("binaryData", ("map", "string", "bytes")),
        4: ("immutable", "bool"),
    },
    "Secret": {
        1: ("metadata", ("message", "ObjectMeta")),
        2: ("data", ("map", "string", "bytes")),
        3: ("type", "string"),
        4: ("stringData", ("map", "string", "string")),
        5: ("immutable", "bool"),
    },
    "Namespace": {
        1: ("metadata", ("message", "ObjectMeta")),
        2: ("spec", ("message", "NamespaceSpec")),
    },
    "NamespaceSpec": {1: ("finalizers", ("repeated", "string"))},
    "ServiceAccount": {
        1: ("metadata", ("message", "ObjectMeta")),
        2: ("secrets", ("repeated", ("message", "ObjectReference"))),
        3: ("imagePullSecrets", ("repeated", ("message", "LocalObjectReference"))),
        4: ("automountServiceAccountToken", "bool"),
    },
    "ObjectReference": {
        1: ("kind", "string"),
        2: ("namespace", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
        5: ("apiVersion", "string"),
        6: ("resourceVersion", "string"),
        7: ("fieldPath", "string"),
    },
    "LocalObjectReference": {1: ("name", "string")},
}
KINDS = ("ConfigMap", "Secret", "Namespace", "ServiceAccount")


def varint(n: int) -> bytes:
    """A non-negative number as protobuf's base-128 varint."""
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, payload: bytes | str | int) -> bytes:
    """One field written: a number or bool as a varint, a string or a message (its
    bytes) length-delimited. The OpenAPI v2 document (openapi_v2.py) is written so."""
    if isinstance(payload, int):
        return varint(number << 3) + varint(int(payload))
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


class ProtobufError(ValueError):
    """The body is not a Kubernetes protobuf object this server reads."""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ProtobufError("a varint runs past the end of the body")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        shift += 7
        if not byte & 0x80:
            return value, at


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of every field: a varint as an int, the rest as bytes."""
    at = 0
    while at < len(data):
        tag, at = _varint(data, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, at = _varint(data, at)
            yield number, value
        elif wire == 2:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise ProtobufError("a field runs past the end of the body")
            yield number, data[at : at + size]
            at += size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if at + width > len(data):
                raise ProtobufError("a field runs past the end of the body")
            yield number, data[at : at + width]
            at += width
        else:
            raise ProtobufError(f"field {number} has wire type {wire}, which is not read")


def message(name: str, data: bytes, depth: int = 0) -> dict[str, Any]:
    """A message's fields as JSON (unknown fields skipped, as protobuf does)."""
    if depth > MAX_DEPTH:
        raise ProtobufError("the body nests too deep")
    schema = MESSAGES[name]
    out: dict[str, Any] = {}
    for number, value in _fields(data):
        found = schema.get(number)
        if found is None:
            continue
        key, kind = found
        if isinstance(kind, tuple) and kind[0] == "repeated":
            out.setdefault(key, []).append(_value(kind[1], value, depth))
        elif isinstance(kind, tuple) and kind[0] == "map":
            entry = dict(_fields(_bytes(value)))
            k = _value(kind[1], entry.get(1, b""), depth)
            out.setdefault(key, {})[k] = _value(kind[2], entry.get(2, b""), depth)
        else:
            out[key] = _value(kind, value, depth)
    return _time(out) if name == "Time" else out


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ProtobufError("a length-delimited field holds a number")
    return value


def _value(kind: Kind, value: int | bytes, depth: int) -> Any:
    if kind == "int":
        if not isinstance(value, int):
            raise ProtobufError("a number field holds bytes")
        return value - (1 << 64) if value >= 1 << 63 else value
    if kind == "bool":
        return bool(value)
    if kind == "raw":
        return _bytes(value)
    if kind == "bytes":
        return base64.b64encode(_bytes(value)).decode()
    if kind == "string":
        try:
            return _bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise ProtobufError("a string field is not UTF-8") from None
    return message(kind[1], _bytes(value), depth + 1)


def _time(fields: dict[str, Any]) -> Any:
    moment = datetime.datetime.fromtimestamp(int(fields.get("seconds", 0)), datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def decoded(body: bytes) -> dict[str, Any]:
    """The object a protobuf request body holds, as JSON."""
    if not body.startswith(PREFIX):
        raise ProtobufError('the body does not start with the prefix "k8s\\x00"')
    try:
        unknown = message("Unknown", body[len(PREFIX) :])
        meta = unknown.get("typeMeta") or {}
        kind = str(meta.get("kind", ""))
        if kind not in KINDS:
            raise ProtobufError(
                f"a {kind or 'body without a kind'} in protobuf is not read here; "
                f"send it as application/json (protobuf: {', '.join(KINDS)})"
            )
        obj = message(kind, unknown.get("raw", b""))
    except (RecursionError, OverflowError, ValueError) as exc:
        raise ProtobufError(str(exc)) from None
    return {"apiVersion": meta.get("apiVersion", "v1"), "kind": kind, **obj}
