"""The OpenAPI v2 document (/openapi/v2), which kubectl up to 1.27 reads before it applies,
validates or explains anything: client-go's DiscoveryClient.OpenAPISchema asks for it in
gnostic's protobuf (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`) and
cannot read JSON, so the document is encoded here in that protobuf.

The encoding is written by hand: the message types are those of gnostic's
openapiv2/OpenAPIv2.proto (google/gnostic; the field numbers below are that file's), the
protobuf wire format takes a few lines, and a generated module would need protoc at
build time for the few fields kubectl reads. The schemas are openapi.py's, converted
from OpenAPI v3 to v2 as kube-openapi does (refs under #/definitions, int-or-string as
type string, format int-or-string).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import yaml

from kupgrade.apiserver import openapi
from kupgrade.apiserver.protobuf import field as _field

DEFINITIONS = "#/definitions/"
# What kube-openapi answers with (the "@" of the type asked for does not parse as a
# media type: Go's mime package refuses it).
PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def _named_any(name: str, value: Any) -> bytes:
    """NamedAny{name=1, value=2 Any{yaml=2}}: how gnostic keeps a vendor extension."""
    return _field(1, name) + _field(2, _field(2, yaml.safe_dump(value, default_flow_style=True)))


def v2_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An openapi.py (v3) schema as OpenAPI v2 writes it."""
    if "$ref" in schema:
        out = {"$ref": DEFINITIONS + schema["$ref"].removeprefix(openapi.SCHEMAS)}
        return {
            **out,
            **({"description": schema["description"]} if "description" in schema else {}),
        }
    out = {k: v for k, v in schema.items() if k not in ("properties", "items")}
    if out.pop("x-kubernetes-int-or-string", False):
        out.update(type="string", format="int-or-string")
    if "properties" in schema:
        out["properties"] = {k: v2_schema(v) for k, v in schema["properties"].items()}
    if "items" in schema:
        out["items"] = v2_schema(schema["items"])
    return out


def _schema(s: dict[str, Any]) -> bytes:
    """gnostic Schema: _ref=1, format=2, description=4, required=19, type=22 TypeItem,
    items=23 ItemsItem, properties=25 Properties, vendor_extension=31."""
    out = b""
    if "$ref" in s:
        out += _field(1, s["$ref"])
    if "format" in s:
        out += _field(2, s["format"])
    if s.get("description"):
        out += _field(4, s["description"])
    for name in s.get("required", ()):
        out += _field(19, name)
    if "type" in s:
        out += _field(22, _field(1, s["type"]))
    if "items" in s:
        out += _field(23, _field(1, _schema(s["items"])))
    if "properties" in s:
        named = b"".join(
            _field(1, _field(1, k) + _field(2, _schema(v))) for k, v in s["properties"].items()
        )
        out += _field(25, named)
    for key, value in s.items():
        if key.startswith("x-"):
            out += _field(31, _named_any(key, value))
    return out


def _operation(op: dict[str, Any]) -> bytes:
    """gnostic Operation: operation_id=5, parameters=8 (each a ParametersItem{parameter=1
    Parameter{non_body_parameter=2 NonBodyParameter{query_parameter_sub_schema=3
    QueryParameterSubSchema{in=2, description=3, name=4, type=6}}}}), vendor_extension=13.
    kubectl's queryparams.go reads a PATCH's parameters and its group-version-kind."""
    out = _field(5, op["operationId"])
    for p in op.get("parameters", ()):
        query = _field(2, "query") + _field(3, p["description"]) + _field(4, p["name"])
        query += _field(6, "string")
        out += _field(8, _field(1, _field(2, _field(3, query))))
    for key in ("x-kubernetes-action", "x-kubernetes-group-version-kind"):
        out += _field(13, _named_any(key, op[key]))
    return out


# PathItem's fields by the operation they hold (get=2, put=3, post=4, delete=5, patch=8).
PATH_ITEM = {"get": 2, "put": 3, "post": 4, "delete": 5, "patch": 8}


@cache
def _merged() -> tuple[dict[str, Any], dict[str, Any]]:
    """Every group version's paths and schemas, as v2 has one document for them all."""
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for body in openapi.documents().values():
        doc = json.loads(body)
        paths.update(doc["paths"])
        schemas.update(doc["components"]["schemas"])
    return paths, {name: v2_schema(s) for name, s in sorted(schemas.items())}


@cache
def protobuf() -> bytes:
    """gnostic Document: swagger=1, info=2 Info{title=1, version=2}, paths=8
    Paths{path=2 NamedPathItem}, definitions=9 Definitions{additional_properties=1
    NamedSchema}."""
    paths, definitions = _merged()
    named_paths = b""
    for path, item in paths.items():
        ops = b"".join(_field(PATH_ITEM[m], _operation(op)) for m, op in item.items())
        named_paths += _field(2, _field(1, path) + _field(2, ops))
    named_schemas = b"".join(
        _field(1, _field(1, name) + _field(2, _schema(s))) for name, s in definitions.items()
    )
    info = _field(1, "Kubernetes") + _field(2, "unversioned")
    return _field(1, "2.0") + _field(2, info) + _field(8, named_paths) + _field(9, named_schemas)


@cache
def document() -> bytes:
    """The same document in JSON, for a client that asks for JSON."""
    paths, definitions = _merged()
    v2_paths = {
        path: {method: _v2_operation(op) for method, op in item.items()}
        for path, item in paths.items()
    }
    doc = {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "paths": v2_paths,
        "definitions": definitions,
    }
    return json.dumps(doc).encode()


def _v2_operation(op: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in op.items() if k not in ("requestBody", "responses", "parameters")}
    out["parameters"] = [
        {"name": p["name"], "in": "query", "description": p["description"], "type": "string"}
        for p in op.get("parameters", ())
    ]
    return out
